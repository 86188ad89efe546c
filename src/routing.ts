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
import type { ChannelHandlerContext, HandlerMethod } from './context'
import { Kind } from './context'
import type { ChannelPipeline } from './pipeline'
import { ChannelPromise } from './promise'
import { PipelineEvent } from './events'
import { traceHandler, tracingHandlers } from './diagnostics'

/** An `async` handler method's result (a ChannelPromise returned by `ctx.write` is not one). */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && !(v instanceof ChannelPromise) && typeof (v as { then?: unknown }).then === 'function'
}

/** Passes an inbound event from `from` to the next handler that takes it. */
export function fireInbound(pipeline: ChannelPipeline, from: ChannelHandlerContext, kind: number, arg: unknown): void {
  let last = from
  let n = from._next
  while (n !== undefined && n._kind === Kind.Js) {
    const fn = n._methods[kind]
    if (fn !== undefined) {
      invokeInbound(n, fn, kind, arg)
      return
    }
    last = n
    n = n._next
  }
  if (n === undefined || n._kind === Kind.Tail) {
    if (kind === PipelineEvent.ExceptionCaught) pipeline._reportUnhandled(arg) // messages and events are dropped, as in Netty
    return
  }
  pipeline._hub.sendInbound(pipeline.channel, last._kind === Kind.Head ? 0 : last._id, kind, arg)
}

/** An inbound event the native pipeline passed to JS context `ctx` (see the ground rules). */
export function deliverInbound(pipeline: ChannelPipeline, ctx: ChannelHandlerContext, kind: number, arg: unknown): void {
  let from = ctx._prev!
  if (ctx._removed === true || from._kind === Kind.Js) {
    // Removed (the event goes on where `ctx` was), or JS handlers in front of `ctx`.
    if (!ctx._removed) while (from._kind === Kind.Js) from = from._prev!
    else from = ctx
    fireInbound(pipeline, from, kind, arg)
    return
  }
  const fn = ctx._methods[kind]
  if (fn !== undefined) invokeInbound(ctx, fn, kind, arg)
  else fireInbound(pipeline, ctx, kind, arg)
}

function invokeInbound(ctx: ChannelHandlerContext, fn: HandlerMethod, kind: number, arg: unknown): void {
  try {
    const bare = arg === undefined && kind !== PipelineEvent.ChannelRead
    // netloop:handler tracing: one check of three flags when nobody subscribes.
    const r = tracingHandlers()
      ? bare
        ? traceHandler(ctx, fn, kind, arg, ctx)
        : traceHandler(ctx, fn, kind, arg, ctx, arg)
      : bare
        ? fn.call(ctx.handler, ctx)
        : fn.call(ctx.handler, ctx, arg)
    if (isThenable(r)) r.then(undefined, (e) => ctx.fireExceptionCaught(e))
  } catch (e) {
    ctx.fireExceptionCaught(e)
  }
}

/** Passes an outbound operation from `from` to the previous handler that takes it. */
export function fireOutbound(pipeline: ChannelPipeline, from: ChannelHandlerContext, kind: number, msg: unknown, promise: ChannelPromise | undefined): void {
  let last = from
  let p = from._prev
  while (p !== undefined && p._kind === Kind.Js) {
    const fn = p._methods[kind]
    if (fn !== undefined) {
      invokeOutbound(pipeline, p, fn, kind, msg, promise)
      return
    }
    last = p
    p = p._prev
  }
  pipeline._hub.sendOutbound(pipeline.channel, last._kind === Kind.Tail ? 0 : last._id, kind, msg, promise)
}

/** An outbound operation the native pipeline passed to JS context `ctx` (see the ground rules). */
export function deliverOutbound(pipeline: ChannelPipeline, ctx: ChannelHandlerContext, kind: number, msg: unknown, promise: ChannelPromise | undefined): void {
  let from = ctx._next!
  if (ctx._removed === true || from._kind === Kind.Js) {
    if (!ctx._removed) while (from._kind === Kind.Js) from = from._next!
    else from = ctx
    fireOutbound(pipeline, from, kind, msg, promise)
    return
  }
  const fn = ctx._methods[kind]
  if (fn !== undefined) invokeOutbound(pipeline, ctx, fn, kind, msg, promise)
  else fireOutbound(pipeline, ctx, kind, msg, promise)
}

function invokeOutbound(pipeline: ChannelPipeline, ctx: ChannelHandlerContext, fn: HandlerMethod, kind: number, msg: unknown, promise: ChannelPromise | undefined): void {
  // A write made without a promise: the handler gets one it may listen to (Netty's
  // newPromise() of write(msg)); it stays silent unless listened to before it is passed on.
  if (kind === PipelineEvent.Write && promise === pipeline._silentPromise) promise = ChannelPromise._implicit()
  // A promise made outside the pipeline (lent by native code, or `new`) learns its channel here.
  if (promise !== undefined && promise._channel === undefined) promise._channel = pipeline.channel
  try {
    let r: unknown
    if (tracingHandlers()) r = traceOutbound(pipeline, ctx, fn, kind, msg, promise)
    else if (kind === PipelineEvent.Write) r = fn.call(ctx.handler, ctx, msg, promise ?? pipeline._voidPromise)
    else if (kind === PipelineEvent.Close) r = fn.call(ctx.handler, ctx, promise ?? pipeline._voidPromise)
    else r = fn.call(ctx.handler, ctx)
    if (isThenable(r)) r.then(undefined, (e) => outboundFailed(pipeline, ctx, kind, promise, e))
  } catch (e) {
    outboundFailed(pipeline, ctx, kind, promise, e)
  }
}

/** `invokeOutbound`'s call inside the netloop:handler TracingChannel. */
function traceOutbound(pipeline: ChannelPipeline, ctx: ChannelHandlerContext, fn: HandlerMethod, kind: number, msg: unknown, promise: ChannelPromise | undefined): unknown {
  if (kind === PipelineEvent.Write) return traceHandler(ctx, fn, kind, msg, ctx, msg, promise ?? pipeline._voidPromise)
  if (kind === PipelineEvent.Close) return traceHandler(ctx, fn, kind, undefined, ctx, promise ?? pipeline._voidPromise)
  return traceHandler(ctx, fn, kind, undefined, ctx)
}

/**
 * An outbound method threw or rejected: its operation's promise fails (else the context's
 * next handler hears of it). A close goes on regardless (close always closes): it is passed
 * on from `ctx`, and its promise fails with the error once the channel is closed; with the
 * void promise (or one already done) the error goes to the next `exceptionCaught` at once.
 */
function outboundFailed(pipeline: ChannelPipeline, ctx: ChannelHandlerContext, kind: number, promise: ChannelPromise | undefined, e: unknown): void {
  const err = e instanceof Error ? e : new Error(String(e))
  const p = promise ?? (kind === PipelineEvent.Write || kind === PipelineEvent.Close ? pipeline._voidPromise : undefined)
  if (kind === PipelineEvent.Close) {
    const close = p!
    if (close.isVoid || close.isDone) {
      ctx.fireExceptionCaught(err)
      fireOutbound(pipeline, ctx, PipelineEvent.Close, undefined, pipeline._voidPromise)
    } else {
      const closed = pipeline._newPromise()
      closed.addListener(() => {
        if (!close.tryFailure(err)) ctx.fireExceptionCaught(err)
      })
      fireOutbound(pipeline, ctx, PipelineEvent.Close, undefined, closed)
    }
  } else if (p) p.tryFailure(err)
  else ctx.fireExceptionCaught(err)
}
