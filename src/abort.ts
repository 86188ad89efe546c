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
import { NetloopError, invalidArgType } from './errors'

/** Options of an abortable operation. */
export interface AbortOptions {
  /** Aborting it rejects the operation with an `AbortError` and undoes what it started. */
  signal?: AbortSignal
}

/** node's `AbortError`: code `ABORT_ERR`, the signal's reason as `cause`. */
export class AbortError extends NetloopError {
  constructor(message = 'The operation was aborted', options?: { cause?: unknown }) {
    super('ABORT_ERR', message)
    this.name = 'AbortError'
    if (options !== undefined && 'cause' in options) Object.defineProperty(this, 'cause', { value: options.cause, writable: true, configurable: true })
  }
}

/** The `AbortError` of an aborted `signal`. */
export function abortError(signal: AbortSignal): AbortError {
  return new AbortError(undefined, { cause: signal.reason })
}

/** The signal of `options` (undefined without one); throws `ERR_INVALID_ARG_TYPE` for a bad one. */
export function signalOf(options: unknown): AbortSignal | undefined {
  if (options === undefined) return undefined
  if (options === null || typeof options !== 'object') throw invalidArgType('options', 'object', options)
  const signal = (options as AbortOptions).signal
  if (signal === undefined) return undefined
  if (typeof signal !== 'object' || signal === null || !('aborted' in signal) || typeof (signal as AbortSignal).addEventListener !== 'function') {
    throw invalidArgType('options.signal', 'AbortSignal', signal)
  }
  return signal as AbortSignal
}

/**
 * `op`, unless `signal` aborts first: then `onAbort()` runs (once) and the result rejects with
 * an `AbortError`; a later failure of `op` is swallowed (it was the abort's doing). An
 * already-aborted signal runs `onAbort` and rejects at once.
 */
export function whenAborted<T>(signal: AbortSignal | undefined, op: Promise<T>, onAbort: () => unknown = () => undefined): Promise<T> {
  if (signal === undefined) return op
  if (signal.aborted) {
    op.catch(() => undefined)
    runAbort(onAbort)
    return Promise.reject(abortError(signal))
  }
  return new Promise<T>((resolve, reject) => {
    const listener = () => {
      op.catch(() => undefined)
      runAbort(onAbort)
      reject(abortError(signal))
    }
    signal.addEventListener('abort', listener, { once: true })
    op.then(
      (v) => {
        signal.removeEventListener('abort', listener)
        resolve(v)
      },
      (e: unknown) => {
        signal.removeEventListener('abort', listener)
        reject(e)
      },
    )
  })
}

function runAbort(onAbort: () => unknown): void {
  try {
    const r = onAbort()
    if (r instanceof Promise) r.catch(() => undefined)
  } catch {
    // Undoing is best effort: the caller gets the AbortError either way.
  }
}

/**
 * Closes `target` whenever `signal` aborts (node:net's sockets and servers given a signal);
 * the listener goes when the target closes.
 */
export function closeOnAbort(signal: AbortSignal | undefined, target: { close(): Promise<void>; readonly closeFuture: Promise<void> }): void {
  if (signal === undefined) return
  if (signal.aborted) {
    target.close().catch(() => undefined)
    return
  }
  const listener = () => void target.close().catch(() => undefined)
  signal.addEventListener('abort', listener, { once: true })
  target.closeFuture.then(() => signal.removeEventListener('abort', listener))
}
