/**
 * `WebSocket`: one connection with the `ws` package's surface (version 8), over a netloop
 * channel whose frames, pings and close handshake are native (src/ws.ts, src/ws-client.ts).
 * Both sides: `new WebSocket('ws://host:port/path')` connects (src/ws-client-connect.ts builds
 * the pipeline), and `WebSocketServer` (src/ws-server.ts) makes one per accepted connection.
 *
 * Events (EventEmitter): `open`, `message` (data, isBinary), `ping`, `pong`, `close` (code,
 * reason Buffer), `error`; and the WHATWG form: `addEventListener`, `onopen`/`onmessage`/
 * `onclose`/`onerror`, `binaryType`.
 *
 * Ground rules:
 * - One JS thread: the channel's loop's. Every event comes from the bridge handler, last in
 *   the pipeline, inside a delivery; a listener that throws is reported as an `error` event;
 *   an `error` with no listener (or thrown by one) becomes a process warning, never an
 *   uncaught exception.
 * - `close` is emitted once, when the channel has gone inactive: with the peer's close code
 *   (1005 for a close frame without one) if its close frame came, else 1006.
 * - The state only moves forward: CONNECTING → OPEN → CLOSING → CLOSED (CONNECTING →
 *   CLOSED when the handshake fails).
 */
import { Buffer } from 'node:buffer'
import { EventEmitter } from 'node:events'
import type { Channel } from './channel'
import type { ChannelHandler } from './handlers'
import type { ChannelHandlerContext } from './context'
import { NetloopError } from './errors'
import { BinaryWebSocketFrame, CloseWebSocketFrame, PingWebSocketFrame, PongWebSocketFrame, TextWebSocketFrame } from './ws'
import { WebSocketHandshakeEvent } from './ws-client'
import { addWhatwgListener, handlerProperty, removeWhatwgListener, setHandlerProperty, type WhatwgListener } from './ws-events'
import { type Callback, type SendOptions, type WebSocketData, describe, isSendableCode, toArrayBuffer, toBuffer } from './ws-data'
import { isInTopic, joinTopic, leaveTopic, publishToOthers, topicsJoined } from './ws-socket-topics'
import type { PublishOptions } from './ws-topics'
// A cycle by design: ws-client-connect uses `bridge` from here and this module its `connect`,
// both only when called, so either may load first.
import { connect } from './ws-client-connect'

export type { SendOptions, WebSocketData } from './ws-data'

/** `readyState` values. */
const CONNECTING = 0
const OPEN = 1
const CLOSING = 2
const CLOSED = 3
const STATE_NAMES = ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']

export class WebSocket extends EventEmitter {
  static readonly CONNECTING = CONNECTING
  static readonly OPEN = OPEN
  static readonly CLOSING = CLOSING
  static readonly CLOSED = CLOSED
  readonly CONNECTING = CONNECTING
  readonly OPEN = OPEN
  readonly CLOSING = CLOSING
  readonly CLOSED = CLOSED

  /** How binary messages are handed over: Buffers (default) or ArrayBuffers. */
  binaryType: 'nodebuffer' | 'arraybuffer' = 'nodebuffer'

  #state = CONNECTING
  #ch: Channel | undefined
  #url: string
  #protocol = ''
  #extensions = ''
  #closeCode: number | undefined
  #closeReason = Buffer.alloc(0)
  #closeEmitted = false
  #fragments: Buffer[] = []
  #fragmentsBinary = false
  #unref = false
  /** @internal The name of the native WebSocket handler in the pipeline (`terminate` removes it). */
  _wsName = 'ws'
  /** @internal Set by the client connector: aborts a connection still being made. */
  _abort: ((error: Error) => void) | undefined

  /**
   * A client connection to `address` (`ws:`, `wss:`, `http:`, `https:`), made as
   * src/ws-client-connect.ts describes; `null` makes the server-side object
   * `WebSocketServer` attaches.
   */
  constructor(address: string | URL | null, protocols?: string | string[] | Record<string, unknown>, options?: Record<string, unknown>) {
    super()
    this.#url = address === null ? '' : String(address)
    if (address !== null) {
      if (protocols !== undefined && !Array.isArray(protocols) && typeof protocols === 'object') {
        options = protocols
        protocols = undefined
      }
      connect(this, String(address), protocols === undefined ? [] : Array.isArray(protocols) ? protocols : [protocols], options ?? {})
    }
  }

  /** Connects and resolves once open (rejects with the handshake's or the connection's error). */
  static connect(address: string | URL, options: Record<string, unknown> & { protocols?: string[] } = {}): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const { protocols, ...rest } = options
      const ws = new WebSocket(address, protocols ?? [], rest)
      const onError = (e: Error): void => {
        ws.off('open', onOpen)
        reject(e)
      }
      const onOpen = (): void => {
        ws.off('error', onError)
        resolve(ws)
      }
      ws.once('open', onOpen)
      ws.once('error', onError)
    })
  }

  get readyState(): number {
    return this.#state
  }
  /** The subprotocol the server chose ('' for none). */
  get protocol(): string {
    return this.#protocol
  }
  /** The URL a client connected to ('' on a server's side). */
  get url(): string {
    return this.#url
  }
  /**
   * A client's extensions in use, as the server's answer named them (`permessage-deflate;
   * ...` when agreed, '' for none). '' on a server's side (the agreement stays native).
   */
  get extensions(): string {
    return this.#extensions
  }
  /** The channel under this connection (netloop's; undefined while a client connects). */
  get channel(): Channel | undefined {
    return this.#ch
  }

  /**
   * Bytes written and not yet handed to the kernel: the channel's outbound buffer as its
   * water marks count it (each queued write counts its size plus a fixed overhead, as Netty's
   * `ChannelOutboundBuffer` does). 0 once closed.
   */
  get bufferedAmount(): number {
    const ch = this.#ch
    if (ch === undefined || !ch.isOpen) return 0
    const before = ch.bytesBeforeUnwritable
    if (before > 0) return Math.max(0, ch.config.writeBufferHighWaterMark + 1 - before)
    const drain = ch.bytesBeforeWritable
    return drain > 0 ? drain - 1 + ch.config.writeBufferLowWaterMark : ch.config.writeBufferHighWaterMark
  }

  /** Lets the process exit while this connection is open (node:net's `unref()`). */
  unref(): this {
    this.#unref = true
    this.#ch?.unref()
    return this
  }

  /** Undoes `unref()`. */
  ref(): this {
    this.#unref = false
    this.#ch?.ref()
    return this
  }

  /** Sends a message: text for strings (unless `binary`), binary for bytes. */
  send(data: WebSocketData, options?: SendOptions | Callback, cb?: Callback): void {
    if (typeof options === 'function') {
      cb = options
      options = {}
    }
    const o = options ?? {}
    if (this.#state === CONNECTING) throw new NetloopError('ERR_INVALID_STATE', 'WebSocket is not open: readyState 0 (CONNECTING)')
    const binary = o.binary ?? typeof data !== 'string'
    if (this.#state !== OPEN) return this.#afterClose(data, cb)
    if (o.fin === false || this.#fragments.length > 0) {
      if (this.#fragments.length === 0) this.#fragmentsBinary = binary
      this.#fragments.push(Buffer.from(toBuffer(data)))
      if (o.fin === false) {
        if (cb) process.nextTick(cb)
        return
      }
      const whole = Buffer.concat(this.#fragments)
      this.#fragments = []
      return this.#write(this.#fragmentsBinary ? new BinaryWebSocketFrame(whole) : new TextWebSocketFrame(whole.toString()), cb)
    }
    const frame = binary ? new BinaryWebSocketFrame(toBuffer(data)) : new TextWebSocketFrame(typeof data === 'string' ? data : toBuffer(data).toString())
    this.#write(frame, cb)
  }

  /** Sends a ping (at most 125 bytes). */
  ping(data?: WebSocketData, _mask?: boolean, cb?: Callback): void {
    this.#control(data, cb, (b) => new PingWebSocketFrame(b))
  }

  /** Sends a pong (at most 125 bytes). */
  pong(data?: WebSocketData, _mask?: boolean, cb?: Callback): void {
    this.#control(data, cb, (b) => new PongWebSocketFrame(b))
  }

  /**
   * Starts the close handshake: sends a close frame with `code` (1000 or 3000–4999, ...) and
   * `reason` (at most 123 bytes); the connection ends when the peer answers, or after the
   * close timeout. Before the connection is open, aborts it (`error`, then `close` 1006).
   */
  close(code?: number, reason?: string | Buffer): void {
    if (this.#state === CLOSED) return
    if (this.#state === CONNECTING) {
      this.#abortConnecting('WebSocket was closed before the connection was established')
      return
    }
    if (code !== undefined && (typeof code !== 'number' || !isSendableCode(code))) {
      throw new NetloopError('ERR_OUT_OF_RANGE', `invalid close code: ${String(code)}`)
    }
    const why = reason === undefined ? '' : Buffer.isBuffer(reason) ? reason.toString() : String(reason)
    if (Buffer.byteLength(why) > 123) throw new NetloopError('ERR_OUT_OF_RANGE', 'the close reason must not exceed 123 bytes')
    if (this.#state === CLOSING) return
    this.#state = CLOSING
    this.#ch?.writeAndFlush(new CloseWebSocketFrame(code, code === undefined ? '' : why))
  }

  /** Ends the connection at once, without a close frame (the peer sees 1006). */
  terminate(): void {
    if (this.#state === CLOSED) return
    if (this.#state === CONNECTING) {
      this.#abortConnecting('WebSocket was closed before the connection was established')
      return
    }
    this.#state = CLOSING
    const ch = this.#ch
    if (ch === undefined) return
    // The native WebSocket handler would send a close frame: take it out first.
    try {
      ch.pipeline.removeIfExists(this._wsName)
    } catch {
      // already gone with the channel
    }
    void ch.close()
  }

  /** Stops reading (backpressure on the peer through TCP). */
  pause(): void {
    if (this.#ch?.isOpen) this.#ch.config.autoRead = false
  }

  /** Reads again after `pause()`. */
  resume(): void {
    if (this.#ch?.isOpen) this.#ch.config.autoRead = true
  }

  // Topics (Bun's and uWebSockets.js' names), src/ws-socket-topics.ts.
  /** @internal The topics this connection joined (set on the first `subscribe`). */
  declare _topics: Set<string> | undefined
  /**
   * Joins `topic` (idempotent; messages published to it are written natively). Throws
   * `ERR_INVALID_STATE` on a client's connection or before the channel exists,
   * `ERR_CHANNEL_CLOSED` once closed.
   */
  subscribe(topic: string): void {
    joinTopic(this, topic)
  }
  /** Leaves `topic`; whether this connection was in it. */
  unsubscribe(topic: string): boolean {
    return leaveTopic(this, topic)
  }
  /** Whether this connection is in `topic` (false once closed: closing leaves every topic). */
  isSubscribed(topic: string): boolean {
    return isInTopic(this, topic)
  }
  /** The topics this connection is in. */
  get subscriptions(): string[] {
    return topicsJoined(this)
  }
  /**
   * Sends `data` to every subscriber of `topic` but this connection (as Bun's and
   * uWebSockets.js' `ws.publish`; `WebSocketServer.publish` reaches all). A string is text,
   * other data binary unless `options.binary` says otherwise. Returns the subscribers reached.
   */
  publish(topic: string, data: WebSocketData, options?: PublishOptions): number {
    return publishToOthers(this, topic, data, options)
  }

  /** The WHATWG form: `type` is `open`, `message`, `close` or `error`. */
  addEventListener(type: string, listener: WhatwgListener, options?: { once?: boolean }): void {
    addWhatwgListener(this, type, listener, options?.once === true)
  }
  removeEventListener(type: string, listener: WhatwgListener): void {
    removeWhatwgListener(this, type, listener)
  }
  // The WHATWG handler properties (src/ws-events.ts): a setter replaces the listener it set before.
  get onopen(): WhatwgListener | null {
    return handlerProperty(this, 'open')
  }
  set onopen(fn: WhatwgListener | null) {
    setHandlerProperty(this, 'open', fn)
  }
  get onmessage(): WhatwgListener | null {
    return handlerProperty(this, 'message')
  }
  set onmessage(fn: WhatwgListener | null) {
    setHandlerProperty(this, 'message', fn)
  }
  get onclose(): WhatwgListener | null {
    return handlerProperty(this, 'close')
  }
  set onclose(fn: WhatwgListener | null) {
    setHandlerProperty(this, 'close', fn)
  }
  get onerror(): WhatwgListener | null {
    return handlerProperty(this, 'error')
  }
  set onerror(fn: WhatwgListener | null) {
    setHandlerProperty(this, 'error', fn)
  }

  #write(frame: TextWebSocketFrame | BinaryWebSocketFrame | PingWebSocketFrame | PongWebSocketFrame, cb: Callback | undefined): void {
    const ch = this.#ch!
    if (cb === undefined) {
      ch.writeAndFlush(frame)
      return
    }
    ch.writeAndFlush(frame, ch.newPromise()).addListener((e) => cb(e ?? undefined))
  }

  #control(data: WebSocketData | undefined, cb: Callback | undefined, make: (b: Buffer) => PingWebSocketFrame | PongWebSocketFrame): void {
    if (this.#state === CONNECTING) throw new NetloopError('ERR_INVALID_STATE', 'WebSocket is not open: readyState 0 (CONNECTING)')
    const b = data === undefined ? Buffer.alloc(0) : toBuffer(data)
    if (b.length > 125) throw new NetloopError('ERR_OUT_OF_RANGE', 'the data size must not be greater than 125 bytes')
    if (this.#state !== OPEN) return this.#afterClose(b, cb)
    this.#write(make(b), cb)
  }

  /** `ws`'s rule: data sent once closing fails the callback, nothing is thrown. */
  #afterClose(_data: unknown, cb: Callback | undefined): void {
    if (cb) {
      const e = new NetloopError('ERR_INVALID_STATE', `WebSocket is not open: readyState ${this.#state} (${STATE_NAMES[this.#state]})`)
      process.nextTick(cb, e)
    }
  }

  #abortConnecting(message: string): void {
    const e = new NetloopError('ERR_WS_HANDSHAKE_ABORTED', message)
    const abort = this._abort
    this._abort = undefined
    if (abort) abort(e)
    else this._fail(e)
  }

  #tcpPending = false
  #deferred: Error | undefined

  /** @internal A client's TCP (and TLS) connect is under way: failures wait for its outcome. */
  _tcpPending(): void {
    this.#tcpPending = true
  }

  /**
   * @internal The connect's outcome: its error wins over what the channel's end reported
   * meanwhile (an `ERR_WS_HANDSHAKE_ABORTED` for a refused connection says less).
   */
  _tcpDone(e?: Error): void {
    if (!this.#tcpPending) return
    this.#tcpPending = false
    const failure = e ?? this.#deferred
    this.#deferred = undefined
    if (failure) this._fail(failure)
  }

  /** @internal A client connection that failed before it opened: `error`, then `close` 1006. */
  _fail(e: Error): void {
    if (this.#state === CLOSED) return
    if (this.#tcpPending) {
      this.#deferred ??= e
      return
    }
    this.#state = CLOSED
    this._emitSafe('error', e)
    this.#emitClose()
  }

  /** @internal The channel (client: once connected; server: at the handshake). */
  _attach(ch: Channel): void {
    this.#ch = ch
    if (this.#unref) ch.unref()
  }

  /** @internal The handshake completed. */
  _open(ev: WebSocketHandshakeEvent, emit: boolean): void {
    if (this.#state !== CONNECTING) return
    this.#protocol = ev.protocol
    if (this.#url !== '') this.#extensions = ev.headers['sec-websocket-extensions'] ?? ''
    this.#state = OPEN
    if (emit) {
      this._emitSafe('upgrade', ev)
      this._emitSafe('open')
    }
  }

  /** @internal A frame the native handler passed on. */
  _frame(msg: unknown): void {
    if (msg instanceof TextWebSocketFrame) this._emitSafe('message', Buffer.from(msg.text), false)
    else if (msg instanceof BinaryWebSocketFrame) this._emitSafe('message', this.binaryType === 'arraybuffer' ? toArrayBuffer(msg.binary) : msg.binary, true)
    else if (msg instanceof PingWebSocketFrame) this._emitSafe('ping', msg.ping)
    else if (msg instanceof PongWebSocketFrame) this._emitSafe('pong', msg.pong)
    else if (msg instanceof CloseWebSocketFrame) {
      // The native side answers it and closes the channel: `close` comes with channelInactive.
      this.#closeCode = msg.code ?? 1005
      this.#closeReason = Buffer.from(msg.reason)
      if (this.#state === OPEN) this.#state = CLOSING
    }
  }

  /** @internal An error in the pipeline (a protocol violation, a refused handshake, I/O). */
  _error(e: unknown): void {
    if (this.#state === CLOSED) return
    const err = e instanceof Error ? e : new NetloopError('ERR_WS_ERROR', String(e))
    if (this.#state === CONNECTING) {
      this._fail(err)
      return
    }
    this._emitSafe('error', err)
  }

  /** @internal The channel went inactive. */
  _inactive(): void {
    if (this.#state === CONNECTING) {
      this._fail(new NetloopError('ERR_WS_HANDSHAKE_ABORTED', 'the connection ended before the handshake completed'))
      return
    }
    this.#state = CLOSED
    this.#emitClose()
  }

  #emitClose(): void {
    if (this.#closeEmitted) return
    this.#closeEmitted = true
    this.#state = CLOSED
    this._emitSafe('close', this.#closeCode ?? 1006, this.#closeReason)
  }

  /**
   * @internal Emits without letting a listener's exception escape into the pipeline: it
   * becomes an `error` event. An `error` with no listener, or thrown by one, is a process
   * warning (`ws` would throw it, uncaught; netloop never lets a JS exception end the
   * process from a connection).
   */
  _emitSafe(event: string, ...args: unknown[]): void {
    if (event === 'error' && this.listenerCount('error') === 0) {
      process.emitWarning(`unhandled WebSocket error: ${describe(args[0])}`, 'NetloopWarning')
      return
    }
    try {
      this.emit(event, ...args)
    } catch (e) {
      if (event !== 'error') this._emitSafe('error', e)
      else process.emitWarning(`a WebSocket 'error' listener threw: ${describe(e)}`, 'NetloopWarning')
    }
  }
}


/** The last handler of a connection's pipeline: native events become the socket's. */
export function bridge(ws: WebSocket, emitOpen: boolean): ChannelHandler {
  return {
    userEventTriggered(_ctx: ChannelHandlerContext, ev: unknown) {
      if (ev instanceof WebSocketHandshakeEvent) ws._open(ev, emitOpen)
    },
    channelRead(_ctx: ChannelHandlerContext, msg: unknown) {
      ws._frame(msg)
    },
    exceptionCaught(_ctx: ChannelHandlerContext, e: unknown) {
      ws._error(e)
    },
    channelInactive() {
      ws._inactive()
    },
  }
}
