/**
 * The JS side of one loop's channel hub (crates/wire/src/hub.rs): the loop's JS
 * channels by id, the calls that change their native pipelines, and the events and
 * operations JS handlers pass to native code. Its two halves are modules of their own: the
 * delivery (src/hub-delivery.ts) decodes the event records the loop delivers, one call per
 * iteration for all of the loop's channels; the op stream (src/op-stream.ts) encodes what JS
 * passes to native code as op records, applied when the delivery returns (or once per
 * microtask checkpoint outside a delivery): no napi call per event. Tokens and promise ids
 * are in src/hub-refs.ts.
 */
import { native } from './binding'
import type * as Native from '../native'
import { Channel as ChannelClass, type Channel, initialize } from './channel'
import { type ChannelHandlerContext, Kind } from './context'
import { publishServerSocket } from './diagnostics'
import type { EventLoop } from './loop'
import type { ChannelPromise } from './promise'
import { ARENA_BYTES, EVENT_CAPACITY, OP_CAPACITY, checkWire } from './wire'
import { MetricsSlot, Outcome, RecordField, UserEventKind, WireKind, WritabilitySlot } from './protocol'
import { PipelineEvent } from './events'
import { WIRE_OF_EVENT, takes } from './event-wire'
import { VALUE_SIZE, WritabilityCounter } from './writability'
import { Delivery, closeCauses, errorOf } from './hub-delivery'
import { OpStream } from './op-stream'
import { dropUnsent } from './file-region'
import { TextWebSocketFrame, isWebSocketChannel } from './ws'
import { Promises, Tokens } from './hub-refs'

const NativeChannels = native.NativeChannels
type NativeChannels = Native.NativeChannels

/** Slots of the hub's channel cache (a power of two). */
const CHANNEL_CACHE = 4096

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
  /** Of `bytesOut`: Buffers JS had been delivered and wrote back (an echo, a proxy), sent
   * without a copy and without keeping the Buffer alive. */
  bytesOutFromReads: number
  /** Bytes of reads delivered to `autoRelease` handlers whose Buffers were detached (emptied)
   * when the handler returned, their memory returned at once. */
  bytesReleased: number
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
    bytesOutFromReads: m[MetricsSlot.BytesFromReads],
    bytesReleased: m[MetricsSlot.BytesReleased],
    channels: m[MetricsSlot.Channels],
  }
}

export class ChannelHub {
  readonly native: NativeChannels
  /** The channels the native side knows, by id. */
  readonly #channels = new Map<number, Channel>()
  /** Channels the native side forgot in this check phase and the one before (see `forgotten`). */
  #forgotten = new Map<number, Channel>()
  #forgottenBefore = new Map<number, Channel>()
  #sweeping = false
  /** Ages the forgotten channels, once per check phase while any are left. */
  readonly #sweep = (): void => {
    this.#forgottenBefore = this.#forgotten
    this.#forgotten = new Map()
    this.#sweeping = this.#forgottenBefore.size > 0
    if (this.#sweeping) setImmediate(this.#sweep)
  }
  /** A direct-mapped cache in front of `#channels` (ids are sequential: few collisions). */
  readonly #channelCache: Array<Channel | undefined> = new Array<Channel | undefined>(CHANNEL_CACHE).fill(undefined)
  readonly #stream: OpStream
  readonly #tokens = new Tokens()
  readonly #promises: Promises
  #nextContext = 1

  /** What JS's queued writes count towards writability (see `writability.ts`). */
  readonly writability: WritabilityCounter

  constructor(readonly loop: EventLoop) {
    checkWire()
    const events = new Float64Array(EVENT_CAPACITY * RecordField.Length)
    const ops = new Float64Array(1 + OP_CAPACITY * RecordField.Length)
    const arena = Buffer.allocUnsafeSlow(ARENA_BYTES)
    const state = new Float64Array(WritabilitySlot.Length)
    this.native = new NativeChannels(loop._native, events, ops, arena, state)
    this.writability = new WritabilityCounter(this.native, ops, state)
    const stream = (this.#stream = new OpStream(this.native, ops, arena, this.writability, this.#tokens))
    this.#promises = new Promises(
      (id) => {
        stream.sync()
        return this.native.cancelPromise(id)
      },
      (id, error) => {
        if (error === null) stream.op(WireKind.CompletePromise, 0, 0, id, Outcome.Success, 0)
        else stream.op(WireKind.CompletePromise, 0, stream.errorStrings(error), id, Outcome.JsError, this.#tokens.lend(error))
      },
    )
    const delivery = new Delivery(this, events, stream, this.#tokens, this.#promises)
    // Event records arrive through the loop's one dispatch function (DispatchKind.Channels).
    loop._onChannelEvents = (n, arena, strings, base, segments) => delivery.dispatch(n, arena, strings, base, segments)
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

  /** @internal A channel another thread's server accepted and handed to this loop. */
  acceptRemote(id: number): void {
    const ch = new ChannelClass(this, id, undefined)
    publishServerSocket(ch)
    if (initialize(ch, this.remoteInit)) {
      ch.pipeline._compact()
      this.register(ch)
    }
  }

  /** Adds a channel the native side made (its constructor calls this). */
  addChannel(ch: Channel): void {
    this.#channels.set(ch.id, ch)
    this.#channelCache[ch.id & (CHANNEL_CACHE - 1)] = ch
  }

  /**
   * The live channel `id` of this hub. (Its slot is `id & (CHANNEL_CACHE - 1)`, as `%` would
   * give for ids below 2 ** 53: a record's id is read from a Float64Array, and `%` of a double
   * is a call to fmod where `&` is a truncation and a mask.)
   */
  channel(id: number): Channel | undefined {
    const cached = this.#channelCache[id & (CHANNEL_CACHE - 1)]
    if (cached !== undefined && cached.id === id) return cached
    const ch = this.#channels.get(id)
    if (ch !== undefined) this.#channelCache[id & (CHANNEL_CACHE - 1)] = ch
    return ch
  }

  /** @internal Channel `id` leaves the hub (the native side forgot it); returns it. */
  forgetChannel(id: number): Channel | undefined {
    const ch = this.#channels.get(id)
    this.#channels.delete(id)
    if (this.#channelCache[id & (CHANNEL_CACHE - 1)]?.id === id) this.#channelCache[id & (CHANNEL_CACHE - 1)] = undefined
    if (ch !== undefined) {
      this.#forgotten.set(id, ch)
      if (!this.#sweeping) {
        this.#sweeping = true
        setImmediate(this.#sweep)
      }
    }
    return ch
  }

  /**
   * @internal Channel `id` if the native side forgot it lately. An op JS made before it learned
   * of the forget fails natively after it (hub.rs `fail_promise`), in the next delivery at the
   * latest: the record comes after the forget's, in the same poll phase or the next. A channel
   * stays here until two check phases have passed, then only its closures hold it.
   */
  forgotten(id: number): Channel | undefined {
    return this.#forgotten.get(id) ?? this.#forgottenBefore.get(id)
  }

  nextContextId(): number {
    return this.#nextContext++
  }

  registerContext(ctx: ChannelHandlerContext): void {
    const ch = ctx.pipeline.channel
    const all = ch._contexts
    if (all === undefined) ch._contexts = ctx // (the usual one JS handler: no array)
    else if (Array.isArray(all)) all.push(ctx)
    else ch._contexts = [all, ctx]
  }

  // ---- native calls (ordered after the ops buffered so far) ----

  #call<T>(fn: () => T): T {
    if (this.#stream.holdsRefs()) this.#stream.applyNow()
    return fn()
  }

  nativeAdd(ch: Channel, pos: number, base: string, ctx: ChannelHandlerContext): void {
    if (!ch._known) return
    // (as `#call`, without a closure: a `childHandler` adds handlers for every connection)
    if (this.#stream.holdsRefs()) this.#stream.applyNow()
    if (ctx._kind === Kind.Js) {
      this.native.addJs(ch.id, pos, base, ctx.name, ctx._id, takes(ctx))
      return
    }
    const n = ctx.nativeHandler!
    n._attach(ch)
    this.native.addNative(ch.id, pos, base, ctx.name, n._kind, n._params, n._delimiters)
  }

  /** The names of the native pipeline's handlers (empty once the native side forgot the channel). */
  nativeNames(ch: Channel): string[] {
    return ch._known ? this.#call(() => this.native.handlerNames(ch.id)) : []
  }

  nativeRemove(ch: Channel, name: string): void {
    if (ch._known) this.#call(() => this.native.remove(ch.id, name))
  }

  nativeReplace(ch: Channel, old: string, ctx: ChannelHandlerContext): void {
    if (!ch._known) return
    const n = ctx.nativeHandler
    n?._attach(ch)
    this.#call(() => this.native.replace(ch.id, old, ctx.name, n ? n._kind : 0, ctx._id, n ? n._params : [], n?._delimiters, n ? 0 : takes(ctx)))
  }

  // ---- events and operations leaving JS (`ch._known` false: the native side forgot the channel) ----

  /** An inbound event leaving JS at context `ctx` (0: the head) for the native pipeline. */
  sendInbound(ch: Channel, ctx: number, kind: PipelineEvent, arg: unknown): void {
    if (!ch._known) return
    const s = this.#stream
    switch (kind) {
      case PipelineEvent.ChannelRead: {
        s.encode(arg, WireKind.ReadBytes, WireKind.ReadBig, WireKind.ReadValue)
        s.op(s.kind, ch.id, ctx, s.a, s.b, 0)
        break
      }
      case PipelineEvent.UserEventTriggered:
        s.op(WireKind.UserEvent, ch.id, ctx, this.#tokens.lend(arg), UserEventKind.Token, 0)
        break
      case PipelineEvent.ExceptionCaught:
        s.op(WireKind.Exception, ch.id, ctx, this.#tokens.lend(arg), s.errorStrings(arg), 0)
        break
      default:
        s.op(WIRE_OF_EVENT[kind], ch.id, ctx, 0, 0, 0)
    }
    if (s.holdsRefs()) s.applyNow()
  }

  /** An outbound operation leaving JS at context `ctx` (0: the tail) for the native pipeline. */
  sendOutbound(ch: Channel, ctx: number, kind: PipelineEvent, msg: unknown, promise: ChannelPromise | undefined): void {
    // Cancelled before it left JS: the operation does nothing (Netty's isNotValidPromise).
    // (`=== true`, `=== false` on these booleans: a compare where a bare test is a full
    // ToBoolean in TurboFan's code, twice per writeAndFlush.)
    if (promise !== undefined && promise.isCancelled === true) {
      if (kind === PipelineEvent.Write) dropUnsent(msg)
      return
    }
    if (ch._known === false) {
      if (kind === PipelineEvent.Write || kind === PipelineEvent.Close) {
        const closed = errorOf('ERR_CHANNEL_CLOSED', `channel ${ch.id} is closed`, ch.id, closeCauses.get(ch))
        if (kind === PipelineEvent.Close) promise?._complete({ ok: true })
        else {
          dropUnsent(msg)
          promise?._complete({ ok: false, error: closed })
        }
      }
      return
    }
    const s = this.#stream
    if (kind === PipelineEvent.Write) {
      // A string written to a WebSocket channel is a text message (src/ws.ts).
      if (typeof msg === 'string' && isWebSocketChannel(ch)) msg = new TextWebSocketFrame(msg)
      s.encode(msg, WireKind.WriteBytes, WireKind.WriteBig, WireKind.WriteValue)
      const k = s.kind
      const a = s.a
      const b = s.b
      // A RESP/HTTP message too big for the arena travels as a big chunk (`b` = -1).
      const size = k === WireKind.WriteValue ? VALUE_SIZE : k === WireKind.WriteFile ? 0 : (b < 0 ? s.big[a].length : b) + (k === WireKind.WriteHttp ? s.lentBytes : 0)
      s.op(k, ch.id, ctx, a, b, this.#promises.idOf(promise))
      this.writability.count(ch, size)
    } else {
      s.op(WIRE_OF_EVENT[kind], ch.id, ctx, 0, 0, kind === PipelineEvent.Close ? this.#promises.idOf(promise) : 0)
    }
  }

  /** Registers channel `ch` on its loop (after its initializer ran). */
  register(ch: Channel): void {
    this.#stream.op(WireKind.Register, ch.id, 0, 0, 0, 0)
  }

  /** A JS promise id for a native call that completes it (connect, bind, shutdownOutput). */
  promiseFor(p: ChannelPromise): number {
    return this.#promises.idOf(p)
  }

  /** Applies the buffered ops now (before a direct native call that must see them). */
  sync(): void {
    this.#stream.sync()
  }
}
