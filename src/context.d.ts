/**
 * `ChannelHandlerContext`: a handler's place in its pipeline. Inbound events go to the next
 * handler (`fire*`), outbound operations to the previous one (`write`, `flush`, `read`,
 * `close`). Between two JS handlers an event stays in JS; it crosses into native code only
 * where a native handler (a decoder, the head) sits next to a JS one.
 */
import type { Channel } from './channel';
import type { EventLoop } from './loop';
import type { ChannelHandler, Outbound } from './handlers';
import type { NativeHandler } from './codecs';
import type { ChannelPipeline } from './pipeline';
import type { ChannelPromise } from './promise';
/** The handler method for each pipeline event or operation. */
export declare const METHOD_NAMES: ReadonlyArray<[number, keyof ChannelHandler]>;
export declare class ChannelHandlerContext {
    /** The handler's name in the pipeline. */
    readonly name: string;
    /** The JS handler (undefined for a native handler and the pipeline's ends). */
    readonly handler: ChannelHandler | undefined;
    /** The native handler's description (undefined for JS handlers). */
    readonly nativeHandler: NativeHandler | undefined;
    /** The pipeline this context belongs to. */
    readonly pipeline: ChannelPipeline;
    /** The channel of the pipeline. */
    get channel(): Channel;
    /** The loop that runs this handler (the channel's loop). */
    get executor(): EventLoop;
    /** True once the handler was removed from its pipeline. */
    get isRemoved(): boolean;
    fireChannelRegistered(): this;
    fireChannelUnregistered(): this;
    fireChannelActive(): this;
    fireChannelInactive(): this;
    fireChannelRead(msg: unknown): this;
    fireChannelReadComplete(): this;
    fireUserEventTriggered(event: unknown): this;
    fireExceptionCaught(error: unknown): this;
    fireChannelWritabilityChanged(): this;
    /**
     * Writes `msg` towards the head (not flushed). Without `promise` the outcome is not
     * reported (Netty's `write(msg)`: a promise nobody listens to); with one
     * (`ctx.newPromise()`) it completes that promise, which is returned and can be awaited;
     * with `ctx.voidPromise()` a failure goes to `exceptionCaught`.
     */
    write(msg: Outbound): void;
    write(msg: Outbound, promise: ChannelPromise): ChannelPromise;
    /** `write` then `flush`. */
    writeAndFlush(msg: Outbound): void;
    writeAndFlush(msg: Outbound, promise: ChannelPromise): ChannelPromise;
    /** Writes what was written so far to the socket. */
    flush(): this;
    /** Asks for one more read (with `autoRead` off). */
    read(): this;
    /** Closes the channel; resolves once it is closed. */
    close(promise?: ChannelPromise): ChannelPromise;
    /** A promise for an outbound operation, to await it. */
    newPromise(): ChannelPromise;
    /** The channel's void promise (Netty's `voidPromise()`): it cannot be awaited, and a
     * failure of the operation it is given to goes to `exceptionCaught`. */
    voidPromise(): ChannelPromise;
}
