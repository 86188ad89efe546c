/**
 * `ChannelPipeline`: the ordered handlers of a channel, JS and native mixed in any order.
 *
 * Ground rules:
 * - The JS list here mirrors the native pipeline name for name: every change is made on the
 *   native side first (which checks it), then here. JS handlers have a native stand-in that
 *   receives what native handlers pass to them.
 * - Inbound events go head → tail, outbound operations tail → head. A JS handler without the
 *   method is skipped in JS; an event crosses to native code only where it must. A handler's
 *   methods are looked up once, when it is added (as Netty computes its skip mask).
 * - A handler that throws (or whose `async` method rejects) sends the error to the *next*
 *   handler's `exceptionCaught`; an outbound method that throws fails the operation's
 *   promise instead. What reaches the tail unhandled is reported with the channel id.
 * - A removed context keeps its links, so an event already passing through it goes on.
 */
import type { Channel } from './channel'
import { ChannelHandlerContext, Kind, type HandlerMethod } from './context'
import type { ChannelHandler } from './handlers'
import { NativeHandler } from './codecs'
import { NetloopError, invalidArgType } from './errors'
import type { ChannelHub } from './hub'
import { ChannelPromise, SILENT_PROMISE } from './promise'
import { W } from './wire'

const enum Pos {
  First = 0,
  Last = 1,
  Before = 2,
  After = 3,
}

/** Receives exceptions that reached the tail of a pipeline. Default: printed to stderr. */
export type UnhandledExceptionHandler = (error: unknown, channel: Channel) => void

let unhandled: UnhandledExceptionHandler = (error, channel) => {
  console.error(`netloop: an exception reached the tail of the pipeline of channel ${channel.id} (add an exceptionCaught handler):`, error)
}

/** An `async` handler method's result (a ChannelPromise returned by `ctx.write` is not one). */
function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && !(v instanceof ChannelPromise) && typeof (v as { then?: unknown }).then === 'function'
}

export class ChannelPipeline {
  /** @internal */ readonly _head: ChannelHandlerContext
  /** @internal */ readonly _tail: ChannelHandlerContext
  #voidPromise: ChannelPromise | undefined
  #generated = 0

  /** @internal */
  constructor(
    readonly channel: Channel,
    /** @internal */ readonly _hub: ChannelHub,
  ) {
    this._head = new ChannelHandlerContext('HEAD', undefined, undefined, this, Kind.Head, 0)
    this._tail = new ChannelHandlerContext('TAIL', undefined, undefined, this, Kind.Tail, 0)
    this._head._next = this._tail
    this._tail._prev = this._head
  }

  /** @internal The pipeline's void promise (made on first use: an idle channel holds none). */
  get _voidPromise(): ChannelPromise {
    return (this.#voidPromise ??= new ChannelPromise(0, this))
  }

  /**
   * Replaces what receives exceptions that reach the tail of any pipeline (default: printed
   * to stderr with the channel id). The channel stays as it is, as in Netty.
   */
  static setUnhandledExceptionHandler(handler: UnhandledExceptionHandler): void {
    unhandled = handler
  }

  // ---- structure ----

  /** Handler names, head to tail. */
  names(): string[] {
    const out: string[] = []
    for (let c = this._head._next; c && c !== this._tail; c = c._next) out.push(c.name)
    return out
  }

  /** The context of the handler with this name (or this handler object). */
  context(nameOrHandler: string | ChannelHandler | NativeHandler): ChannelHandlerContext | undefined {
    for (let c = this._head._next; c && c !== this._tail; c = c._next) {
      if (c.name === nameOrHandler || c.handler === nameOrHandler || c.nativeHandler === nameOrHandler) return c
    }
    return undefined
  }

  /** The handler with this name (JS object or native handler description). */
  get(name: string): ChannelHandler | NativeHandler | undefined {
    const c = this.context(name)
    return c?.handler ?? c?.nativeHandler
  }

  /** Adds `handler` first (named `name`, or a generated name such as `LineBasedFrameDecoder#0`). */
  addFirst(handler: ChannelHandler | NativeHandler): this
  addFirst(name: string, handler: ChannelHandler | NativeHandler): this
  addFirst(a: string | ChannelHandler | NativeHandler, b?: ChannelHandler | NativeHandler): this {
    const [name, handler] = this.#named(a, b)
    return this.#add(Pos.First, '', name, handler)
  }
  /** Adds `handler` last (named `name`, or a generated name). */
  addLast(handler: ChannelHandler | NativeHandler): this
  addLast(name: string, handler: ChannelHandler | NativeHandler): this
  addLast(a: string | ChannelHandler | NativeHandler, b?: ChannelHandler | NativeHandler): this {
    const [name, handler] = this.#named(a, b)
    return this.#add(Pos.Last, '', name, handler)
  }

  /** `(name, handler)` or `(handler)` with Netty's generated name: the class name and `#n`. */
  #named(a: string | ChannelHandler | NativeHandler, b: ChannelHandler | NativeHandler | undefined): [string, ChannelHandler | NativeHandler] {
    if (typeof a === 'string' || b !== undefined) return [a as string, b as ChannelHandler | NativeHandler]
    this.#checkHandler(a)
    const base = (a as object).constructor?.name || 'handler'
    for (;;) {
      const name = `${base === 'Object' ? 'handler' : base}#${this.#generated++}`
      if (!this.context(name)) return [name, a]
    }
  }

  /** Removes the handler if it is in the pipeline; returns it, or undefined. */
  removeIfExists(nameOrHandler: string | ChannelHandler | NativeHandler): ChannelHandler | NativeHandler | undefined {
    return this.context(nameOrHandler) ? this.remove(nameOrHandler) : undefined
  }
  addBefore(baseName: string, name: string, handler: ChannelHandler | NativeHandler): this {
    return this.#add(Pos.Before, baseName, name, handler)
  }
  addAfter(baseName: string, name: string, handler: ChannelHandler | NativeHandler): this {
    return this.#add(Pos.After, baseName, name, handler)
  }

  #checkName(name: unknown, what = 'name'): string {
    if (typeof name !== 'string' || name.length === 0) {
      throw invalidArgType(what, 'non-empty string', name)
    }
    return name
  }

  #checkHandler(handler: unknown): void {
    if (typeof handler !== 'object' || handler === null) {
      throw invalidArgType('handler', 'object', handler)
    }
  }

  #find(name: string | ChannelHandler | NativeHandler): ChannelHandlerContext {
    const c = this.context(name)
    if (!c) throw new NetloopError('ERR_NO_SUCH_HANDLER', `No handler named '${typeof name === 'string' ? name : '(object)'}' in the pipeline of channel ${this.channel.id}`)
    return c
  }

  #newContext(name: string, handler: ChannelHandler | NativeHandler): ChannelHandlerContext {
    return handler instanceof NativeHandler
      ? new ChannelHandlerContext(name, undefined, handler, this, Kind.Native, 0)
      : new ChannelHandlerContext(name, handler, undefined, this, Kind.Js, this._hub.nextContextId())
  }

  #add(pos: Pos, base: string, name: string, handler: ChannelHandler | NativeHandler): this {
    this.#checkName(name)
    this.#checkHandler(handler)
    if (this.context(name)) {
      throw new NetloopError('ERR_DUPLICATE_HANDLER_NAME', `Duplicate handler name: ${name}`)
    }
    let prev: ChannelHandlerContext
    if (pos === Pos.First) prev = this._head
    else if (pos === Pos.Last) prev = this._tail._prev!
    else {
      const b = this.#find(this.#checkName(base, 'baseName'))
      prev = pos === Pos.Before ? b._prev! : b
    }
    const ctx = this.#newContext(name, handler)
    this._hub.nativeAdd(this.channel, pos, base, ctx)
    const next = prev._next!
    ctx._prev = prev
    ctx._next = next
    prev._next = ctx
    next._prev = ctx
    this.#added(ctx)
    return this
  }

  #added(ctx: ChannelHandlerContext): void {
    if (ctx._kind !== Kind.Js) return
    this._hub.registerContext(ctx)
    try {
      ctx.handler!.handlerAdded?.(ctx)
    } catch (e) {
      // A handler that cannot be added is taken out again, then the error is reported.
      if (!ctx._removed) this.#unlink(ctx, true)
      this.#removed(ctx)
      this.fireExceptionCaught(e)
    }
  }

  #removed(ctx: ChannelHandlerContext): void {
    if (ctx._removed) return
    ctx._removed = true
    if (ctx._kind !== Kind.Js) return
    try {
      ctx.handler!.handlerRemoved?.(ctx)
    } catch (e) {
      this.fireExceptionCaught(e)
    }
  }

  #unlink(ctx: ChannelHandlerContext, native: boolean): void {
    if (native) this._hub.nativeRemove(this.channel, ctx.name)
    const p = ctx._prev!
    const n = ctx._next!
    p._next = n
    n._prev = p
  }

  /** Removes a handler (by name or object) and returns it. */
  remove(nameOrHandler: string | ChannelHandler | NativeHandler): ChannelHandler | NativeHandler {
    const ctx = this.#find(nameOrHandler)
    this.#unlink(ctx, true)
    this.#removed(ctx)
    return ctx.handler ?? ctx.nativeHandler!
  }

  /**
   * Puts `handler` named `newName` in the place of `old`, which is returned. The new
   * handler's `handlerAdded` runs before the old one's `handlerRemoved`; what the old one
   * passes on afterwards goes through the new one, as in Netty.
   */
  replace(old: string | ChannelHandler | NativeHandler, newName: string, handler: ChannelHandler | NativeHandler): ChannelHandler | NativeHandler {
    this.#checkName(newName, 'newName')
    this.#checkHandler(handler)
    const oldCtx = this.#find(old)
    if (newName !== oldCtx.name && this.context(newName)) {
      throw new NetloopError('ERR_DUPLICATE_HANDLER_NAME', `Duplicate handler name: ${newName}`)
    }
    const ctx = this.#newContext(newName, handler)
    this._hub.nativeReplace(this.channel, oldCtx.name, ctx)
    const p = oldCtx._prev!
    const n = oldCtx._next!
    ctx._prev = p
    ctx._next = n
    p._next = ctx
    n._prev = ctx
    oldCtx._prev = ctx
    oldCtx._next = ctx
    this.#added(ctx)
    this.#removed(oldCtx)
    return oldCtx.handler ?? oldCtx.nativeHandler!
  }

  /** @internal The channel left its loop: every handler is removed, tail to head. */
  _destroy(): void {
    for (let c = this._tail._prev; c && c !== this._head; c = this._tail._prev) {
      const p = c._prev!
      p._next = this._tail
      this._tail._prev = p
      this.#removed(c)
    }
  }

  // ---- events from the ends ----

  fireChannelRead(msg: unknown): this {
    this._fireInbound(this._head, W.READ_BYTES, msg)
    return this
  }
  fireChannelReadComplete(): this {
    this._fireInbound(this._head, W.READ_COMPLETE, undefined)
    return this
  }
  fireUserEventTriggered(event: unknown): this {
    this._fireInbound(this._head, W.USER_EVENT, event)
    return this
  }
  fireExceptionCaught(error: unknown): this {
    this._fireInbound(this._head, W.EXCEPTION, error)
    return this
  }

  /** @internal A new promise of this pipeline's channel. */
  _newPromise(): ChannelPromise {
    return new ChannelPromise(NaN)
  }

  // ---- routing ----

  /** @internal Passes an inbound event from `from` to the next handler that takes it. */
  _fireInbound(from: ChannelHandlerContext, kind: number, arg: unknown): void {
    let last = from
    let n = from._next
    while (n !== undefined && n._kind === Kind.Js) {
      const fn = n._methods[kind]
      if (fn !== undefined) {
        this.#invokeInbound(n, fn, kind, arg)
        return
      }
      last = n
      n = n._next
    }
    if (n === undefined || n._kind === Kind.Tail) {
      this.#tail(kind, arg)
      return
    }
    this._hub.sendInbound(this.channel, last._kind === Kind.Head ? 0 : last._id, kind, arg)
  }

  /** @internal An inbound event the native pipeline passed to JS context `ctx`. */
  _deliverInbound(ctx: ChannelHandlerContext, kind: number, arg: unknown): void {
    const fn = ctx._removed ? undefined : ctx._methods[kind]
    if (fn !== undefined) this.#invokeInbound(ctx, fn, kind, arg)
    else this._fireInbound(ctx, kind, arg)
  }

  #invokeInbound(ctx: ChannelHandlerContext, fn: HandlerMethod, kind: number, arg: unknown): void {
    try {
      const r = arg === undefined && kind !== W.READ_BYTES ? fn.call(ctx.handler, ctx) : fn.call(ctx.handler, ctx, arg)
      if (isThenable(r)) r.then(undefined, (e) => ctx.fireExceptionCaught(e))
    } catch (e) {
      ctx.fireExceptionCaught(e)
    }
  }

  #tail(kind: number, arg: unknown): void {
    if (kind === W.EXCEPTION) this._reportUnhandled(arg) // messages and events are dropped, as in Netty
  }

  /** @internal An exception nobody handled. */
  _reportUnhandled(arg: unknown): void {
    try {
      unhandled(arg, this.channel)
    } catch (e) {
      console.error('netloop: the unhandled-exception handler threw:', e)
    }
  }

  /** @internal Passes an outbound operation from `from` to the previous handler that takes it. */
  _fireOutbound(from: ChannelHandlerContext, kind: number, msg: unknown, promise: ChannelPromise | undefined): void {
    let last = from
    let p = from._prev
    while (p !== undefined && p._kind === Kind.Js) {
      const fn = p._methods[kind]
      if (fn !== undefined) {
        this.#invokeOutbound(p, fn, kind, msg, promise)
        return
      }
      last = p
      p = p._prev
    }
    this._hub.sendOutbound(this.channel, last._kind === Kind.Tail ? 0 : last._id, kind, msg, promise)
  }

  /** @internal An outbound operation the native pipeline passed to JS context `ctx`. */
  _deliverOutbound(ctx: ChannelHandlerContext, kind: number, msg: unknown, promise: ChannelPromise | undefined): void {
    const fn = ctx._removed ? undefined : ctx._methods[kind]
    if (fn !== undefined) this.#invokeOutbound(ctx, fn, kind, msg, promise)
    else this._fireOutbound(ctx, kind, msg, promise)
  }

  #invokeOutbound(ctx: ChannelHandlerContext, fn: HandlerMethod, kind: number, msg: unknown, promise: ChannelPromise | undefined): void {
    // A write made without a promise: the handler gets one it may listen to (Netty's
    // newPromise() of write(msg)); it stays silent unless listened to before it is passed on.
    if (promise === SILENT_PROMISE && kind === W.WRITE_BYTES) promise = ChannelPromise._implicit()
    try {
      let r: unknown
      if (kind === W.WRITE_BYTES) r = fn.call(ctx.handler, ctx, msg, promise ?? this._voidPromise)
      else if (kind === W.CLOSE) r = fn.call(ctx.handler, ctx, promise ?? this._voidPromise)
      else r = fn.call(ctx.handler, ctx)
      if (isThenable(r)) r.then(undefined, (e) => this.#outboundFailed(ctx, kind, promise, e))
    } catch (e) {
      this.#outboundFailed(ctx, kind, promise, e)
    }
  }

  /** An outbound method threw or rejected: its operation's promise fails (else the context's next handler hears of it). */
  #outboundFailed(ctx: ChannelHandlerContext, kind: number, promise: ChannelPromise | undefined, e: unknown): void {
    const err = e instanceof Error ? e : new Error(String(e))
    const p = promise ?? (kind === W.WRITE_BYTES || kind === W.CLOSE ? this._voidPromise : undefined)
    if (p) p.tryFailure(err)
    else ctx.fireExceptionCaught(err)
  }
}
