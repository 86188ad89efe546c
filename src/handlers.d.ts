/**
 * What a handler is: a plain object or class instance with any subset of Netty's inbound
 * and outbound methods. A missing method passes the event or operation on. Methods may be
 * `async`: a rejected promise is routed like a thrown error.
 */
import type { ChannelHandlerContext } from './context';
import type { ChannelPromise } from './promise';
/** What a handler may write: bytes (Buffer, Uint8Array, string as UTF-8), or any JS value for handlers further on. */
export type Outbound = Buffer | Uint8Array | string | unknown;
/** Inbound events, head → tail. Each defaults to passing the event to the next handler. */
export interface ChannelInboundHandler {
    handlerAdded?(ctx: ChannelHandlerContext): unknown;
    handlerRemoved?(ctx: ChannelHandlerContext): unknown;
    channelRegistered?(ctx: ChannelHandlerContext): unknown;
    channelUnregistered?(ctx: ChannelHandlerContext): unknown;
    channelActive?(ctx: ChannelHandlerContext): unknown;
    channelInactive?(ctx: ChannelHandlerContext): unknown;
    /** `msg` is a `Buffer` when it comes from the socket or a native decoder. */
    channelRead?(ctx: ChannelHandlerContext, msg: any): unknown;
    channelReadComplete?(ctx: ChannelHandlerContext): unknown;
    /** Idle events arrive as `IdleStateEvent`s, a half-close as `ChannelInputShutdownEvent`. */
    userEventTriggered?(ctx: ChannelHandlerContext, event: unknown): unknown;
    channelWritabilityChanged?(ctx: ChannelHandlerContext): unknown;
    exceptionCaught?(ctx: ChannelHandlerContext, error: Error): unknown;
    /**
     * The handler keeps no Buffer it reads past `channelRead`'s return (Netty's
     * `SimpleChannelInboundHandler` auto-release; the contract of Node's `onread` buffer and
     * uWebSockets.js). Large reads (16 KiB and more, and batches made only of reads for such
     * handlers) are then detached when the call that delivered them returns: a Buffer kept
     * later is empty (`length` 0), and its memory goes back at once instead of at V8's next full
     * collection, which a fast stream otherwise triggers every 64 MB. Writing the Buffer during
     * the call (an echo, a proxy) is fine: the write takes the bytes without a copy. To keep
     * them, copy (`Buffer.from(msg)`). Default false: Buffers are yours to keep. Read when the
     * handler is added to a pipeline (a class may declare it as a field or a getter).
     */
    readonly autoRelease?: boolean;
}
/** Throws `ERR_INVALID_ARG_TYPE` unless `handler` is an object whose `autoRelease`, if set, is a boolean. */
export declare function checkHandler(handler: unknown): void;
/** Outbound operations, tail → head. Each defaults to passing the operation on. */
export interface ChannelOutboundHandler {
    handlerAdded?(ctx: ChannelHandlerContext): unknown;
    handlerRemoved?(ctx: ChannelHandlerContext): unknown;
    write?(ctx: ChannelHandlerContext, msg: any, promise: ChannelPromise): unknown;
    flush?(ctx: ChannelHandlerContext): unknown;
    read?(ctx: ChannelHandlerContext): unknown;
    close?(ctx: ChannelHandlerContext, promise: ChannelPromise): unknown;
}
/** A handler: inbound, outbound, or both. */
export type ChannelHandler = ChannelInboundHandler & ChannelOutboundHandler;
/** Which side of the channel has been idle (Netty's `IdleState`). */
export type IdleState = 'READER_IDLE' | 'WRITER_IDLE' | 'ALL_IDLE';
/** Fired by `IdleStateHandler` as a user event. */
export declare class IdleStateEvent {
    readonly state: IdleState;
    /** True for the first event since the last activity, false for repeats. */
    readonly first: boolean;
}
/** Fired as a user event when the peer shut its output down and `allowHalfClosure` is on. */
export declare class ChannelInputShutdownEvent {
    static readonly INSTANCE: ChannelInputShutdownEvent;
    private constructor();
}
