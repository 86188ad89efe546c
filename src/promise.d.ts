/**
 * `ChannelPromise`: the outcome of an outbound operation (Netty's `ChannelPromise`). It is
 * awaitable (`await ch.writeAndFlush(msg, ch.newPromise())`), creates a real `Promise` only
 * when someone awaits it, and so never turns an ignored failure into an unhandled
 * rejection. A *void* promise (`ctx.voidPromise()`, and every write made without a promise)
 * reports a failure to the pipeline's `exceptionCaught` instead: nothing fails silently.
 */
import type { Channel } from './channel';
export declare class ChannelPromise implements PromiseLike<void> {
    #private;
    /** True for a void promise: nobody awaits it; a failure goes to `exceptionCaught`. */
    get isVoid(): boolean;
    get isDone(): boolean;
    get isSuccess(): boolean;
    /** True once cancelled (see `cancel`). */
    get isCancelled(): boolean;
    /**
     * Netty's `cancel()`: fails the promise with `ERR_CANCELLED` unless it is done or its
     * operation is under way (a write that was flushed, a close that started). The operation of
     * a cancelled promise does nothing: a write cancelled before its flush is never written.
     * `true` if this call cancelled it. A void promise cannot be cancelled.
     */
    cancel(): boolean;
    /** The failure, once failed. */
    get cause(): Error | undefined;
    /** A `Promise` of the outcome (created on first use). */
    get promise(): Promise<void>;
    then<A = void, B = never>(onfulfilled?: ((value: void) => A | PromiseLike<A>) | null, onrejected?: ((reason: any) => B | PromiseLike<B>) | null): Promise<A | B>;
    /** Runs `fn` once with the outcome (null on success), synchronously when it completes. */
    addListener(fn: (error: Error | null) => void): this;
    /** Removes a listener added with `addListener` (the first one that is `fn`); true if it was there. */
    removeListener(fn: (error: Error | null) => void): boolean;
    /** The channel the operation belongs to (Netty's `ChannelPromise.channel()`); undefined for a promise made outside a channel. */
    get channel(): Channel | undefined;
    /** Marks the operation done; false if it already was. */
    trySuccess(): boolean;
    /** Marks the operation failed; false if it already was done. */
    tryFailure(error: Error): boolean;
}
