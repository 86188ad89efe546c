/**
 * The JS side of one loop's channel hub (crates/node/src/channel/hub.rs): decodes the event
 * records the loop delivers (one call per iteration for all of the loop's channels) and
 * encodes what JS handlers pass to native code as op records, applied when the delivery
 * returns (or once per microtask checkpoint outside a delivery): no napi call per event.
 */
import { native } from './binding'
import type * as Native from '../native'
import { Channel as ChannelClass, type Channel, initialize } from './channel'
import { ChannelHandlerContext, Kind } from './context'
import { NetloopError } from './errors'
import { ChannelInputShutdownEvent, idleEvent } from './handlers'
import { RespReply, readValue, replyBytes, writeReply } from './resp'
import { HttpContent, HttpResponse, httpBytes, readHttp, writeHttp } from './http'
import { SslCloseCompletionEvent, SslHandshakeCompletionEvent, tlsHandlerOf } from './tls'
import { publishClose, publishServerSocket } from './diagnostics'
import type { EventLoop } from './loop'
import { ChannelPromise } from './promise'
import { ARENA_BYTES, EVENT_CAPACITY, OP_CAPACITY, checkWire } from './wire'
import { ErrorIndex, MetricsSlot, Outcome, PromiseId, RecordField, ServerId, UserEventKind, WireKind } from './protocol'
import { PipelineEvent } from './events'
import { EVENT_OF_WIRE, WIRE_OF_EVENT, takes } from './event-wire'
import { VALUE_SIZE, WritabilityCounter } from './writability'

const NativeChannels = native.NativeChannels
type NativeChannels = Native.NativeChannels

/** Slots of the hub's channel cache (a power of two). */
const CHANNEL_CACHE = 4096
/**
 * Byte writes of at least this size are not copied: the op carries the JS Buffer itself and
 * the native side holds a reference to it until the socket has written it (as node:net
 * writes from the Buffer). Smaller ones are copied into the op arena, which costs less than
 * the reference.
 */
const BORROW_MIN = 8 * 1024

/** What a child hub does with a channel its server accepted (see `ChannelHub.servers`). */
export interface ServerAcceptor {
  accept(hub: ChannelHub, id: number): void
}

/** The channel hub of `loop` (made on first use; a field of the loop, it lives as long). */
export function hubOf(loop: EventLoop): ChannelHub {
  return (loop._hub ??= new ChannelHub(loop))
}

/** Counters of a loop's JS boundary (see `EventLoop.metrics()`). */
export interface ChannelMetrics {
  iterations: number
  deliveries: number
  events: number
  jsToNativeCalls: number
  ops: number
  bytesIn: number
  bytesOut: number
  channels: number
}

/** Closes every channel of `loop` (its shutdown started). */
export function closeChannelsOf(loop: EventLoop): void {
  const h = loop._hub
  if (h) {
    h.sync()
    h.native.closeAll()
  }
}

export function channelMetrics(loop: EventLoop): ChannelMetrics | undefined {
  const h = loop._hub
  if (!h) return undefined
  const m = h.native.metrics()
  return {
    iterations: m[MetricsSlot.Iterations],
    deliveries: m[MetricsSlot.Deliveries],
    events: m[MetricsSlot.Records],
    jsToNativeCalls: m[MetricsSlot.JsToNative],
    ops: m[MetricsSlot.Ops],
    bytesIn: m[MetricsSlot.BytesToJs],
    bytesOut: m[MetricsSlot.BytesFromJs],
    channels: m[MetricsSlot.Channels],
  }
}

/** How a protocol module writes its messages in their JS→native layout (no closure per write). */
interface FramedCodec<M> {
  /** Writes `m` at `at`; the end offset, or -1 if it does not fit. */
  write(m: M, buf: Buffer, at: number): number
  /** `m` in a Buffer of its own (too big for the arena). */
  bytes(m: M): Buffer
}
const RESP_CODEC: FramedCodec<RespReply> = { write: writeReply, bytes: replyBytes }
const HTTP_CODEC: FramedCodec<HttpResponse | HttpContent> = { write: writeHttp, bytes: httpBytes }

function errorOf(code: string, message: string, channel: number, cause?: unknown): NetloopError {
  const e = new NetloopError(code, message)
  if (channel) (e as NetloopError & { channelId?: number }).channelId = channel
  if (cause !== undefined) Object.defineProperty(e, 'cause', { value: cause, writable: true, configurable: true })
  return e
}

/** The error that closed a channel, if one did (Netty's initial close cause). */
const closeCauses = new WeakMap<Channel, unknown>()

export class ChannelHub {
  readonly native: NativeChannels
  /** The channels the native side knows, by id. */
  readonly #channels = new Map<number, Channel>()
  /** A direct-mapped cache in front of `#channels` (ids are sequential: few collisions). */
  readonly #channelCache: Array<Channel | undefined> = new Array<Channel | undefined>(CHANNEL_CACHE).fill(undefined)
  readonly #events = new Float64Array(EVENT_CAPACITY * RecordField.Length)
  readonly #ops = new Float64Array(1 + OP_CAPACITY * RecordField.Length)
  readonly #arena = Buffer.allocUnsafeSlow(ARENA_BYTES)
  #arenaUsed = 0
  /** What the last `#encode` made: the op's kind and its `a`, `b` fields. */
  #encKind = 0
  #encA = 0
  #encB = 0
  #big: Buffer[] = []
  /** The large reads of the delivery being dispatched (see `#dispatch`). */
  #segments: Buffer[] | undefined = undefined
  #strings: string[] = []
  #delivering = 0
  #flushQueued = false
  #nextContext = 1
  readonly #tokens = new Map<number, unknown>()
  #nextToken = 1
  readonly #promises = new Map<number, ChannelPromise>()
  #nextPromise = 1
  readonly #flush = () => {
    this.#flushQueued = false
    if (this.#ops[0] > 0 || this.#big.length > 0) this.#applyNow()
  }
  readonly #cancelNative = (id: number): boolean => {
    this.sync()
    return this.native.cancelPromise(id)
  }
  readonly #completeNative = (id: number, error: Error | null) => {
    if (error === null) this.#op(WireKind.CompletePromise, 0, 0, id, Outcome.Success, 0)
    else this.#op(WireKind.CompletePromise, 0, this.#errorStrings(error), id, Outcome.JsError, this.#token(error))
  }

  /** What JS's queued writes count towards writability (see `writability.ts`). */
  readonly writability: WritabilityCounter

  constructor(readonly loop: EventLoop) {
    checkWire()
    this.native = new NativeChannels(loop._native, this.#events, this.#ops, this.#arena)
    // Event records arrive through the loop's one dispatch function (DispatchKind.Channels).
    loop._onChannelEvents = (n, arena, strings, base, segments) => this.#dispatch(n, arena, strings, base, segments)
    this.writability = new WritabilityCounter(this.native, this.#ops)
  }

  /**
   * The servers of this thread that hand accepted channels to this hub's loop, by server
   * channel id (ids are unique in the process): a `NewChannel` record names its server, and
   * the entry makes the JS channel and runs the server's child initializer. A field of the
   * hub, so it lives as long as the loop: `ServerBootstrap.bind` adds the server to each of
   * its child loops' hubs when it opens it, the server's close future removes it (both on
   * this thread).
   */
  readonly servers = new Map<number, ServerAcceptor>()

  /** The child initializer of this worker's module (channels handed over by another thread). */
  remoteInit: ((ch: Channel) => void) | undefined

  #acceptRemote(id: number): void {
    const ch = new ChannelClass(this, id, undefined)
    publishServerSocket(ch)
    if (initialize(ch, this.remoteInit)) this.register(ch)
  }

  /** Adds a channel the native side made (its constructor calls this). */
  addChannel(ch: Channel): void {
    this.#channels.set(ch.id, ch)
    this.#channelCache[ch.id % CHANNEL_CACHE] = ch
  }

  /** The live channel `id` of this hub. */
  channel(id: number): Channel | undefined {
    const cached = this.#channelCache[id % CHANNEL_CACHE]
    if (cached !== undefined && cached.id === id) return cached
    const ch = this.#channels.get(id)
    if (ch !== undefined) this.#channelCache[id % CHANNEL_CACHE] = ch
    return ch
  }

  #forgetChannel(id: number): Channel | undefined {
    const ch = this.#channels.get(id)
    this.#channels.delete(id)
    if (this.#channelCache[id % CHANNEL_CACHE]?.id === id) this.#channelCache[id % CHANNEL_CACHE] = undefined
    return ch
  }

  nextContextId(): number {
    return this.#nextContext++
  }

  registerContext(ctx: ChannelHandlerContext): void {
    ctx.pipeline.channel._contexts.push(ctx)
  }

  // ---- native calls (ordered after the ops buffered so far) ----

  #call<T>(fn: () => T): T {
    if (this.#big.length > 0 || this.#strings.length > 0) this.#applyNow()
    return fn()
  }

  nativeAdd(ch: Channel, pos: number, base: string, ctx: ChannelHandlerContext): void {
    if (!this.#known(ch)) return
    this.#call(() =>
      ctx._kind === Kind.Js
        ? this.native.addJs(ch.id, pos, base, ctx.name, ctx._id, takes(ctx))
        : (ctx.nativeHandler!._attach(ch), this.native.addNative(ch.id, pos, base, ctx.name, ctx.nativeHandler!._kind, ctx.nativeHandler!._params, ctx.nativeHandler!._delimiters)),
    )
  }

  nativeRemove(ch: Channel, name: string): void {
    if (this.#known(ch)) this.#call(() => this.native.remove(ch.id, name))
  }

  nativeReplace(ch: Channel, old: string, ctx: ChannelHandlerContext): void {
    if (!this.#known(ch)) return
    const n = ctx.nativeHandler
    n?._attach(ch)
    this.#call(() => this.native.replace(ch.id, old, ctx.name, n ? n._kind : 0, ctx._id, n ? n._params : [], n?._delimiters, n ? 0 : takes(ctx)))
  }

  /** False once the native side forgot the channel: pipeline changes are then JS-only. */
  #known(ch: Channel): boolean {
    return ch._known
  }

  // ---- ops ----

  #op(kind: number, channel: number, ctx: number, a: number, b: number, c: number): void {
    const ops = this.#ops
    let n = ops[0]
    if (n >= OP_CAPACITY) {
      this.#applyNow()
      n = 0
    }
    if (n === 0) this.writability.epoch++
    const at = 1 + n * RecordField.Length
    ops[at] = kind
    ops[at + 1] = channel
    ops[at + 2] = ctx
    ops[at + 3] = a
    ops[at + 4] = b
    ops[at + 5] = c
    ops[0] = n + 1
    if (this.#delivering === 0 && !this.#flushQueued) {
      this.#flushQueued = true
      queueMicrotask(this.#flush)
    }
  }

  #applyNow(): void {
    const big = this.#big.length > 0 ? this.#big : undefined
    const strings = this.#strings.length > 0 ? this.#strings : undefined
    this.#big = []
    this.#strings = []
    this.native.applyOps(big, strings)
    this.#arenaUsed = 0
  }

  #token(value: unknown): number {
    const t = this.#nextToken++
    this.#tokens.set(t, value)
    return t
  }

  #errorStrings(error: unknown): number {
    const at = this.#strings.length
    const e = error as { code?: unknown; message?: unknown } | null
    this.#strings.push(typeof e?.code === 'string' ? e.code : 'ERR_JS_HANDLER', typeof e?.message === 'string' ? e.message : String(error))
    return at
  }

  /**
   * Puts a message into the op stream: bytes in the arena, a big chunk or a token. The op's
   * kind and its `a`, `b` fields are left in `#encKind`, `#encA`, `#encB` (no tuple per write).
   */
  #encode(msg: unknown, bytesKind: number, bigKind: number, valueKind: number): void {
    // The op this encodes must go with the same batch as its bytes or big chunk.
    if (this.#ops[0] >= OP_CAPACITY) this.#applyNow()
    if (this.#ops[0] === 0) this.#arenaUsed = 0
    let buf: Uint8Array
    if (typeof msg === 'string') {
      const room = ARENA_BYTES - this.#arenaUsed
      if (msg.length * 3 <= room) {
        const off = this.#arenaUsed
        const n = this.#arena.write(msg, off, 'utf8')
        this.#arenaUsed += n
        return this.#encoded(bytesKind, off, n)
      }
      buf = Buffer.from(msg, 'utf8')
    } else if (msg instanceof Uint8Array) {
      buf = msg
    } else if (msg instanceof RespReply && bytesKind === WireKind.WriteBytes) {
      return this.#encodeFramed(WireKind.WriteResp, msg, RESP_CODEC)
    } else if ((msg instanceof HttpResponse || msg instanceof HttpContent) && bytesKind === WireKind.WriteBytes) {
      return this.#encodeFramed(WireKind.WriteHttp, msg, HTTP_CODEC)
    } else {
      return this.#encoded(valueKind, this.#token(msg), 0)
    }
    const len = buf.byteLength
    if (len >= BORROW_MIN) {
      this.#big.push(Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, len))
      return this.#encoded(bigKind, this.#big.length - 1, len)
    }
    if (this.#arenaUsed + len > ARENA_BYTES) {
      this.#applyNow()
    }
    const off = this.#arenaUsed
    this.#arena.set(buf, off)
    this.#arenaUsed += len
    return this.#encoded(bytesKind, off, len)
  }

  /**
   * A protocol message in the layout its module writes (RESP replies: src/resp.ts; HTTP
   * responses and body pieces: src/http.ts) into the arena, or as a big chunk (`b` = -1).
   */
  #encodeFramed<M>(kind: number, msg: M, codec: FramedCodec<M>): void {
    let end = codec.write(msg, this.#arena, this.#arenaUsed)
    if (end < 0 && this.#arenaUsed > 0) {
      this.#applyNow()
      end = codec.write(msg, this.#arena, this.#arenaUsed)
    }
    if (end < 0) {
      this.#big.push(codec.bytes(msg))
      return this.#encoded(kind, this.#big.length - 1, -1)
    }
    const off = this.#arenaUsed
    this.#arenaUsed = end
    return this.#encoded(kind, off, end - off)
  }

  #encoded(kind: number, a: number, b: number): void {
    this.#encKind = kind
    this.#encA = a
    this.#encB = b
  }

  /** The wire id of `p`: 0 silent void, `PromiseId.VoidFiring`, a JS id (> 0) or a lent one (< -1). */
  #promiseId(p: ChannelPromise | undefined): number {
    if (p === undefined || p._silent) return 0
    if (p._id === 0) return p._fires ? PromiseId.VoidFiring : PromiseId.Silent
    if (p._id < 0 || p._id > 0) return p._id
    const id = this.#nextPromise++
    p._id = id
    p._cancelNative = this.#cancelNative
    this.#promises.set(id, p)
    return id
  }

  /** A JS stand-in for native promise `id` (< 0), lent with a native handler's operation. */
  #lent(id: number): ChannelPromise {
    const p = new ChannelPromise(id, undefined, this.#completeNative)
    p._cancelNative = this.#cancelNative
    return p
  }

  /** An inbound event leaving JS at context `ctx` (0: the head) for the native pipeline. */
  sendInbound(ch: Channel, ctx: number, kind: PipelineEvent, arg: unknown): void {
    if (!this.#known(ch)) return
    switch (kind) {
      case PipelineEvent.ChannelRead: {
        this.#encode(arg, WireKind.ReadBytes, WireKind.ReadBig, WireKind.ReadValue)
        this.#op(this.#encKind, ch.id, ctx, this.#encA, this.#encB, 0)
        break
      }
      case PipelineEvent.UserEventTriggered:
        this.#op(WireKind.UserEvent, ch.id, ctx, this.#token(arg), UserEventKind.Token, 0)
        break
      case PipelineEvent.ExceptionCaught:
        this.#op(WireKind.Exception, ch.id, ctx, this.#token(arg), this.#errorStrings(arg), 0)
        break
      default:
        this.#op(WIRE_OF_EVENT[kind], ch.id, ctx, 0, 0, 0)
    }
    if (this.#big.length > 0 || this.#strings.length > 0) this.#applyNow()
  }

  /** An outbound operation leaving JS at context `ctx` (0: the tail) for the native pipeline. */
  sendOutbound(ch: Channel, ctx: number, kind: PipelineEvent, msg: unknown, promise: ChannelPromise | undefined): void {
    // Cancelled before it left JS: the operation does nothing (Netty's isNotValidPromise).
    if (promise?.isCancelled) return
    if (!this.#known(ch)) {
      if (kind === PipelineEvent.Write || kind === PipelineEvent.Close) {
        const closed = errorOf('ERR_CHANNEL_CLOSED', `channel ${ch.id} is closed`, ch.id, closeCauses.get(ch))
        if (kind === PipelineEvent.Close) promise?._complete({ ok: true })
        else promise?._complete({ ok: false, error: closed })
      }
      return
    }
    if (kind === PipelineEvent.Write) {
      this.#encode(msg, WireKind.WriteBytes, WireKind.WriteBig, WireKind.WriteValue)
      // A RESP/HTTP message too big for the arena travels as a big chunk (`b` = -1).
      const size = this.#encKind === WireKind.WriteValue ? VALUE_SIZE : this.#encB < 0 ? this.#big[this.#encA].length : this.#encB
      this.#op(this.#encKind, ch.id, ctx, this.#encA, this.#encB, this.#promiseId(promise))
      this.writability.count(ch, size)
    } else {
      this.#op(WIRE_OF_EVENT[kind], ch.id, ctx, 0, 0, kind === PipelineEvent.Close ? this.#promiseId(promise) : 0)
    }
  }

  /** Registers channel `ch` on its loop (after its initializer ran). */
  register(ch: Channel): void {
    this.#op(WireKind.Register, ch.id, 0, 0, 0, 0)
  }

  /** A JS promise id for a native call that completes it (connect, bind, shutdownOutput). */
  promiseFor(p: ChannelPromise): number {
    return this.#promiseId(p)
  }

  /** Applies the buffered ops now (before a direct native call that must see them). */
  sync(): void {
    if (this.#ops[0] > 0 || this.#big.length > 0 || this.#strings.length > 0) this.#applyNow()
  }

  // ---- delivery ----

  /**
   * One delivery: `count` records in the events array, their bytes in `arena` or, when `base`
   * is not negative, in `arena` from `base` on (a small batch copied into the thread's read
   * pool, `crates/node/src/channel/delivery.rs`). Large reads come as Buffers of their own in
   * `segments` (a read record's `c` - 1).
   */
  #dispatch(count: number, arena: Buffer | undefined, strings: string[] | undefined, base: number | undefined, segments: Buffer[] | undefined): void {
    if (base !== undefined && base >= 0 && arena !== undefined) arena = arena.subarray(base)
    this.#segments = segments
    this.#delivering++
    try {
      const ev = this.#events
      // Consecutive records of one channel run in that channel's async context (the context
      // that made it: the connect() call, or the server's bind() for accepted channels).
      let i = 0
      while (i < count) {
        const chan = ev[i * RecordField.Length + RecordField.Channel]
        let j = i + 1
        while (j < count && ev[j * RecordField.Length + RecordField.Channel] === chan) j++
        const ch = chan === 0 ? undefined : this.channel(chan)
        if (ch) ch._resource.runInAsyncScope(this.#routeRange, this, ch, i, j, arena, strings)
        else this.#routeRange(undefined, i, j, arena, strings)
        i = j
      }
    } finally {
      this.#delivering--
      this.#segments = undefined
      if (this.#big.length > 0 || this.#strings.length > 0) this.#applyNow()
    }
  }

  #routeRange(ch: Channel | undefined, from: number, to: number, arena: Buffer | undefined, strings: string[] | undefined): void {
    const ev = this.#events
    for (let i = from; i < to; i++) {
      const at = i * RecordField.Length
      try {
        this.#route(ch, ev[at], ev[at + 1], ev[at + 2], ev[at + 3], ev[at + 4], ev[at + 5], arena, strings)
      } catch (e) {
        // Handler errors are routed by the pipeline; this is a bug guard: one bad record
        // must not stop the others.
        console.error('netloop: channel event dispatch failed:', e)
      }
    }
  }

  /** A native error is four strings: code, message, and its cause's code and message ('' if none). */
  #error(b: number, at: number, strings: string[] | undefined, channel: number): unknown {
    if (b === Outcome.JsError) return this.#tokens.get(at)
    // Four strings: code, message, and the cause's (empty without one).
    const causeCode = strings?.[at + 2]
    const cause = causeCode ? errorOf(causeCode, strings?.[at + 3] ?? '', channel) : undefined
    return errorOf(strings?.[at] ?? 'ERR_UNKNOWN', strings?.[at + 1] ?? '', channel, cause)
  }

  #take(token: number): unknown {
    const v = this.#tokens.get(token)
    this.#tokens.delete(token)
    return v
  }

  /** The JS context `id` of channel `ch` (a scan: a pipeline holds a few contexts). */
  #context(ch: Channel | undefined, id: number): ChannelHandlerContext | undefined {
    if (ch === undefined || !ch._known) return undefined
    const all = ch._contexts
    for (let i = all.length - 1; i >= 0; i--) if (all[i]._id === id) return all[i]
    return undefined
  }

  /** The user event of a `UserEvent` record (`b` names what it is, `a` carries it). */
  #userEvent(b: UserEventKind, a: number, strings: string[] | undefined, chan: number): unknown {
    switch (b) {
      case UserEventKind.Token:
        return this.#take(a)
      case UserEventKind.Idle:
        return idleEvent(a)
      case UserEventKind.InputShutdown:
        return ChannelInputShutdownEvent.INSTANCE
      case UserEventKind.TlsHandshake:
        return this.#handshakeEvent(a, strings, chan)
      default:
        return SslCloseCompletionEvent.INSTANCE
    }
  }

  /** A TLS handshake's completion: `a` = `ErrorIndex.None` or the error's string index. */
  #handshakeEvent(a: number, strings: string[] | undefined, chan: number): SslHandshakeCompletionEvent {
    return a === ErrorIndex.None ? SslHandshakeCompletionEvent.SUCCESS : SslHandshakeCompletionEvent.failed(this.#error(Outcome.NativeError, a, strings, chan) as NetloopError)
  }

  #route(ch: Channel | undefined, kind: WireKind, chan: number, ctxId: number, a: number, b: number, c: number, arena: Buffer | undefined, strings: string[] | undefined): void {
    if (kind < WireKind.WriteBytes) {
      const ctx = this.#context(ch, ctxId)
      if (!ctx) return
      let arg: unknown
      if (kind === WireKind.ReadBytes) arg = c > 0 ? this.#segments![c - 1] : b === 0 ? Buffer.alloc(0) : arena!.subarray(a, a + b)
      else if (kind === WireKind.ReadHttp) arg = readHttp(arena!, a)
      else if (kind === WireKind.ReadResp) arg = readValue(arena!, a)
      else if (kind === WireKind.ReadValue) arg = this.#take(a)
      else if (kind === WireKind.UserEvent) arg = this.#userEvent(b, a, strings, chan)
      else if (kind === WireKind.Exception) arg = this.#error(b, a, strings, chan)
      ctx.pipeline._deliverInbound(ctx, EVENT_OF_WIRE[kind], arg)
      return
    }
    if (kind < WireKind.PromiseDone) {
      const ctx = this.#context(ch, ctxId)
      const promise = c < PromiseId.VoidFiring ? this.#lent(c) : c === PromiseId.VoidFiring ? ctx?.pipeline._voidPromise : c === PromiseId.Silent ? ctx?.pipeline._silentPromise : undefined
      if (!ctx) {
        promise?.tryFailure(errorOf('ERR_CHANNEL_CLOSED', 'the handler is gone', chan))
        return
      }
      let msg: unknown
      if (kind === WireKind.WriteBytes) msg = b === 0 ? Buffer.alloc(0) : arena!.subarray(a, a + b)
      else if (kind === WireKind.WriteValue) msg = this.#take(a)
      ctx.pipeline._deliverOutbound(ctx, EVENT_OF_WIRE[kind], msg, promise)
      return
    }
    switch (kind) {
      case WireKind.PromiseDone: {
        const p = this.#promises.get(a)
        if (!p) return
        this.#promises.delete(a)
        p._complete(b === Outcome.Success ? { ok: true } : { ok: false, error: this.#error(b, c, strings, chan) as Error })
        return
      }
      case WireKind.NewChannel:
        if (a === ServerId.Remote) this.#acceptRemote(chan)
        else this.servers.get(a)?.accept(this, chan)
        return
      case WireKind.Closed: {
        const ch = this.channel(chan)
        if (ch && b !== Outcome.Success) closeCauses.set(ch, this.#error(b, a, strings, chan))
        if (ch) tlsHandlerOf(ch)?._onClosed() // channel.tls stays readable after the close
        ch?._onClosed()
        if (ch) publishClose(ch, closeCauses.get(ch))
        return
      }
      case WireKind.Unhandled: {
        const ch = this.channel(chan)
        if (ch) ch.pipeline._reportUnhandled(this.#error(b, a, strings, chan))
        return
      }
      case WireKind.TlsHandshake: {
        const ch = this.channel(chan)
        if (ch) tlsHandlerOf(ch)?._handshakeDone(this.#handshakeEvent(a, strings, chan))
        return
      }
      case WireKind.Release:
        this.#tokens.delete(a)
        return
      case WireKind.Forget: {
        const ch = this.#forgetChannel(chan)
        if (ch) {
          ch._known = false
          ch.pipeline._destroy()
        }
        return
      }
    }
  }
}
