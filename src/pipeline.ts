/**
 * `ChannelPipeline`: the ordered handlers of a channel, JS and native mixed in any order.
 *
 * Event flow (the same diagram is in docs/guide.md, "A mixed native/JS pipeline"):
 *
 *              native (Rust, the loop thread)          ┊   JS (the same thread)
 *                                                      ┊
 *  inbound     socket ─► head ─► decoder ─► stand-in ══╪══► parser ─► app ─► tail
 *  head → tail                               of parser ┊                       (unhandled
 *                                                      ┊                        reported)
 *  outbound    socket ◄─ head ◄─ prepender ◄ stand-in ◄╪═══ parser ◄─ app ◄─ channel.write
 *  tail → head                               of parser ┊
 *                                                      ┊
 *  ─►  a call on one side: an event between two JS (or two native) handlers stays there
 *  ══► the boundary, crossed only where a native handler and a JS one are neighbours:
 *      inbound as event records (src/hub-delivery.ts, one call per loop iteration, bytes in
 *      one arena); outbound as op records (JS -> channel/ops.rs, applied when that call
 *      returns, or once per microtask checkpoint). A JS handler without methods of a
 *      direction is passed by natively (its stand-in forwards), so the boundary is not crossed.
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
 *   promise instead (routing.ts moves events and handles these). What reaches the tail
 *   unhandled is reported with the channel id.
 * - A removed context keeps its links, so an event already passing through it goes on.
 * - A native handler may edit the native pipeline by itself (a WebSocket handshake takes the
 *   HTTP codec out, as Netty's handshakers do): such a handler marks the pipeline when it is
 *   added (`_nativeEdits`), and until its edit is seen each look-up first drops the native
 *   contexts the native side no longer has (not while an accepted channel's initializer runs:
 *   its native pipeline has not run yet). The handshake's event, when it reaches JS, drops the
 *   HTTP codec at once (`_httpCodecLeft`), without asking.
 * - Compact form: a pipeline, once its channel's initializer ran (`_compact`), keeps its
 *   names and handlers in one array instead of a context for each native handler and the two
 *   ends (an idle connection of native handlers holds ~100 bytes of JS rather than ~500; one
 *   with a JS handler keeps that handler's context only): src/pipeline-compact.ts. The
 *   contexts are made again, the same as before, on the first use that needs them
 *   (`_head`/`_tail`: a look-up by `context()`, a change, an event fired from the ends);
 *   `names()` and `get()` read the array. Not compacted: a pipeline one of whose native or end
 *   contexts JS was given.
 */
import type { Channel } from './channel'
import { ChannelHandlerContext, Kind } from './context'
import { type ChannelHandler, checkHandler } from './handlers'
import { NativeHandler } from './codecs'
import { NetloopError, invalidArgType } from './errors'
import type { ChannelHub } from './hub'
import { ChannelPromise } from './promise'
import { deliverInbound, deliverOutbound, fireInbound, fireOutbound } from './routing'
import { handlerAdded, handlerRemoved, linkAfter, linkInPlaceOf, unlink } from './pipeline-links'
import { PipelineEvent } from './events'
import { HandlerPosition as Pos } from './protocol'
import { type UnhandledExceptionHandler, reportUnhandled, setUnhandled } from './unhandled'
import { type CompactForm, compactForm, expandForm, findIn, forEachNativeIn, isHttpCodec, keepNativeNamed, namesIn, withoutHttpCodec } from './pipeline-compact'

/** A handler class (JS or native), to find a handler by type as Netty's `get(Class)` does. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type HandlerClass<T extends object = object> = abstract new (...args: any[]) => T

/** How a handler is named in pipeline look-ups: by name, by the handler itself, or by its class. */
export type HandlerRef = string | ChannelHandler | NativeHandler | HandlerClass

export type { UnhandledExceptionHandler } from './unhandled'

/** The flags of `ChannelPipeline.#bits`; the count of generated names sits above them. */
const enum Bit {
  /** A context was handed out (by `context()`): the pipeline is not compacted. */
  ContextGiven = 1,
  NativeEdits = 2,
  WebSocket = 4,
  /** An accepted channel's initializer runs: the native pipeline has not run yet, so it edited nothing. */
  Initializing = 8,
  Shift = 4,
}

/** The silent promise of every pipeline (see `_silentPromise`). */
const SILENT = new ChannelPromise(0)

export class ChannelPipeline {
  #head: ChannelHandlerContext | undefined
  #tail: ChannelHandlerContext | undefined
  /** The compact form (see the ground rules): name, entry, name, entry ..., head to tail. */
  #compact: CompactForm | undefined
  #voidPromise: ChannelPromise | undefined
  /** `Bit` flags, and above them the count of names generated so far (one field, not four). */
  #bits = 0

  /** @internal */
  constructor(readonly channel: Channel) {
    this._ends()
    if (channel.parent !== undefined) this.#bits = Bit.Initializing // until `_compact()`
  }

  /** @internal The channel's hub. */
  get _hub(): ChannelHub {
    return this.channel._hub
  }

  /**
   * @internal A native handler that edits the pipeline by itself is here (see the ground
   * rules): look-ups check the mirror against the native side until its edit is seen.
   */
  get _nativeEdits(): boolean {
    return (this.#bits & Bit.NativeEdits) !== 0
  }
  set _nativeEdits(on: boolean) {
    this.#bits = on ? this.#bits | Bit.NativeEdits : this.#bits & ~Bit.NativeEdits
  }

  /** @internal A WebSocket handler was added: strings JS writes are text messages (src/ws.ts). */
  get _webSocket(): boolean {
    return (this.#bits & Bit.WebSocket) !== 0
  }
  set _webSocket(on: boolean) {
    this.#bits = on ? this.#bits | Bit.WebSocket : this.#bits & ~Bit.WebSocket
  }

  /** @internal */
  _ends(): void {
    const head = (this.#head = new ChannelHandlerContext('HEAD', undefined, undefined, this, Kind.Head, 0))
    const tail = (this.#tail = new ChannelHandlerContext('TAIL', undefined, undefined, this, Kind.Tail, 0))
    head._next = tail
    tail._prev = head
  }

  /** @internal The head context (the contexts are made again first if the pipeline is compact). */
  get _head(): ChannelHandlerContext {
    if (this.#compact !== undefined) this._expand()
    return this.#head!
  }

  /** @internal The tail context (as `_head`). */
  get _tail(): ChannelHandlerContext {
    if (this.#compact !== undefined) this._expand()
    return this.#tail!
  }

  /**
   * @internal After the channel's initializer: a pipeline none of whose native or end contexts
   * JS was given keeps just the names, the native handlers and the JS contexts (see the ground
   * rules).
   */
  _compact(): void {
    this.#bits &= ~Bit.Initializing
    if (this.#compact !== undefined || (this.#bits & Bit.ContextGiven) !== 0) return
    this.#compact = compactForm(this.#head!, this.#tail!)
    this.#head = this.#tail = undefined
  }

  /** The contexts again, from the compact form (a JS handler's context is the one kept). */
  /** @internal */
  _expand(): void {
    const all = this.#compact!
    this.#compact = undefined
    this._ends()
    expandForm(all, this, this.#head!, this.#tail!)
  }

  /** @internal Calls `fn` with each native handler, head to tail (without making contexts). */
  _forEachNative(fn: (h: NativeHandler) => void): void {
    const all = this.#compact
    if (all !== undefined) return forEachNativeIn(all, fn)
    for (let c = this.#head!._next; c && c !== this.#tail; c = c._next) if (c.nativeHandler) fn(c.nativeHandler)
  }

  /**
   * @internal The promise of writes made without one (Netty's `write(msg)`: a promise nobody
   * listens to, whose failure goes nowhere). One for every pipeline of the thread: it is a
   * marker that never reaches a handler (a JS `write` method gets a promise of its own,
   * `ChannelPromise._implicit`, and native code gets `PromiseId.Silent`), so no channel needs
   * its own (136 bytes each).
   */
  get _silentPromise(): ChannelPromise {
    return SILENT
  }

  /** @internal The pipeline's void promise (made on first use: an idle channel holds none). */
  get _voidPromise(): ChannelPromise {
    if (this.#voidPromise === undefined) {
      this.#voidPromise = new ChannelPromise(0, this)
      this.#voidPromise._channel = this.channel
    }
    return this.#voidPromise
  }

  /**
   * Replaces what receives exceptions that reach the tail of any pipeline (default: printed
   * to stderr with the channel id, except a peer that went away, ECONNRESET/EPIPE/
   * ECONNABORTED as error or cause, which is one line of `NODE_DEBUG=netloop`; `undefined`
   * puts the default back). The channel stays as it is, as in Netty. A setting of the
   * whole JS thread (each worker thread has its own), for every loop, present and future.
   */
  static setUnhandledExceptionHandler(handler: UnhandledExceptionHandler | undefined): void {
    setUnhandled(handler)
  }

  // ---- structure ----

  /** Handler names, head to tail. */
  names(): string[] {
    this._followNative()
    const all = this.#compact
    if (all !== undefined) return namesIn(all)
    const out: string[] = []
    for (let c = this._head._next; c && c !== this._tail; c = c._next) out.push(c.name)
    return out
  }

  /**
   * The context of the handler with this name, of this handler object, or (given a class) of
   * the first handler that is an instance of it, head to tail (Netty's `context(Class)`).
   */
  context(which: HandlerRef): ChannelHandlerContext | undefined {
    const c = this._lookup(which)
    if (c !== undefined) this.#bits |= Bit.ContextGiven
    return c
  }

  /** @internal */
  _lookup(which: HandlerRef): ChannelHandlerContext | undefined {
    this._followNative()
    if (typeof which === 'function') {
      for (let c = this._head._next; c && c !== this._tail; c = c._next) {
        if (c.handler instanceof which || c.nativeHandler instanceof which) return c
      }
      return undefined
    }
    for (let c = this._head._next; c && c !== this._tail; c = c._next) {
      if (c.name === which || c.handler === which || c.nativeHandler === which) return c
    }
    return undefined
  }

  /** The handler with this name, or the first one of this class (JS object or native handler description). */
  get<T extends object>(type: HandlerClass<T>): T | undefined
  get(name: string): ChannelHandler | NativeHandler | undefined
  get(which: string | HandlerClass): unknown {
    const all = this.#compact
    if (all === undefined || (this._followNative(), this.#compact === undefined)) {
      const c = this._lookup(which)
      return c?.handler ?? c?.nativeHandler
    }
    return findIn(all, which)
  }

  /** Adds `handler` first (named `name`, or a generated name such as `LineBasedFrameDecoder#0`). */
  addFirst(handler: ChannelHandler | NativeHandler): this
  addFirst(name: string, handler: ChannelHandler | NativeHandler): this
  addFirst(a: string | ChannelHandler | NativeHandler, b?: ChannelHandler | NativeHandler): this {
    return this._addAt(Pos.First, '', a, b)
  }
  /** Adds `handler` last (named `name`, or a generated name). */
  addLast(handler: ChannelHandler | NativeHandler): this
  addLast(name: string, handler: ChannelHandler | NativeHandler): this
  addLast(a: string | ChannelHandler | NativeHandler, b?: ChannelHandler | NativeHandler): this {
    return this._addAt(Pos.Last, '', a, b)
  }

  /** The name of `(name, handler)`, or for `(handler)` Netty's generated name: the class name and `#n`. */
  /** @internal */
  _nameOf(a: string | ChannelHandler | NativeHandler, b: ChannelHandler | NativeHandler | undefined): string {
    if (typeof a === 'string' || b !== undefined) return a as string
    checkHandler(a)
    const base = (a as object).constructor?.name || 'handler'
    for (;;) {
      const name = `${base === 'Object' ? 'handler' : base}#${this.#bits >>> Bit.Shift}`
      this.#bits += 1 << Bit.Shift
      if (!this._lookup(name)) return name
    }
  }

  /**
   * @internal With `_nativeEdits`: takes out of the mirror the native contexts the native pipeline no
   * longer has (a handler that edits natively removed them), as removed contexts.
   */
  _followNative(): void {
    if ((this.#bits & (Bit.NativeEdits | Bit.Initializing)) !== Bit.NativeEdits || !this.channel._known) return
    const names = this._hub.nativeNames(this.channel)
    if (names.length === 0) return // the native side forgot the channel
    const all = this.#compact
    if (all !== undefined) {
      const kept = keepNativeNamed(all, names)
      if (kept === undefined) return
      this.#compact = kept
      this._nativeEdits = false
      return
    }
    if (this.#dropNative((c) => !names.includes(c.name))) this._nativeEdits = false // the edit is seen
  }

  /** Takes the native contexts `gone` picks out of the linked mirror, as removed ones (no native call: the native side took them out); true if any. */
  #dropNative(gone: (c: ChannelHandlerContext) => boolean): boolean {
    let any = false
    for (let c = this.#head!._next; c && c !== this.#tail; c = c._next) {
      if (c._kind !== Kind.Native || !gone(c)) continue
      this._unlink(c, false)
      c._removed = true
      any = true
    }
    return any
  }

  /**
   * @internal A WebSocket handshake completed (its event reached JS): the native handshake took
   * the HTTP codec out, or does so right after its `101` (server and client alike), so the
   * mirror drops it now, without asking the native side (src/hub-delivery.ts). An idle
   * connection then keeps no description of it.
   */
  _httpCodecLeft(): void {
    if (!this._nativeEdits) return
    this._nativeEdits = false
    const all = this.#compact
    if (all !== undefined) {
      this.#compact = withoutHttpCodec(all) ?? all
      return
    }
    this.#dropNative((c) => isHttpCodec(c.nativeHandler))
  }

  /** Removes the handler (by name, object or class) if it is in the pipeline; returns it, or undefined. */
  removeIfExists<T extends object>(type: HandlerClass<T>): T | undefined
  removeIfExists(nameOrHandler: string | ChannelHandler | NativeHandler): ChannelHandler | NativeHandler | undefined
  removeIfExists(which: HandlerRef): unknown {
    return this._lookup(which) ? this.remove(which as string) : undefined
  }

  /** Adds `handler` before the handler named `baseName` (named `name`, or a generated name). */
  addBefore(baseName: string, handler: ChannelHandler | NativeHandler): this
  addBefore(baseName: string, name: string, handler: ChannelHandler | NativeHandler): this
  addBefore(baseName: string, a: string | ChannelHandler | NativeHandler, b?: ChannelHandler | NativeHandler): this {
    return this._addAt(Pos.Before, baseName, a, b)
  }
  /** Adds `handler` after the handler named `baseName` (named `name`, or a generated name). */
  addAfter(baseName: string, handler: ChannelHandler | NativeHandler): this
  addAfter(baseName: string, name: string, handler: ChannelHandler | NativeHandler): this
  addAfter(baseName: string, a: string | ChannelHandler | NativeHandler, b?: ChannelHandler | NativeHandler): this {
    return this._addAt(Pos.After, baseName, a, b)
  }

  /** @internal */
  _checkName(name: unknown, what = 'name'): string {
    if (typeof name !== 'string' || name.length === 0) {
      throw invalidArgType(what, 'non-empty string', name)
    }
    return name
  }

  /** @internal */
  _find(which: HandlerRef): ChannelHandlerContext {
    const c = this._lookup(which)
    if (!c) {
      const what = typeof which === 'string' ? `named '${which}'` : typeof which === 'function' ? `of class ${which.name || '(anonymous)'}` : "'(object)'"
      throw new NetloopError('ERR_NO_SUCH_HANDLER', `No handler ${what} in the pipeline of channel ${this.channel.id}`)
    }
    return c
  }

  /** @internal */
  _newContext(name: string, handler: ChannelHandler | NativeHandler): ChannelHandlerContext {
    return handler instanceof NativeHandler
      ? new ChannelHandlerContext(name, undefined, handler, this, Kind.Native, 0)
      : new ChannelHandlerContext(name, handler, undefined, this, Kind.Js, this._hub.nextContextId())
  }

  /** @internal */
  _addAt(pos: Pos, base: string, a: string | ChannelHandler | NativeHandler, b: ChannelHandler | NativeHandler | undefined): this {
    // (`a`, `b`: `(name, handler)` or `(handler)`, resolved here without a pair per add)
    const name = this._nameOf(a, b)
    const handler = (typeof a === 'string' || b !== undefined ? b : a) as ChannelHandler | NativeHandler
    this._checkName(name)
    checkHandler(handler)
    if (this._lookup(name)) {
      throw new NetloopError('ERR_DUPLICATE_HANDLER_NAME', `Duplicate handler name: ${name}`)
    }
    let prev: ChannelHandlerContext
    if (pos === Pos.First) prev = this._head
    else if (pos === Pos.Last) prev = this._tail._prev!
    else {
      const b = this._find(this._checkName(base, 'baseName'))
      prev = pos === Pos.Before ? b._prev! : b
    }
    const ctx = this._newContext(name, handler)
    this._hub.nativeAdd(this.channel, pos, base, ctx)
    linkAfter(prev, ctx)
    handlerAdded(ctx)
    return this
  }

  /** @internal */
  _unlink(ctx: ChannelHandlerContext, native: boolean): void {
    if (this.#compact !== undefined) this._expand() // (a JS context out of a compact pipeline: its `handlerAdded` rejected later)
    if (native) this._hub.nativeRemove(this.channel, ctx.name)
    unlink(ctx)
  }

  /** Removes a handler (by name, object, or the first one of a class) and returns it. */
  remove<T extends object>(type: HandlerClass<T>): T
  remove(nameOrHandler: string | ChannelHandler | NativeHandler): ChannelHandler | NativeHandler
  remove(which: HandlerRef): ChannelHandler | NativeHandler {
    const ctx = this._find(which)
    this._unlink(ctx, true)
    handlerRemoved(ctx)
    return ctx.handler ?? ctx.nativeHandler!
  }

  /**
   * Puts `handler` named `newName` in the place of `old`, which is returned. The new
   * handler's `handlerAdded` runs before the old one's `handlerRemoved`; what the old one
   * passes on afterwards goes through the new one, as in Netty.
   */
  replace(old: HandlerRef, newName: string, handler: ChannelHandler | NativeHandler): ChannelHandler | NativeHandler {
    this._checkName(newName, 'newName')
    checkHandler(handler)
    const oldCtx = this._find(old)
    if (newName !== oldCtx.name && this._lookup(newName)) {
      throw new NetloopError('ERR_DUPLICATE_HANDLER_NAME', `Duplicate handler name: ${newName}`)
    }
    const ctx = this._newContext(newName, handler)
    this._hub.nativeReplace(this.channel, oldCtx.name, ctx)
    linkInPlaceOf(oldCtx, ctx)
    handlerAdded(ctx)
    handlerRemoved(oldCtx)
    return oldCtx.handler ?? oldCtx.nativeHandler!
  }

  /** @internal The channel left its loop: every handler is removed, tail to head. */
  _destroy(): void {
    const all = this.#compact
    if (all !== undefined && all.every((e) => !(e instanceof ChannelHandlerContext))) {
      this.#compact = [] // native handlers only: no handlerRemoved to call in JS
      return
    }
    for (let c = this._tail._prev; c && c !== this._head; c = this._tail._prev) {
      unlink(c)
      handlerRemoved(c)
    }
  }

  // ---- events from the ends ----

  fireChannelRead(msg: unknown): this {
    this._fireInbound(this._head, PipelineEvent.ChannelRead, msg)
    return this
  }
  fireChannelReadComplete(): this {
    this._fireInbound(this._head, PipelineEvent.ChannelReadComplete, undefined)
    return this
  }
  fireUserEventTriggered(event: unknown): this {
    this._fireInbound(this._head, PipelineEvent.UserEventTriggered, event)
    return this
  }
  fireExceptionCaught(error: unknown): this {
    this._fireInbound(this._head, PipelineEvent.ExceptionCaught, error)
    return this
  }

  /** @internal A new promise of this pipeline's channel. */
  _newPromise(): ChannelPromise {
    const p = new ChannelPromise(NaN)
    p._channel = this.channel
    return p
  }

  // ---- routing (src/routing.ts) ----

  /** @internal Passes an inbound event from `from` to the next handler that takes it. */
  _fireInbound(from: ChannelHandlerContext, kind: number, arg: unknown): void {
    fireInbound(this, from, kind, arg)
  }

  /** @internal An inbound event the native pipeline passed to JS context `ctx`. */
  _deliverInbound(ctx: ChannelHandlerContext, kind: number, arg: unknown): void {
    deliverInbound(this, ctx, kind, arg)
  }

  /** @internal Passes an outbound operation from `from` to the previous handler that takes it. */
  _fireOutbound(from: ChannelHandlerContext, kind: number, msg: unknown, promise: ChannelPromise | undefined): void {
    fireOutbound(this, from, kind, msg, promise)
  }

  /** @internal An outbound operation the native pipeline passed to JS context `ctx`. */
  _deliverOutbound(ctx: ChannelHandlerContext, kind: number, msg: unknown, promise: ChannelPromise | undefined): void {
    deliverOutbound(this, ctx, kind, msg, promise)
  }

  /**
   * @internal An exception nobody handled: to the server channel's pipeline or the
   * unhandled-exception handler (src/unhandled.ts).
   */
  _reportUnhandled(arg: unknown): void {
    reportUnhandled(this.channel, arg)
  }
}
