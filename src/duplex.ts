/**
 * `channel.toDuplex()`: a `stream.Duplex` over a channel, for the libraries that take a
 * socket-like stream (node:http's `server.emit('connection', duplex)`, `tls.TLSSocket`, `ws`).
 *
 * Ground rules (everything runs on the channel's loop thread, the thread that made the loop):
 * - The duplex is a JS handler added last in the pipeline: it sees what the handlers before it
 *   pass on (bytes from the socket, or decoded values in object mode) and writes from its own
 *   place, through the handlers before it.
 * - Reads: each message is `push`ed. When `push()` returns false (the consumer is behind) the
 *   channel's `autoRead` is turned off; the stream's next `_read()` turns it on again. A
 *   channel made with `autoRead: false` starts reading at the stream's first `_read()`.
 * - Writes: a write callback is called at once while the channel is writable and held while it
 *   is not (its pending bytes passed the high water mark), until `channelWritabilityChanged`
 *   says it is writable again. The writable budget is the channel's `bytesBeforeUnwritable`,
 *   counted down by each write and asked afresh (one native call) when it runs out.
 *   `write()` returns false while a callback is held; `'drain'` follows.
 * - Ends: `end()` shuts the output down (FIN after queued writes). The duplex turns the
 *   channel's `allowHalfClosure` on: the peer's FIN arrives as `ChannelInputShutdownEvent` and
 *   ends the readable side; without `allowHalfOpen` the writable side is then ended too, and
 *   the channel closes once both sides are done (as a net.Socket). The channel's close ends the
 *   readable side and finishes the writable one; `destroy(err)` closes the channel, and an
 *   error reaching the handler (`exceptionCaught`) destroys the stream with it.
 */
import { Duplex } from 'node:stream'
import type { AddressInfo } from 'node:net'
import type { Channel } from './channel'
import type { ChannelHandlerContext } from './context'
import { NetloopError, checkBoolean, checkInteger, invalidArgType } from './errors'
import { ChannelInputShutdownEvent } from './handlers'
import { tlsHandlerOf } from './tls'

/** Options of `channel.toDuplex()`. */
export interface ChannelDuplexOptions {
  /**
   * Keep the writable side open after the readable side ended (node:net's `allowHalfOpen`,
   * default false: the duplex ends its writable side, FIN after what was written, then closes).
   */
  allowHalfOpen?: boolean
  /** Readable values instead of bytes (for handlers before the duplex that decode messages). */
  readableObjectMode?: boolean
  /** The readable buffer's high water mark (default 16 KiB, or 16 values in object mode). */
  readableHighWaterMark?: number
  /** The writable buffer's high water mark (default 16 KiB). */
  writableHighWaterMark?: number
  /** The handler's name in the pipeline (default: generated, `ChannelDuplexHandler#n`). */
  name?: string
}

type Callback = (error?: Error | null) => void

/** The duplex's place in the pipeline. */
class ChannelDuplexHandler {
  constructor(readonly duplex: ChannelDuplex) {}
  handlerAdded(ctx: ChannelHandlerContext): void {
    this.duplex._ctx = ctx
  }
  channelRead(_ctx: ChannelHandlerContext, msg: unknown): void {
    this.duplex._onRead(msg)
  }
  userEventTriggered(ctx: ChannelHandlerContext, event: unknown): void {
    if (event === ChannelInputShutdownEvent.INSTANCE) this.duplex._onInputShutdown()
    ctx.fireUserEventTriggered(event)
  }
  channelWritabilityChanged(ctx: ChannelHandlerContext): void {
    this.duplex._onWritabilityChanged()
    ctx.fireChannelWritabilityChanged()
  }
  channelInactive(ctx: ChannelHandlerContext): void {
    this.duplex._onInactive()
    ctx.fireChannelInactive()
  }
  exceptionCaught(_ctx: ChannelHandlerContext, error: Error): void {
    this.duplex.destroy(error)
  }
}

function closedError(ch: Channel): NetloopError {
  const e = new NetloopError('ERR_CHANNEL_CLOSED', `channel ${ch.id} is closed`)
  e.channelId = ch.id
  return e
}

/** A `stream.Duplex` over a channel, shaped like a `net.Socket` (see `Channel.toDuplex`). */
export class ChannelDuplex extends Duplex {
  /** The channel under the stream. */
  readonly channel: Channel
  /** Bytes (or values) received through the stream. */
  bytesRead = 0
  /** Bytes handed to the channel through the stream. */
  bytesWritten = 0
  /** node:net's `connecting`: always false (the stream is made over a channel that exists). */
  readonly connecting = false
  /** The inactivity timeout set with `setTimeout` (ms; undefined: none). */
  timeout: number | undefined
  /** @internal */ _ctx: ChannelHandlerContext | undefined
  #budget: number
  #held: Callback | undefined
  #owesDrain = false
  #readPaused = false
  #inactive = false
  #inputEnded = false
  #timer: NodeJS.Timeout | undefined
  #remote: AddressInfo | undefined
  #local: AddressInfo | undefined

  /** @internal Use `channel.toDuplex()`. */
  constructor(channel: Channel, options: ChannelDuplexOptions = {}) {
    if (options === null || typeof options !== 'object') throw invalidArgType('options', 'object', options)
    const allowHalfOpen = options.allowHalfOpen ?? false
    checkBoolean('allowHalfOpen', allowHalfOpen)
    if (options.readableObjectMode !== undefined) checkBoolean('readableObjectMode', options.readableObjectMode)
    for (const k of ['readableHighWaterMark', 'writableHighWaterMark'] as const) {
      if (options[k] !== undefined) checkInteger(k, options[k], 0, 0x7fffffff)
    }
    if (options.name !== undefined && (typeof options.name !== 'string' || options.name.length === 0)) throw invalidArgType('name', 'non-empty string', options.name)
    super({
      allowHalfOpen,
      readableObjectMode: options.readableObjectMode ?? false,
      readableHighWaterMark: options.readableHighWaterMark,
      writableHighWaterMark: options.writableHighWaterMark,
      decodeStrings: true,
    })
    this.channel = channel
    // The peer's FIN ends the readable side (as on a net.Socket) instead of closing the channel.
    if (channel.isOpen) channel.setOption('allowHalfClosure', true)
    this.#budget = channel.isOpen ? this.#room() : 0
    // A channel that does not read yet (autoRead off) starts reading when the stream is read.
    this.#readPaused = channel.isOpen && channel.getOption('autoRead') === false
    const handler = new ChannelDuplexHandler(this)
    if (options.name !== undefined) channel.pipeline.addLast(options.name, handler)
    else channel.pipeline.addLast(handler)
    if (!channel.isOpen) this._onInactive()
  }

  // ---- reading ----

  /** @internal */
  _onRead(msg: unknown): void {
    this.bytesRead += msg instanceof Uint8Array ? msg.byteLength : typeof msg === 'string' ? Buffer.byteLength(msg) : 1
    if (this.#timer !== undefined) this.#timer.refresh()
    if (!this.push(msg) && !this.#readPaused && !this.#inactive) {
      this.#readPaused = true
      this.#setAutoRead(false)
    }
  }

  override _read(): void {
    if (this.#readPaused) {
      this.#readPaused = false
      if (!this.#inactive) this.#setAutoRead(true)
    }
  }

  #setAutoRead(on: boolean): void {
    try {
      this.channel.setOption('autoRead', on)
    } catch {
      // The channel is gone: nothing more to read.
    }
  }

  /** @internal The peer shut its output down (`allowHalfClosure`). */
  _onInputShutdown(): void {
    if (this.#inputEnded) return
    this.#inputEnded = true
    if (!this.destroyed) this.push(null)
  }

  /** @internal The channel closed. */
  _onInactive(): void {
    if (this.#inactive) return
    this.#inactive = true
    this.#clearTimer()
    const held = this.#held
    this.#held = undefined
    // Writes that could not go out fail the stream, as a reset socket does.
    if (held) held(closedError(this.channel))
    this._onInputShutdown()
    if (!this.writableEnded && !this.destroyed) this.end()
  }

  // ---- writing ----

  override write(chunk: unknown, encoding?: BufferEncoding | Callback, cb?: Callback): boolean {
    const ok = super.write(chunk, encoding as BufferEncoding, cb)
    if (ok && this.#held !== undefined) {
      // The channel is over its high water mark: say so now, and owe a 'drain'.
      this.#owesDrain = true
      return false
    }
    return ok
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, cb: Callback): void {
    if (this.#inactive || this._ctx === undefined) return cb(closedError(this.channel))
    this._ctx.write(chunk)
    this._ctx.flush()
    this.#wrote(chunk.byteLength, cb)
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, cb: Callback): void {
    if (this.#inactive || this._ctx === undefined) return cb(closedError(this.channel))
    let n = 0
    for (const { chunk } of chunks) {
      this._ctx.write(chunk)
      n += chunk.byteLength
    }
    this._ctx.flush()
    this.#wrote(n, cb)
  }

  #wrote(n: number, cb: Callback): void {
    this.bytesWritten += n
    if (this.#timer !== undefined) this.#timer.refresh()
    this.#budget -= n
    if (this.#budget <= 0) this.#budget = this.#room()
    if (this.#budget > 0) cb()
    else this.#held = cb
  }

  /** The channel's `bytesBeforeUnwritable`; a channel gone meanwhile fails the writes instead (its close follows). */
  #room(): number {
    try {
      return this.channel.bytesBeforeUnwritable
    } catch {
      return 1
    }
  }

  /** @internal */
  _onWritabilityChanged(): void {
    if (this.#held === undefined || !this.channel.isWritable) return
    this.#budget = this.#room()
    const cb = this.#held
    this.#held = undefined
    cb()
    if (this.#owesDrain && this.#held === undefined && !this.writableNeedDrain) {
      this.#owesDrain = false
      this.emit('drain')
    }
  }

  override _final(cb: Callback): void {
    if (this.#inactive) return cb()
    this.channel.shutdownOutput().then(
      () => cb(),
      (e: unknown) => cb(this.channel.isActive ? (e as Error) : null),
    )
  }

  override _destroy(error: Error | null, cb: Callback): void {
    this.#clearTimer()
    const held = this.#held
    this.#held = undefined
    // A write waiting for writability fails (as libuv cancels a socket's pending writes).
    if (held) held(error ?? closedError(this.channel))
    if (this.#inactive) return cb(error)
    const done = () => cb(error)
    this.channel.close().then(done, done) // closed either way (a close handler's error is not the stream's)
  }

  /** node:net's `destroySoon()`: ends the writable side, then closes once it finished. */
  destroySoon(): void {
    if (this.writable) this.end()
    if (this.writableFinished) this.destroy()
    else this.once('finish', () => this.destroy())
  }

  // ---- net.Socket's members ----

  /** The remote address (`'127.0.0.1'`), kept after the close. */
  get remoteAddress(): string | undefined {
    return this.#remoteInfo()?.address
  }
  get remotePort(): number | undefined {
    return this.#remoteInfo()?.port
  }
  /** `'IPv4'` or `'IPv6'`. */
  get remoteFamily(): string | undefined {
    return this.#remoteInfo()?.family
  }
  get localAddress(): string | undefined {
    return this.#localInfo()?.address
  }
  get localPort(): number | undefined {
    return this.#localInfo()?.port
  }
  get localFamily(): string | undefined {
    return this.#localInfo()?.family
  }
  /** node:net's `address()`: the local end. */
  address(): AddressInfo | Record<string, never> {
    return this.#localInfo() ?? {}
  }

  #remoteInfo(): AddressInfo | undefined {
    if (this.#remote === undefined && !this.#inactive) this.#remote = this.channel.remoteAddress
    return this.#remote
  }
  #localInfo(): AddressInfo | undefined {
    if (this.#local === undefined && !this.#inactive) this.#local = this.channel.localAddress
    return this.#local
  }

  /** True when an `SslHandler` sits in front of the duplex (the stream carries its plaintext). */
  get encrypted(): boolean {
    return tlsHandlerOf(this.channel) !== undefined
  }

  /** `'open'`, `'readOnly'`, `'writeOnly'` or `'closed'`, as node:net's. */
  get readyState(): string {
    if (this.readable && this.writable) return 'open'
    if (this.readable) return 'readOnly'
    if (this.writable) return 'writeOnly'
    return 'closed'
  }

  /** Sets the channel's `tcpNoDelay` (default true). */
  setNoDelay(noDelay = true): this {
    this.#option('tcpNoDelay', noDelay !== false)
    return this
  }

  /** Sets the channel's `soKeepAlive` (the initial delay is the system's). */
  setKeepAlive(enable = false, _initialDelay?: number): this {
    this.#option('soKeepAlive', enable === true)
    return this
  }

  #option(name: 'tcpNoDelay' | 'soKeepAlive', value: boolean): void {
    if (this.#inactive) return
    try {
      this.channel.setOption(name, value)
    } catch {
      // Closed meanwhile: as node:net, nothing to set.
    }
  }

  /**
   * Emits `'timeout'` after `ms` without a read or a write (node:net's `setTimeout`; 0 turns
   * it off). The stream stays open: close it in the listener. The timer does not keep the
   * process alive.
   */
  setTimeout(ms: number, callback?: () => void): this {
    checkInteger('msecs', ms, 0, 0x7fffffff)
    if (callback !== undefined) {
      if (typeof callback !== 'function') throw invalidArgType('callback', 'function', callback)
      if (ms === 0) this.removeListener('timeout', callback)
      else this.once('timeout', callback)
    }
    if (ms === 0) {
      this.#clearTimer()
      this.timeout = undefined
      return this
    }
    this.timeout = ms
    if (this.#inactive || this.destroyed) return this
    this.#clearTimer()
    this.#timer = setTimeout(() => this.emit('timeout'), ms)
    this.#timer.unref()
    return this
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** Lets the process exit while the channel is open (`channel.unref()`). */
  unref(): this {
    if (!this.#inactive) this.channel.unref()
    return this
  }

  /** Undoes `unref()`. */
  ref(): this {
    if (!this.#inactive) this.channel.ref()
    return this
  }
}
