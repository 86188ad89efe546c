/**
 * A pipeline's linked contexts and their handlers' lifecycle (src/pipeline.ts): linking a
 * context in after another, in place of another, and out; `handlerAdded` and `handlerRemoved`
 * called once each, a failure of either reported through the pipeline as Netty does (a
 * handler whose `handlerAdded` fails is taken out again first). Loop thread only.
 */
import type { ChannelHandlerContext } from './context'
import { Kind } from './context'
import { isThenable } from './routing'

/** Links `ctx` in right after `prev`. */
export function linkAfter(prev: ChannelHandlerContext, ctx: ChannelHandlerContext): void {
  const next = prev._next!
  ctx._prev = prev
  ctx._next = next
  prev._next = ctx
  next._prev = ctx
}

/**
 * Links `ctx` in where `old` was; `old` points at `ctx` both ways, so that what the old
 * handler passes on afterwards goes through the new one, as in Netty.
 */
export function linkInPlaceOf(old: ChannelHandlerContext, ctx: ChannelHandlerContext): void {
  const p = old._prev!
  const n = old._next!
  ctx._prev = p
  ctx._next = n
  p._next = ctx
  n._prev = ctx
  old._prev = ctx
  old._next = ctx
}

/** Takes `ctx` out of the links (its own links stay: an operation it passes on still goes on). */
export function unlink(ctx: ChannelHandlerContext): void {
  const p = ctx._prev!
  const n = ctx._next!
  p._next = n
  n._prev = p
}

/** A JS handler was linked in: registered with the hub, then its `handlerAdded`. */
export function handlerAdded(ctx: ChannelHandlerContext): void {
  if (ctx._kind !== Kind.Js) return
  const pipeline = ctx.pipeline
  pipeline._hub.registerContext(ctx)
  try {
    const r: unknown = ctx.handler!.handlerAdded?.(ctx)
    if (isThenable(r)) r.then(undefined, (e) => addFailed(ctx, e))
  } catch (e) {
    addFailed(ctx, e)
  }
}

/** A handler that cannot be added (its `handlerAdded` threw or rejected) is taken out again, then the error is reported. */
function addFailed(ctx: ChannelHandlerContext, e: unknown): void {
  if (!ctx._removed) {
    ctx.pipeline._unlink(ctx, true)
    handlerRemoved(ctx)
  }
  ctx.pipeline.fireExceptionCaught(e)
}

/** A handler was taken out: marked removed (once), then its `handlerRemoved`. */
export function handlerRemoved(ctx: ChannelHandlerContext): void {
  if (ctx._removed) return
  ctx._removed = true
  if (ctx._kind !== Kind.Js) return
  try {
    const r: unknown = ctx.handler!.handlerRemoved?.(ctx)
    if (isThenable(r)) r.then(undefined, (e) => ctx.pipeline.fireExceptionCaught(e))
  } catch (e) {
    ctx.pipeline.fireExceptionCaught(e)
  }
}
