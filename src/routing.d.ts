/**
 * How events move through a pipeline (ChannelPipeline's routing, kept apart from its
 * structure): inbound events head → tail, outbound operations tail → head.
 *
 * Ground rules (the channel's loop thread only):
 * - A JS handler without the method is skipped in JS; an event crosses to native code only
 *   where a native handler (or the head) sits next to the last JS handler it passed.
 * - A handler that throws (or whose `async` method rejects) sends the error to the *next*
 *   handler's `exceptionCaught`; an outbound method that throws fails the operation's promise
 *   instead, and a `close` goes on regardless (close always closes).
 * - Events the native pipeline made are addressed to the JS context it chose when it made
 *   them, which may be a while ago: a delivery carries a whole read batch (and what is left
 *   of one may wait for the next iteration). Pipeline changes take effect for every event
 *   not yet delivered, as in Netty, where each fireChannelRead walks the pipeline as it is:
 *   an event for JS context `ctx` walks on from the native handler (or head/tail) in front
 *   of it, through any JS handlers now between the two. Native code only skips JS handlers
 *   without a method of the event's direction, which the walk skips too, so for an
 *   unchanged pipeline the walk ends at `ctx`.
 */
import type { ChannelHandlerContext } from './context';
import type { ChannelPipeline } from './pipeline';
import { ChannelPromise } from './promise';
/** An `async` handler method's result (a ChannelPromise returned by `ctx.write` is not one). */
export declare function isThenable(v: unknown): v is PromiseLike<unknown>;
/** Passes an inbound event from `from` to the next handler that takes it. */
export declare function fireInbound(pipeline: ChannelPipeline, from: ChannelHandlerContext, kind: number, arg: unknown): void;
/** An inbound event the native pipeline passed to JS context `ctx` (see the ground rules). */
export declare function deliverInbound(pipeline: ChannelPipeline, ctx: ChannelHandlerContext, kind: number, arg: unknown): void;
/** Passes an outbound operation from `from` to the previous handler that takes it. */
export declare function fireOutbound(pipeline: ChannelPipeline, from: ChannelHandlerContext, kind: number, msg: unknown, promise: ChannelPromise | undefined): void;
/** An outbound operation the native pipeline passed to JS context `ctx` (see the ground rules). */
export declare function deliverOutbound(pipeline: ChannelPipeline, ctx: ChannelHandlerContext, kind: number, msg: unknown, promise: ChannelPromise | undefined): void;
