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
 *
 * The class is the surface; what it sends is src/ws-socket-send.ts, and what the pipeline
 * reports (the bridge handler, the handshake, frames, errors, the end) src/ws-socket-lifecycle.ts.
 * Both read and move the state in the class's internal fields.
 */
import { Buffer } from 'node:buffer'
import { EventEmitter } from 'node:events'
import type { Channel } from './channel'
import { PingWebSocketFrame, PongWebSocketFrame } from './ws'
import { addWhatwgListener, handlerProperty, removeWhatwgListener, setHandlerProperty, type WhatwgListener } from './ws-events'
import type { Callback, SendOptions, WebSocketData } from './ws-data'
import { isInTopic, joinTopic, leaveTopic, publishToOthers, topicsJoined } from './ws-socket-topics'
import type { PublishOptions } from './ws-topics'
import { CLOSED, CLOSING, CONNECTING, OPEN } from './ws-socket-lifecycle'
import { sendControl, sendMessage, startClose, terminateSocket } from './ws-socket-send'
import { connect } from './ws-client-connect'

export type { SendOptions, WebSocketData } from './ws-data'

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

  #url: string
  // The state the sending side (src/ws-socket-send.ts) and the pipeline's side
  // (src/ws-socket-lifecycle.ts) share; internal, each field one line.
  /** @internal `readyState`. */ _state = CONNECTING
  /** @internal The channel (undefined while a client connects). */ _ch: Channel | undefined
  /** @internal The subprotocol the handshake chose. */ _protocol = ''
  /** @internal A client's extensions, as the server's answer named them. */ _extensions = ''
  /** @internal The peer's close code (undefined: no close frame came). */ _closeCode: number | undefined
  /** @internal The peer's close reason. */ _closeReason = Buffer.alloc(0)
  /** @internal `close` was emitted. */ _closeEmitted = false
  /** @internal The fragments of a message sent with `fin: false`. */ _fragments: Buffer[] = []
  /** @internal Whether that message is binary. */ _fragmentsBinary = false
  /** @internal `unref()` was called (applied to the channel once attached). */ _unref = false
  /** @internal A client's TCP (and TLS) connect is under way. */ _tcpPending = false
  /** @internal A failure that waits for the connect's outcome. */ _deferred: Error | undefined
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
    return this._state
  }
  /** The subprotocol the server chose ('' for none). */
  get protocol(): string {
    return this._protocol
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
    return this._extensions
  }
  /** The channel under this connection (netloop's; undefined while a client connects). */
  get channel(): Channel | undefined {
    return this._ch
  }

  /**
   * Bytes written and not yet handed to the kernel: the channel's outbound buffer as its
   * water marks count it (each queued write counts its size plus a fixed overhead, as Netty's
   * `ChannelOutboundBuffer` does). 0 once closed.
   */
  get bufferedAmount(): number {
    const ch = this._ch
    if (ch === undefined || !ch.isOpen) return 0
    const before = ch.bytesBeforeUnwritable
    if (before > 0) return Math.max(0, ch.config.writeBufferHighWaterMark + 1 - before)
    const drain = ch.bytesBeforeWritable
    return drain > 0 ? drain - 1 + ch.config.writeBufferLowWaterMark : ch.config.writeBufferHighWaterMark
  }

  /** Lets the process exit while this connection is open (node:net's `unref()`). */
  unref(): this {
    this._unref = true
    this._ch?.unref()
    return this
  }

  /** Undoes `unref()`. */
  ref(): this {
    this._unref = false
    this._ch?.ref()
    return this
  }

  /** Sends a message: text for strings (unless `binary`), binary for bytes. */
  send(data: WebSocketData, options?: SendOptions | Callback, cb?: Callback): void {
    if (typeof options === 'function') {
      cb = options
      options = {}
    }
    sendMessage(this, data, options ?? {}, cb)
  }

  /** Sends a ping (at most 125 bytes). */
  ping(data?: WebSocketData, _mask?: boolean, cb?: Callback): void {
    sendControl(this, data, cb, (b) => new PingWebSocketFrame(b))
  }

  /** Sends a pong (at most 125 bytes). */
  pong(data?: WebSocketData, _mask?: boolean, cb?: Callback): void {
    sendControl(this, data, cb, (b) => new PongWebSocketFrame(b))
  }

  /**
   * Starts the close handshake: sends a close frame with `code` (1000 or 3000–4999, ...) and
   * `reason` (at most 123 bytes); the connection ends when the peer answers, or after the
   * close timeout. Before the connection is open, aborts it (`error`, then `close` 1006).
   */
  close(code?: number, reason?: string | Buffer): void {
    startClose(this, code, reason)
  }

  /** Ends the connection at once, without a close frame (the peer sees 1006). */
  terminate(): void {
    terminateSocket(this)
  }

  /** Stops reading (backpressure on the peer through TCP). */
  pause(): void {
    if (this._ch?.isOpen) this._ch.config.autoRead = false
  }

  /** Reads again after `pause()`. */
  resume(): void {
    if (this._ch?.isOpen) this._ch.config.autoRead = true
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
}
