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
 *   them; JS handlers put in front of that context since then see them first (`recent`).
 */
import type { ChannelHandlerContext } from './context';
import type { ChannelPipeline } from './pipeline';
import { ChannelPromise } from './promise';
/** Notes a JS context just added to a pipeline (see `recent`). */
export declare function markRecent(ctx: ChannelHandlerContext): void;
/** An `async` handler method's result (a ChannelPromise returned by `ctx.write` is not one). */
export declare function isThenable(v: unknown): v is PromiseLike<unknown>;
/** Passes an inbound event from `from` to the next handler that takes it. */
export declare function fireInbound(pipeline: ChannelPipeline, from: ChannelHandlerContext, kind: number, arg: unknown): void;
/** An inbound event the native pipeline passed to JS context `ctx`. */
export declare function deliverInbound(pipeline: ChannelPipeline, ctx: ChannelHandlerContext, kind: number, arg: unknown): void;
/** Passes an outbound operation from `from` to the previous handler that takes it. */
export declare function fireOutbound(pipeline: ChannelPipeline, from: ChannelHandlerContext, kind: number, msg: unknown, promise: ChannelPromise | undefined): void;
/** An outbound operation the native pipeline passed to JS context `ctx`. */
export declare function deliverOutbound(pipeline: ChannelPipeline, ctx: ChannelHandlerContext, kind: number, msg: unknown, promise: ChannelPromise | undefined): void;
