/**
 * Cancellation with `AbortSignal`, as node:net's `connect`/`listen` take it: an operation given
 * `{ signal }` rejects with an `AbortError` (code `ABORT_ERR`, `cause`: the signal's reason)
 * when the signal aborts, and undoes what it started (`onAbort`: close the half-open channel);
 * an already-aborted signal rejects at once. As in node:net, the signal goes on closing the
 * channel or server it made after the operation succeeded (`closeOnAbort`).
 *
 * Ground rules: the abort listener runs on the thread that made the signal (the loop's thread
 * for the channels of this thread); it is removed as soon as the operation settles, so a
 * long-lived signal given to many operations holds no listener per finished operation.
 */
import { NetloopError } from './errors';
/** Options of an abortable operation. */
export interface AbortOptions {
    /** Aborting it rejects the operation with an `AbortError` and undoes what it started. */
    signal?: AbortSignal;
}
/** node's `AbortError`: code `ABORT_ERR`, the signal's reason as `cause`. */
export declare class AbortError extends NetloopError {
    constructor(message?: string, options?: {
        cause?: unknown;
    });
}
/** The `AbortError` of an aborted `signal`. */
export declare function abortError(signal: AbortSignal): AbortError;
/** The signal of `options` (undefined without one); throws `ERR_INVALID_ARG_TYPE` for a bad one. */
export declare function signalOf(options: unknown): AbortSignal | undefined;
/**
 * `op`, unless `signal` aborts first: then `onAbort()` runs (once) and the result rejects with
 * an `AbortError`; a later failure of `op` is swallowed (it was the abort's doing). An
 * already-aborted signal runs `onAbort` and rejects at once.
 */
export declare function whenAborted<T>(signal: AbortSignal | undefined, op: Promise<T>, onAbort?: () => unknown): Promise<T>;
/**
 * Closes `target` whenever `signal` aborts (node:net's sockets and servers given a signal);
 * the listener goes when the target closes.
 */
export declare function closeOnAbort(signal: AbortSignal | undefined, target: {
    close(): Promise<void>;
    readonly closeFuture: Promise<void>;
}): void;
