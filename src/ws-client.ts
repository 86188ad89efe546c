/**
 * The client side of WebSocket in netloop's style (Netty's `WebSocketClientProtocolHandler`):
 * `WebSocketClientProtocolHandler` goes after `HttpClientCodec` (after an `SslHandler` for
 * `wss:`) in a `Bootstrap`'s pipeline. Once the channel is active it sends the upgrade
 * request (a fresh `Sec-WebSocket-Key`, version 13, the subprotocols offered, extra fields),
 * checks the `101` natively, and from then on frames go both ways as on a server (outbound
 * frames masked). With `perMessageDeflate` it offers permessage-deflate and, accepted,
 * compresses and inflates natively. A `WebSocketHandshakeEvent` reaches `userEventTriggered` when the
 * connection is open; a refused or cut-short handshake reaches `exceptionCaught` as a
 * `NetloopError` (`ERR_WS_HANDSHAKE_STATUS`, `_ACCEPT`, `_PROTOCOL`, `_EXTENSION`,
 * `_NOT_UPGRADE`, `_ABORTED`) and the channel closes.
 *
 * ```ts
 * const ch = await new Bootstrap().group(loop).handler((c) => c.pipeline
 *   .addLast('http', new HttpClientCodec())
 *   .addLast('ws', new WebSocketClientProtocolHandler('/chat', { host: 'example.test' }))
 *   .addLast('app', {
 *     userEventTriggered: (ctx, ev) => { if (ev instanceof WebSocketHandshakeEvent) ctx.writeAndFlush('hello') },
 *     channelRead: (ctx, msg: TextWebSocketFrame) => console.log(msg.text),
 *   })).connect(8080, 'example.test')
 * ```
 *
 * `WebSocketHandshakeEvent` is fired on servers too (after `WebSocketServerProtocolHandler`),
 * with the request's target and fields.
 */
import { Buffer } from 'node:buffer'
import type { Channel } from './channel'
import { NativeHandler } from './codecs'
import { NativeHandlerKind } from './protocol'
import { checkBoolean, checkInteger, invalidArgType } from './errors'
import { deflateParams, markWebSocketChannel, type PerMessageDeflateOptions } from './ws'

/** Options of a `WebSocketClientProtocolHandler`. */
export interface WebSocketClientProtocolOptions {
  /** The `Host` field (default: the `HttpClientCodec`'s `host`, if any). */
  host?: string
  /** Subprotocols offered, in order of preference (default none). */
  subprotocols?: string[]
  /** Extra request fields (`Origin`, `Authorization`, ...). */
  headers?: Record<string, string> | Array<[string, string]>
  /** Longest frame payload accepted, in bytes (default 16 MiB; 1009 beyond). */
  maxFrameSize?: number
  /** Longest message accepted, all its fragments together (default 64 MiB; 1009 beyond). */
  maxMessageSize?: number
  /** How long to wait for the peer's close frame after sending ours, in ms (default 10000). */
  closeTimeout?: number
  /** Answer pings with pongs natively (default true). */
  autoPong?: boolean
  /** Also pass pings and pongs on as `PingWebSocketFrame`/`PongWebSocketFrame` (default false). */
  forwardControlFrames?: boolean
  /**
   * Offer permessage-deflate (RFC 7692): `true` for the defaults, or its options (the
   * server's names: `serverNoContextTakeover` asks the server to, `clientNoContextTakeover`
   * is this end's, the window bits are offered below 15). Default off for this handler; the
   * `WebSocket` client offers it by default, as the `ws` package. When the server accepts,
   * messages of at least `threshold` bytes are compressed and the server's are inflated
   * natively, bounded by `maxMessageSize`; an answer the offer does not allow fails the
   * handshake with `ERR_WS_HANDSHAKE_EXTENSION`.
   */
  perMessageDeflate?: boolean | PerMessageDeflateOptions
}

/** Sends the client handshake after `HttpClientCodec`, then WebSocket frames (native). */
export class WebSocketClientProtocolHandler extends NativeHandler {
  constructor(target = '/', o: WebSocketClientProtocolOptions = {}) {
    if (typeof target !== 'string' || !target.startsWith('/')) throw invalidArgType('target', 'a string starting with /', target)
    if (o === null || typeof o !== 'object') throw invalidArgType('options', 'object', o)
    const protocols = o.subprotocols ?? []
    if (!Array.isArray(protocols) || protocols.some((p) => typeof p !== 'string' || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(p))) {
      throw invalidArgType('subprotocols', 'an array of tokens', protocols)
    }
    if (new Set(protocols).size !== protocols.length) throw invalidArgType('subprotocols', 'distinct tokens', protocols)
    if (o.host !== undefined && (typeof o.host !== 'string' || o.host === '')) throw invalidArgType('host', 'non-empty string', o.host)
    const pairs = o.headers === undefined ? [] : Array.isArray(o.headers) ? o.headers : Object.entries(o.headers)
    for (const [name, value] of pairs) {
      if (typeof name !== 'string' || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) throw invalidArgType('headers', 'field names that are tokens', name)
      // eslint-disable-next-line no-control-regex
      if (typeof value !== 'string' || /[\r\n\0]/.test(value)) throw invalidArgType(`headers.${name}`, 'a string without CR, LF or NUL', value)
    }
    if (o.autoPong !== undefined) checkBoolean('autoPong', o.autoPong)
    if (o.forwardControlFrames !== undefined) checkBoolean('forwardControlFrames', o.forwardControlFrames)
    const n = (name: keyof WebSocketClientProtocolOptions, v: unknown, d: number, min: number) => (v === undefined ? d : checkInteger(name, v, min, Number.MAX_SAFE_INTEGER))
    const maxFrameSize = n('maxFrameSize', o.maxFrameSize, 16 << 20, 125)
    super(
      NativeHandlerKind.WebSocketClient,
      [
        maxFrameSize,
        n('maxMessageSize', o.maxMessageSize, Math.max(64 << 20, maxFrameSize), maxFrameSize),
        n('closeTimeout', o.closeTimeout, 10_000, 1),
        o.autoPong === false ? 0 : 1,
        o.forwardControlFrames ? 1 : 0,
        protocols.length,
        ...deflateParams(o.perMessageDeflate),
      ],
      [Buffer.from(target), Buffer.from(o.host ?? '', 'latin1'), ...protocols.map((p) => Buffer.from(p)), ...pairs.flatMap(([k, v]) => [Buffer.from(k), Buffer.from(v, 'latin1')])],
    )
  }

  /**
   * @internal The native handshake takes `HttpClientCodec` out of the pipeline after the
   * `101` (as Netty's client handshaker does): the JS mirror of the pipeline follows.
   */
  override _attach(ch: unknown): void {
    markWebSocketChannel(ch)
    ;(ch as Channel).pipeline._nativeEdits = true
  }
}

/**
 * A WebSocket handshake completed (Netty's `HandshakeComplete`): on a server, the request's
 * target and fields; on a client, the target sent and the answer's fields. `protocol` is the
 * subprotocol chosen ('' for none). The fields are split out of the native record on first
 * access (an application that never reads them, like an echo, pays for none of it).
 */
export class WebSocketHandshakeEvent {
  /** The fields as received, or (from a native record) their `name: value` lines until read. */
  #raw: readonly string[] | string
  #headers: Record<string, string> | undefined

  constructor(
    readonly url: string,
    readonly protocol: string,
    /** The fields as received: name, value, name, value, ... (node:http's `rawHeaders`). */
    rawHeaders: readonly string[],
  ) {
    this.#raw = rawHeaders
  }

  /** @internal From a native record: the fields as `name: value` lines joined by `\n`. */
  static _fromLines(url: string, protocol: string, lines: string): WebSocketHandshakeEvent {
    const ev = new WebSocketHandshakeEvent(url, protocol, [])
    ev.#raw = lines
    return ev
  }

  /** The fields as received: name, value, name, value, ... (node:http's `rawHeaders`). */
  get rawHeaders(): readonly string[] {
    const r = this.#raw
    if (typeof r !== 'string') return r
    const raw: string[] = []
    if (r !== '') {
      for (const line of r.split('\n')) {
        const colon = line.indexOf(': ')
        raw.push(line.slice(0, colon), line.slice(colon + 2))
      }
    }
    return (this.#raw = raw)
  }

  /** The fields by lower-case name (repeated ones joined with `, `, as node:http does). */
  get headers(): Record<string, string> {
    if (this.#headers !== undefined) return this.#headers
    const raw = this.rawHeaders
    const headers: Record<string, string> = Object.create(null)
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const k = raw[i].toLowerCase()
      headers[k] = k in headers ? `${headers[k]}, ${raw[i + 1]}` : raw[i + 1]
    }
    return (this.#headers = headers)
  }
}

/** @internal The event of a `UserEventKind.WebSocketHandshake` record (strings at `at`). */
export function handshakeEvent(strings: string[], at: number): WebSocketHandshakeEvent {
  return WebSocketHandshakeEvent._fromLines(strings[at] ?? '/', strings[at + 1] ?? '', strings[at + 2] ?? '')
}
