/**
 * The native → JS half of a loop's hub: one delivery per loop iteration brings the event
 * records of all the loop's channels (crates/node/src/channel/delivery.rs); each record is
 * routed to its JS context's pipeline, or completes a promise, makes or forgets a channel.
 *
 * Ground rules (the loop's JS thread only):
 * - Consecutive records of one channel run in that channel's async context (the context that
 *   made it: the connect() call, or the server's bind() for accepted channels).
 * - Ops JS makes during a delivery are applied when it returns (`OpStream.delivering`); big
 *   chunks and strings go with the batch at once, as a direct native call would need them.
 * - One bad record must not stop the others: a throw while routing one is reported, and the
 *   next record goes on (handler errors themselves are routed by the pipeline).
 */
import { Buffer } from 'node:buffer' // the module's binding, not the global's getter on every use (arena-view.ts)
import type { Channel } from './channel'
import type { ChannelHandlerContext } from './context'
import { NetloopError } from './errors'
import { ChannelInputShutdownEvent, idleEvent } from './handlers'
import { readEnd, readValue } from './resp'
import { viewsOf } from './arena-view'
import { readHttp } from './http-wire'
import { readWs } from './ws'
import { handshakeEvent } from './ws-client'
import { SslCloseCompletionEvent, SslHandshakeCompletionEvent, tlsHandlerOf } from './tls'
import { haproxyMessage } from './haproxy'
import { publishClose } from './diagnostics'
import type { ChannelHub } from './hub'
import type { Promises, Tokens } from './hub-refs'
import { applyHolding, type OpStream } from './op-stream'
import { ErrorIndex, Outcome, PromiseId, RecordField, ServerId, UserEventKind, WireKind } from './protocol'
import { EVENT_OF_WIRE } from './event-wire'
import { PipelineEvent } from './events'

/** A NetloopError naming its channel (and its cause, if given). */
export function errorOf(code: string, message: string, channel: number, cause?: unknown): NetloopError {
  const e = new NetloopError(code, message)
  if (channel) (e as NetloopError & { channelId?: number }).channelId = channel
  if (cause !== undefined) Object.defineProperty(e, 'cause', { value: cause, writable: true, configurable: true })
  return e
}

/** The error that closed a channel, if one did (Netty's initial close cause). */
export const closeCauses = new WeakMap<Channel, unknown>()

/**
 * A read record's `c` when JS may give its message back to the codec in front
 * (crates/wire/src/held.rs).
 */
const HOLDABLE = 1

export class Delivery {
  /** The large reads of the delivery being dispatched (see `dispatch`). */
  #segments: Buffer[] | undefined = undefined
  /** Where the delivery's bytes start in its arena (see `dispatch`). */
  #base = 0

  constructor(
    readonly hub: ChannelHub,
    /** The records of a delivery, shared with the native side. */
    readonly events: Float64Array,
    readonly stream: OpStream,
    readonly tokens: Tokens,
    readonly promises: Promises,
  ) {}

  /**
   * One delivery: `count` records in the events array, their bytes in `arena` or, when `base`
   * is not negative, in `arena` from `base` on (a small batch copied into the thread's read
   * pool, `crates/node/src/channel/delivery.rs`): record offsets are then relative to `base`,
   * added where the arena is read (no view of the pool made per delivery). Large reads come as
   * Buffers of their own in `segments` (a read record's `c` - 1).
   */
  dispatch(count: number, arena: Buffer | undefined, strings: string[] | undefined, base: number | undefined, segments: Buffer[] | undefined): void {
    this.#base = base !== undefined && base >= 0 ? base : 0
    this.#segments = segments
    const stream = this.stream
    stream.delivering++
    try {
      const ev = this.events
      let i = 0
      while (i < count) {
        const chan = ev[i * RecordField.Length + RecordField.Channel]
        let j = i + 1
        while (j < count && ev[j * RecordField.Length + RecordField.Channel] === chan) j++
        const ch = chan === 0 ? undefined : this.hub.channel(chan)
        // (`_scope`: the resource once made, a field rather than the getter's call)
        if (ch !== undefined) (ch._scope ?? ch._resource).runInAsyncScope(this.#routeRange, this, ch, i, j, arena, strings)
        else this.#routeRange(undefined, i, j, arena, strings)
        i = j
      }
    } finally {
      stream.delivering--
      this.#segments = undefined
      if (stream.holdsRefs()) stream.applyNow()
      applyHolding()
    }
  }

  #routeRange(ch: Channel | undefined, from: number, to: number, arena: Buffer | undefined, strings: string[] | undefined): void {
    const ev = this.events
    for (let i = from; i < to; i++) {
      const at = i * RecordField.Length
      try {
        // The kind as an int32 (a small enum): `#route`'s tests of it are integer compares.
        this.#route(ch, ev[at] | 0, ev[at + 1], ev[at + 2], ev[at + 3], ev[at + 4], ev[at + 5], arena, strings)
      } catch (e) {
        console.error('netloop: channel event dispatch failed:', e)
      }
    }
  }

  /** A native error is four strings: code, message, and its cause's code and message ('' if none). */
  #error(b: number, at: number, strings: string[] | undefined, channel: number): unknown {
    if (b === Outcome.JsError) return this.tokens.peek(at)
    let code = strings?.[at] ?? 'ERR_UNKNOWN'
    const causeCode = strings?.[at + 2]
    let cause: unknown = causeCode ? errorOf(causeCode, strings?.[at + 3] ?? '', channel) : undefined
    // An SNICallback's or ALPNCallback's own error (what it refused with or threw) stays in
    // JS: it is the cause.
    if (cause === undefined && (code === 'ERR_TLS_SNI_CALLBACK' || code === 'ERR_TLS_ALPN_CALLBACK')) {
      const ch = this.hub.channel(channel)
      cause = ch ? tlsHandlerOf(ch)?._helloError : undefined
    }
    // So does what checkServerIdentity returned, whose code (if any) the error takes, as
    // node:tls destroys the socket with that very error.
    if (cause === undefined && code === 'ERR_TLS_SERVER_IDENTITY') {
      const ch = this.hub.channel(channel)
      cause = ch ? tlsHandlerOf(ch)?._identityError : undefined
      const own = (cause as { code?: unknown } | undefined)?.code
      if (typeof own === 'string' && own !== '') code = own
    }
    return errorOf(code, strings?.[at + 1] ?? '', channel, cause)
  }

  /** The JS context `id` of channel `ch` (a scan: a pipeline holds a few contexts). */
  #context(ch: Channel | undefined, id: number): ChannelHandlerContext | undefined {
    if (ch === undefined || ch._known === false) return undefined
    const all = ch._contexts
    if (all === undefined) return undefined
    if (!Array.isArray(all)) return all._id === id ? all : undefined
    for (let i = all.length - 1; i >= 0; i--) if (all[i]._id === id) return all[i]
    return undefined
  }

  /** The user event of a `UserEvent` record (`b` names what it is, `a` carries it). */
  #userEvent(b: UserEventKind, a: number, strings: string[] | undefined, chan: number): unknown {
    switch (b) {
      case UserEventKind.Token:
        return this.tokens.take(a)
      case UserEventKind.Idle:
        return idleEvent(a)
      case UserEventKind.InputShutdown:
        return ChannelInputShutdownEvent.INSTANCE
      case UserEventKind.TlsHandshake:
        return this.#handshakeEvent(a, strings, chan)
      case UserEventKind.HAProxy:
        return haproxyMessage(strings ?? [], a, this.hub.channel(chan))
      case UserEventKind.WebSocketHandshake:
        return handshakeEvent(strings ?? [], a)
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
      // (`=== undefined`, not `!ctx`: a compare, where a bare test compiles to a full ToBoolean)
      if (ctx === undefined) return
      let arg: unknown
      if (kind === WireKind.ReadBytes) arg = c > 0 ? this.#segments![c - 1] : b === 0 ? Buffer.alloc(0) : viewsOf(arena!)(this.#base + a, b)
      else if (kind === WireKind.ReadResp) {
        this.#readResp(ch!, ctx, chan, ctxId, a, b, c === HOLDABLE, arena!)
        return
      } else if (kind === WireKind.ReadHttp) {
        if (c === HOLDABLE && this.#givesBack(ch!, ctx, chan, ctxId, a)) return
        arg = readHttp(arena!, this.#base + a)
      }
      else if (kind === WireKind.ReadWs) {
        arg = readWs(arena!, this.#base + a, b)
        // The handshake is over: the JS view of the pipeline follows the codec's leaving now
        // (no look-up may come to free its context; src/pipeline.ts, `_nativeEdits`).
        if (ctx.pipeline._nativeEdits) ctx.pipeline._followNative()
      } else if (kind === WireKind.ReadValue) arg = this.tokens.take(a)
      else if (kind === WireKind.UserEvent) {
        arg = this.#userEvent(b, a, strings, chan)
        // A WebSocket handshake takes the HTTP codec out natively: the JS view follows now, so
        // an idle connection does not keep its description (src/pipeline.ts, `_nativeEdits`).
        if (b === UserEventKind.WebSocketHandshake) ctx.pipeline._httpCodecLeft()
      }
      else if (kind === WireKind.Exception) arg = this.#error(b, a, strings, chan)
      ctx.pipeline._deliverInbound(ctx, EVENT_OF_WIRE[kind], arg)
      return
    }
    if (kind < WireKind.PromiseDone) {
      const ctx = this.#context(ch, ctxId)
      const promise = c < PromiseId.VoidFiring ? this.promises.lent(c) : c === PromiseId.VoidFiring ? ctx?.pipeline._voidPromise : c === PromiseId.Silent ? ctx?.pipeline._silentPromise : undefined
      if (ctx === undefined) {
        promise?.tryFailure(errorOf('ERR_CHANNEL_CLOSED', 'the handler is gone', chan))
        return
      }
      let msg: unknown
      if (kind === WireKind.WriteBytes) msg = b === 0 ? Buffer.alloc(0) : viewsOf(arena!)(this.#base + a, b)
      else if (kind === WireKind.WriteValue) msg = this.tokens.take(a)
      ctx.pipeline._deliverOutbound(ctx, EVENT_OF_WIRE[kind], msg, promise)
      return
    }
    this.#channelEvent(kind, chan, a, b, c, strings)
  }

  /**
   * A `ReadResp` record: the RESP values of one read (a run of commands) back to back in
   * `b` bytes from `a`, each a `channelRead` of its own, in order. A holdable run is given
   * back from the first value JS does not start on (`#givesBack`: the native side splits the
   * run there, crates/wire/src/held.rs).
   */
  #readResp(ch: Channel, ctx: ChannelHandlerContext, chan: number, ctxId: number, a: number, b: number, holdable: boolean, arena: Buffer): void {
    const base = this.#base
    const end = base + a + b
    let at = base + a
    if (holdable && this.#givesBack(ch, ctx, chan, ctxId, a)) return
    const pipeline = ctx.pipeline
    // The channel's count of JS writes, read once (a getter that would run per command; made
    // only where it is needed, as everywhere).
    const writes = holdable ? ch._writes : undefined
    for (;;) {
      const arg = readValue(arena, at)
      at = readEnd()
      pipeline._deliverInbound(ctx, PipelineEvent.ChannelRead, arg)
      if (at >= end) return
      // The next value goes where the next record would have gone: nowhere if the context left.
      if (ctx._removed && this.#context(ch, ctxId) !== ctx) return
      // The first value went through `#givesBack`: none of this record was given back yet,
      // so only the channel's writability decides (JS's own count first).
      if (writes !== undefined && !writes.writable && !ch.isWritable && this.hub.native.holdBack(chan, ctxId, at - base)) {
        ctx._holding = true
        return
      }
    }
  }

  /**
   * A codec's read (a RESP command, an HTTP request) that arrived in this batch with others:
   * once the channel turned unwritable (the replies JS wrote to the reads before passed the
   * high water mark), it goes back to the codec, which fires it again when the channel is
   * writable, and so does every later read of the same firing, so that the order is kept.
   * True if it went back.
   */
  #givesBack(ch: Channel, ctx: ChannelHandlerContext, chan: number, ctxId: number, at: number): boolean {
    const native = this.hub.native
    if (ctx._holding) {
      if (native.holdsFiring(chan, ctxId)) return native.holdBack(chan, ctxId, at)
      ctx._holding = false
    }
    // JS's own count first (exact once a write of JS crossed the mark), then the native state.
    if (ch._writes.writable || ch.isWritable) return false
    if (!native.holdBack(chan, ctxId, at)) return false
    ctx._holding = true
    return true
  }

  /** A record about a channel or a promise rather than for a pipeline. */
  #channelEvent(kind: WireKind, chan: number, a: number, b: number, c: number, strings: string[] | undefined): void {
    const hub = this.hub
    switch (kind) {
      case WireKind.PromiseDone: {
        if (a === PromiseId.VoidFiring) {
          // A `voidPromise()` write to a channel the native side forgot before the op reached
          // it: the failure goes to that channel's pipeline, as when JS already knew.
          const ch = hub.channel(chan) ?? hub.forgotten(chan)
          ch?.pipeline._voidPromise._complete({ ok: false, error: this.#error(b, c, strings, chan) as Error })
          return
        }
        const p = this.promises.take(a)
        if (p) p._complete(b === Outcome.Success ? { ok: true } : { ok: false, error: this.#error(b, c, strings, chan) as Error })
        return
      }
      case WireKind.NewChannel:
        if (a === ServerId.Remote) hub.acceptRemote(chan)
        else hub.servers.get(a)?.accept(hub, chan)
        return
      case WireKind.Closed: {
        const ch = hub.channel(chan)
        if (!ch) return
        if (b !== Outcome.Success) closeCauses.set(ch, this.#error(b, a, strings, chan))
        // What native handlers know stays readable after the close (channel.tls, channel.haproxy).
        ch.pipeline._forEachNative((h) => h._onClosed())
        ch._onClosed()
        publishClose(ch, closeCauses.get(ch))
        return
      }
      case WireKind.Unhandled: {
        const ch = hub.channel(chan)
        if (ch) ch.pipeline._reportUnhandled(this.#error(b, a, strings, chan))
        return
      }
      case WireKind.TlsHandshake: {
        const ch = hub.channel(chan)
        if (ch) tlsHandlerOf(ch)?._handshakeDone(this.#handshakeEvent(a, strings, chan))
        return
      }
      case WireKind.TlsClientHello: {
        const ch = hub.channel(chan)
        if (ch) tlsHandlerOf(ch)?._askClientHello(a >= 0 ? strings![a] : undefined, strings!.slice(b, b + c))
        return
      }
      case WireKind.TlsServerIdentity: {
        const ch = hub.channel(chan)
        if (ch) tlsHandlerOf(ch)?._checkServerIdentity(strings![a])
        return
      }
      case WireKind.Release:
        this.tokens.release(a)
        return
      case WireKind.Forget: {
        const ch = hub.forgetChannel(chan)
        if (ch) {
          ch._known = false
          ch.pipeline._destroy()
        }
        return
      }
    }
  }
}
