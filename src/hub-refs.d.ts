/**
 * What crosses the JS/native boundary by reference rather than by value, one registry of each
 * per loop's hub: JS values lent to the native pipeline as *tokens* (a message that is not
 * bytes, a user event, an exception), and JS promises named by *ids* that native code
 * completes with `PromiseDone` records.
 *
 * Ground rules (the loop's JS thread only): a token is taken, or released by a `Release`
 * record, once; an error's token may be read (`peek`) before that. A promise gets its id when
 * it first crosses and leaves the table when its `PromiseDone` record arrives.
 */
import { ChannelPromise } from './promise';
/** JS values the native pipeline holds by token. */
export declare class Tokens {
    #private;
    /** A token for `value`, held until it is taken or released. */
    lend(value: unknown): number;
    /** The value of `token`, which stays lent. */
    peek(token: number): unknown;
    /** The value of `token`, which is given back. */
    take(token: number): unknown;
    /** Forgets `token` (the native side dropped what it carried). */
    release(token: number): void;
}
/** JS promises native code completes, by id; and JS stand-ins for native promises. */
export declare class Promises {
    #private;
    /** Cancels native promise `id` (applying the buffered ops first). */
    readonly cancelNative: (id: number) => boolean;
    /** Completes native promise `id` (as an op). */
    readonly completeNative: (id: number, error: Error | null) => void;
    constructor(
    /** Cancels native promise `id` (applying the buffered ops first). */
    cancelNative: (id: number) => boolean, 
    /** Completes native promise `id` (as an op). */
    completeNative: (id: number, error: Error | null) => void);
    /** The wire id of `p`: 0 silent void, `PromiseId.VoidFiring`, a JS id (> 0) or a lent one (< -1). */
    idOf(p: ChannelPromise | undefined): number;
    /** JS promise `id`, which leaves the table (its `PromiseDone` record arrived). */
    take(id: number): ChannelPromise | undefined;
    /** A JS stand-in for native promise `id` (< 0), lent with a native handler's operation. */
    lent(id: number): ChannelPromise;
}
