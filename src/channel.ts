/**
 * `Channel`: a TCP connection (or listener) on one loop, with its pipeline. Everything a
 * channel does runs on its loop's thread (here: the thread that made the loop).
 *
 * The class declares every member it has: the ones that belong to a feature (`tls`,
 * `haproxy`, `toDuplex`, `messages`) delegate to that feature's module, which keeps what it
 * remembers of the channel in a field here (`_tlsInfo`, `_haproxy`; what few channels use is in
 * one side object, `ChannelExtras`, made on first use). No module adds to the
 * prototype, so the shape does not depend on what was imported. The feature modules import
 * `Channel` as a type only, so importing them from here makes no load-time cycle.
 */
import { AsyncResource } from 'node:async_hooks'
import type { AddressInfo } from 'node:net'
import { NetloopError, fromNative } from './errors'
import { ChannelPipeline } from './pipeline'
import { ChannelPromise } from './promise'
import type { ChannelHub } from './hub'
import type { ChannelHandlerContext } from './context'
import type { EventLoop } from './loop'
import type { Outbound } from './handlers'
import { OPTION_NAMES, decodeOption, encodeOption, type ChannelOptionName } from './options'
import { type ChannelConfig, ChannelExtras, type ServerChannel, configView } from './channel-extras'

export type { ChannelConfig, ServerChannel } from './channel-extras'
import { PipelineEvent } from './events'
import { WriteCount } from './writability'
import { ChannelStateFlag } from './protocol'
import { type TlsInfo, tlsInfo } from './tls-info'
import { type HAProxyMessage, haproxyOf } from './haproxy'
import { ChannelDuplex, type ChannelDuplexOptions } from './duplex'
import { ChannelMessages, type ChannelMessagesOptions } from './messages'

/** Runs `init` for `ch`; a throwing initializer closes the channel and reports the error.
 * @internal */
export function initialize(ch: Channel, init: ((ch: Channel) => void) | undefined): boolean {
  if (!init) return true
  try {
    init(ch)
    return true
  } catch (e) {
    ch.pipeline.fireExceptionCaught(e)
    ch.close()
    return false
  }
}

function parseAddress(s: string | null): AddressInfo | undefined {
  if (!s) return undefined
  const [address, port, family] = s.split('|')
  return { address, port: Number(port), family }
}

export class Channel implements ServerChannel {
  readonly pipeline: ChannelPipeline
  /** The server channel that accepted this one. */
  readonly parent: Channel | undefined
  /** @internal */ readonly _hub: ChannelHub
  /**
   * @internal Its JS contexts, in the order they were made (the hub finds a record's context
   * here); made with the first JS handler (a pipeline of native handlers needs none).
   */
  _contexts: ChannelHandlerContext | ChannelHandlerContext[] | undefined = undefined
  /** @internal True while the native side knows the channel (from its creation to FORGET). */
  _known = true
  #writes: WriteCount | undefined = undefined
  /** @internal `_resource` once made (a field the delivery reads without a getter call). */
  _scope: AsyncResource | undefined = undefined
  #closed = false
  /**
   * @internal The async context its events run in (the context that made the channel; for
   * an accepted one its server's, so it is made there on first use: an idle connection whose
   * handlers are all native never needs one).
   */
  get _resource(): AsyncResource {
    return (this._scope ??= this.parent!._resource.runInAsyncScope(() => new AsyncResource('netloop:Channel')))
  }

  /** @internal What few channels use, made on first use (an idle connection holds none of it). */
  _extras: ChannelExtras | undefined = undefined

  /** @internal The host given to `Bootstrap.connect()` (a TLS client's default server name). */
  get _connectHost(): string | undefined {
    return this._extras?.connectHost
  }
  set _connectHost(v: string | undefined) {
    (this._extras ??= new ChannelExtras()).connectHost = v
  }
  /** @internal The last TLS session read (`tls-info.ts`): `channel.tls` after the close. */
  get _tlsInfo(): TlsInfo | undefined {
    return this._extras?.tlsInfo
  }
  set _tlsInfo(v: TlsInfo | undefined) {
    (this._extras ??= new ChannelExtras()).tlsInfo = v
  }
  /** @internal The PROXY protocol header, once read (`haproxy.ts`): `channel.haproxy` after the close. */
  get _haproxy(): HAProxyMessage | undefined {
    return this._extras?.haproxy
  }
  set _haproxy(v: HAProxyMessage | undefined) {
    (this._extras ??= new ChannelExtras()).haproxy = v
  }

  /** @internal */
  constructor(
    hub: ChannelHub,
    /** The channel's id, unique in the process. */
    readonly id: number,
    parent?: Channel,
  ) {
    this._hub = hub
    this.parent = parent
    // An accepted channel inherits its server's context, as node:net connections do: its
    // resource is made in the server's, on first use (see `_resource`).
    if (parent === undefined) this._scope = new AsyncResource('netloop:Channel')
    this.pipeline = new ChannelPipeline(this)
    hub.addChannel(this)
  }

  /**
   * @internal What the writes JS queued count towards writability (see `writability.ts`);
   * made on first use (an idle connection, or one that only native handlers write to, never
   * needs it).
   */
  get _writes(): WriteCount {
    return (this.#writes ??= new WriteCount())
  }

  /** Resolves when the channel is closed (never rejects). Made on first use. */
  get closeFuture(): Promise<void> {
    const x = (this._extras ??= new ChannelExtras())
    if (x.closeFuture === undefined) {
      x.closeFuture = this.#closed ? Promise.resolve() : new Promise((r) => (x.resolveClose = r))
    }
    return x.closeFuture
  }

  /** The loop this channel is registered on. */
  get eventLoop(): EventLoop {
    return this._hub.loop
  }

  /** @internal The native state flags (a method, not `#state()`: a private method gives every
   * instance a brand field, 8 bytes a channel). */
  _state(): number {
    if (this.#closed && !this._known) return 0
    this._hub.sync()
    return this._hub.native.state(this.id)
  }

  get isOpen(): boolean {
    return (this._state() & ChannelStateFlag.Open) !== 0
  }
  get isActive(): boolean {
    return (this._state() & ChannelStateFlag.Active) !== 0
  }
  /**
   * False once the pending outbound bytes (every write made so far, the ones JS still holds
   * included) passed the high water mark, until they fall below the low one; false too while
   * a user-defined writability flag is off.
   */
  get isWritable(): boolean {
    if (this.#closed && !this._known) return false
    return this._hub.writability.isWritable(this)
  }
  get isRegistered(): boolean {
    return (this._state() & ChannelStateFlag.Registered) !== 0
  }
  /** Bytes that can be written before the channel turns unwritable (0 when unwritable). */
  get bytesBeforeUnwritable(): number {
    if (this.#closed && !this._known) return 0
    return this._hub.writability.bytesBefore(this)[0]
  }
  /** Bytes to drain before the channel turns writable again (0 when writable). */
  get bytesBeforeWritable(): number {
    if (this.#closed && !this._known) return 0
    return this._hub.writability.bytesBefore(this)[1]
  }

  /** The local end, shaped like node:net's `socket.address()`. */
  get localAddress(): AddressInfo | undefined {
    this._hub.sync()
    return parseAddress(this._hub.native.address(this.id, false))
  }
  /** The remote end. */
  get remoteAddress(): AddressInfo | undefined {
    this._hub.sync()
    return parseAddress(this._hub.native.address(this.id, true))
  }

  /** Every option, live: reading asks the channel, setting checks and applies at once. */
  get config(): ChannelConfig {
    const x = (this._extras ??= new ChannelExtras())
    return (x.config ??= configView(this))
  }

  getOption<K extends ChannelOptionName>(name: K): ChannelConfig[K] {
    if (!OPTION_NAMES.includes(name)) encodeOption(name, undefined) // throws: unknown option
    this._hub.sync()
    try {
      return decodeOption(name, this._hub.native.getOption(this.id, name)) as ChannelConfig[K]
    } catch (e) {
      throw fromNative(e)
    }
  }

  setOption<K extends ChannelOptionName>(name: K, value: ChannelConfig[K]): this {
    const v = encodeOption(name, value)
    this._hub.sync()
    try {
      this._hub.native.setOption(this.id, name, v)
    } catch (e) {
      throw fromNative(e)
    }
    if (this.#writes !== undefined) this.#writes.high = -1 // read again (a whole number: NaN would box the field)
    return this
  }

  /** Writes through the whole pipeline (from the tail). See `ChannelHandlerContext.write`. */
  write(msg: Outbound): void
  write(msg: Outbound, promise: ChannelPromise): ChannelPromise
  write(msg: Outbound, promise?: ChannelPromise): ChannelPromise | void {
    this.pipeline._fireOutbound(this.pipeline._tail, PipelineEvent.Write, msg, promise ?? this.pipeline._silentPromise)
    return promise
  }

  writeAndFlush(msg: Outbound): void
  writeAndFlush(msg: Outbound, promise: ChannelPromise): ChannelPromise
  writeAndFlush(msg: Outbound, promise?: ChannelPromise): ChannelPromise | void {
    this.pipeline._fireOutbound(this.pipeline._tail, PipelineEvent.Write, msg, promise ?? this.pipeline._silentPromise)
    this.pipeline._fireOutbound(this.pipeline._tail, PipelineEvent.Flush, undefined, undefined)
    return promise
  }

  flush(): this {
    this.pipeline._fireOutbound(this.pipeline._tail, PipelineEvent.Flush, undefined, undefined)
    return this
  }

  /** Asks for one more read (with `autoRead` off). */
  read(): this {
    this.pipeline._fireOutbound(this.pipeline._tail, PipelineEvent.Read, undefined, undefined)
    return this
  }

  /**
   * Closes the channel through the whole pipeline (pending writes fail with
   * `ERR_CHANNEL_CLOSED`); resolves when closed. A `close` handler that throws or rejects
   * still closes the channel, and then this rejects with its error (as `ctx.close()` does);
   * the returned promise is not reported as an unhandled rejection when nobody awaits it.
   * Given a promise (Netty's `close(promise)`), completes that one and returns it: with
   * `voidPromise()` a failure goes to `exceptionCaught`.
   */
  close(): Promise<void>
  close(promise: ChannelPromise): ChannelPromise
  close(promise?: ChannelPromise): Promise<void> | ChannelPromise {
    if (promise !== undefined) {
      this.pipeline._fireOutbound(this.pipeline._tail, PipelineEvent.Close, undefined, promise)
      return promise
    }
    const p = new ChannelPromise(NaN)
    this.pipeline._fireOutbound(this.pipeline._tail, PipelineEvent.Close, undefined, p)
    const closed = p.promise
    closed.catch(() => undefined) // handled: awaiting it still sees the rejection
    return closed
  }

  /** Half-close: sends FIN after what was flushed; reading goes on. */
  shutdownOutput(): Promise<void> {
    const p = new ChannelPromise(NaN)
    const id = this._hub.promiseFor(p)
    this._hub.sync()
    this._hub.native.shutdownOutput(this.id, id)
    return p.promise
  }

  /** A promise for an outbound operation, to await it. */
  newPromise(): ChannelPromise {
    return this.pipeline._newPromise()
  }

  /** The void promise (Netty's `voidPromise()`): it cannot be awaited, and a failure of the
   * operation it is given to goes to `exceptionCaught`. Writes made without a promise are
   * silent instead (Netty's `write(msg)`). */
  voidPromise(): ChannelPromise {
    return this.pipeline._voidPromise
  }

  /**
   * Netty's user-defined writability: flag `index` (1..31) turned off makes the channel
   * unwritable (with one `channelWritabilityChanged`) whatever its buffer, e.g. for traffic
   * shaping; the channel is writable when its buffer is below the high mark and every flag is on.
   */
  setUserDefinedWritability(index: number, writable: boolean): this {
    if (!Number.isInteger(index) || index < 1 || index > 31) {
      throw new NetloopError('ERR_OUT_OF_RANGE', `The value of "index" is out of range. It must be an integer >= 1 and <= 31. Received ${String(index)}`)
    }
    this._hub.sync()
    try {
      this._hub.native.setUserWritability(this.id, index, writable === true)
    } catch (e) {
      throw fromNative(e)
    }
    return this
  }

  /** Lets the process exit while this channel is open (node:net's `unref()`). */
  unref(): this {
    this._hub.native.setRef(this.id, false)
    return this
  }

  /** Undoes `unref()` (the default: an open channel keeps the process alive). */
  ref(): this {
    this._hub.native.setRef(this.id, true)
    return this
  }

  /** What the channel's `SslHandler` negotiated; undefined before the handshake or without TLS. */
  get tls(): TlsInfo | undefined {
    return tlsInfo(this)
  }

  /** The PROXY protocol header this channel received (its `HAProxyMessageDecoder`'s), once it did. */
  get haproxy(): HAProxyMessage | undefined {
    return haproxyOf(this)
  }

  /**
   * A `stream.Duplex` over this channel, added as a handler at the end of its pipeline; see
   * `ChannelDuplex`. Backpressure maps onto the channel's: `write()` returns false while the
   * channel is unwritable, and a consumer that falls behind turns `autoRead` off.
   */
  toDuplex(options?: ChannelDuplexOptions): ChannelDuplex {
    return new ChannelDuplex(this, options)
  }

  /**
   * The channel's inbound messages as an async iterator (`for await (const m of ch.messages())`),
   * with backpressure: the channel stops reading while the consumer is `highWaterMark`
   * messages behind. Ends when the channel closes; an error in the pipeline rejects it. Make
   * it before data can arrive (in the initializer, or with `autoRead: false`): messages that
   * reached the end of the pipeline before it existed are gone.
   */
  messages<T = Buffer>(options?: ChannelMessagesOptions): ChannelMessages<T> {
    return new ChannelMessages<T>(this, options)
  }

  /** Closes the channel (`await using`); resolves once it is closed. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }

  /** @internal The native side reported the close. */
  _onClosed(): void {
    this.#closed = true
    const x = this._extras
    if (x !== undefined) {
      x.resolveClose?.()
      x.resolveClose = undefined
    }
  }

  toString(): string {
    return `Channel(${this.id})`
  }
}
