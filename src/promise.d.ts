/**
 * `ChannelPromise`: the outcome of an outbound operation (Netty's `ChannelPromise`). It is
 * awaitable (`await ch.writeAndFlush(msg, ch.newPromise())`), creates a real `Promise` only
 * when someone awaits it, and so never turns an ignored failure into an unhandled
 * rejection.
 *
 * Netty's rules for writes made without a promise: `write(msg)` stands for
 * `write(msg, newPromise())` with a promise nobody listens to, so its failure is silent
 * (here: the shared *silent* void promise, no allocation). Only the channel's
 * `voidPromise()` reports a failure to the pipeline's `exceptionCaught`. Neither void promise
 * can be awaited or listened to; `unvoid()` gives a promise that can.
 */
import type { Channel } from './channel';
export declare class ChannelPromise implements PromiseLike<void> {
    #private;
    /** True for a void promise (the silent one of promise-less writes, or `voidPromise()`). */
    get isVoid(): boolean;
    /**
     * A promise that can be listened to in place of this one (Netty's `unvoid()`): this one if
     * it is not void; for a void one a new promise, whose failure still goes to
     * `exceptionCaught` when this one's would have.
     */
    unvoid(): ChannelPromise;
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
