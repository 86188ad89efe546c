/**
 * How `new WebSocket(url)` connects: a netloop `Bootstrap` channel on the `group` option's
 * loops (else one shared loop, created on first use, that keeps the process alive only while a
 * connection is open), its pipeline `SslHandler` (for `wss:`/`https:`) → `HttpClientCodec` →
 * `WebSocketClientProtocolHandler` (native: the handshake, then frames) → the socket's bridge
 * (src/ws-socket.ts).
 *
 * Failures before `open` come as one `error` (the connection's: `ECONNREFUSED`, a TLS
 * error, ...; the handshake's: `ERR_WS_HANDSHAKE_*`), then `close` 1006.
 *
 * Ground rules: the JS thread that made the socket; the connect's outcome decides which error
 * is reported when the channel also ends (see ws-socket-lifecycle.ts `tcpDone`).
 */
import type { Channel } from './channel'
import { Bootstrap } from './bootstrap'
import { EventLoop } from './loop'
import type { EventLoopGroup } from './group'
import { HttpClientCodec } from './http-client'
import { NetloopError } from './errors'
import { SslContext, SslHandler } from './tls'
import type { SslContextOptions } from './tls-options'
import { WebSocketClientProtocolHandler } from './ws-client'
import type { PerMessageDeflateOptions } from './ws'
import type { WebSocket } from './ws-socket'
import { attach, bridge, fail, tcpDone, tcpPending } from './ws-socket-lifecycle'

/** Options of `new WebSocket(url, protocols, options)` (the `ws` package's, where they apply). */
export interface WebSocketClientOptions {
  /** The netloop loop or group the connection runs on (default: a shared loop). */
  group?: EventLoop | EventLoopGroup
  /** Extra request fields. */
  headers?: Record<string, string>
  /** The `Origin` field. */
  origin?: string
  /** Fails the connection when the handshake is not done within this many ms (`ERR_WS_HANDSHAKE_TIMEOUT`). */
  handshakeTimeout?: number
  /** Longest message accepted, in bytes (default 100 MiB as `ws`; 1009 beyond). */
  maxPayload?: number
  /** How long `close()` waits for the peer's close frame, in ms (default 10000). */
  closeTimeout?: number
  /** Answer pings natively (default true). */
  autoPong?: boolean
  /**
   * Offer permessage-deflate (default `true`, as the `ws` package's client: the server
   * decides, and most servers decline unless configured). `false` offers nothing; an object
   * tunes the offer (`threshold`, `serverNoContextTakeover`, `clientNoContextTakeover`,
   * `serverMaxWindowBits`, `clientMaxWindowBits`; see `PerMessageDeflateOptions`).
   */
  perMessageDeflate?: boolean | PerMessageDeflateOptions
  /** `wss:`: verify the server (default true). */
  rejectUnauthorized?: boolean
  /** `wss:`: trusted CA certificates (PEM). */
  ca?: SslContextOptions['ca']
  /** `wss:`: a client certificate and key (PEM). */
  cert?: SslContextOptions['cert']
  key?: SslContextOptions['key']
  /** `wss:`: the name sent (SNI) and verified (default: the URL's host unless an IP address). */
  servername?: string
  /** `wss:`: a client `SslContext` of your own instead of the options above. */
  tls?: SslContext
}

let sharedLoop: EventLoop | undefined

function defaultLoop(): EventLoop {
  if (sharedLoop === undefined || !['not-started', 'started'].includes(sharedLoop.state)) sharedLoop = new EventLoop({ name: 'netloop-ws' })
  return sharedLoop
}

function badUrl(message: string): NetloopError {
  return new NetloopError('ERR_INVALID_URL', message)
}

/** @internal Connects `ws` (called by its constructor). */
export function connect(ws: WebSocket, address: string, protocols: string[], options: Record<string, unknown>): void {
  const o = options as WebSocketClientOptions
  let url: URL
  try {
    url = new URL(address)
  } catch {
    throw badUrl(`Invalid URL: ${address}`)
  }
  const secure = url.protocol === 'wss:' || url.protocol === 'https:'
  if (!secure && url.protocol !== 'ws:' && url.protocol !== 'http:') throw badUrl(`The URL's protocol must be one of "ws:", "wss:", "http:", "https:"`)
  if (url.hash !== '') throw badUrl('The URL contains a fragment identifier')
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port)
  const headers: Array<[string, string]> = Object.entries(o.headers ?? {})
  if (o.origin !== undefined) headers.push(['Origin', String(o.origin)])
  const handler = new WebSocketClientProtocolHandler(`${url.pathname || '/'}${url.search}`, {
    host: url.host,
    subprotocols: protocols,
    headers,
    maxFrameSize: o.maxPayload,
    maxMessageSize: o.maxPayload ?? 100 << 20,
    closeTimeout: o.closeTimeout,
    autoPong: o.autoPong,
    forwardControlFrames: true,
    perMessageDeflate: o.perMessageDeflate ?? true,
  })
  const tls = secure
    ? (o.tls ??
      SslContext.forClient({
        ...(o.ca !== undefined ? { ca: o.ca } : {}),
        ...(o.cert !== undefined ? { cert: o.cert } : {}),
        ...(o.key !== undefined ? { key: o.key } : {}),
        ...(o.rejectUnauthorized !== undefined ? { rejectUnauthorized: o.rejectUnauthorized } : {}),
      }))
    : undefined
  let channel: Channel | undefined
  const ac = new AbortController()
  const boot = new Bootstrap().group(o.group ?? defaultLoop()).handler((ch) => {
    channel = ch
    if (tls) ch.pipeline.addLast('tls', new SslHandler(tls, o.servername !== undefined ? { servername: o.servername } : {}))
    ch.pipeline.addLast('http', new HttpClientCodec()).addLast('ws', handler).addLast('app', bridge(ws, true))
    attach(ws, ch)
  })
  let timer: NodeJS.Timeout | undefined
  const stopTimer = (): void => {
    if (timer) clearTimeout(timer)
    timer = undefined
  }
  ws._abort = (e) => {
    stopTimer()
    ac.abort(e)
    void channel?.close()
    tcpDone(ws, e)
    fail(ws, e)
  }
  ws.once('open', stopTimer)
  ws.once('close', stopTimer)
  if (o.handshakeTimeout !== undefined) {
    timer = setTimeout(() => ws._abort?.(new NetloopError('ERR_WS_HANDSHAKE_TIMEOUT', 'Opening handshake has timed out')), o.handshakeTimeout)
    timer.unref()
  }
  tcpPending(ws)
  boot.connect(port, host, { signal: ac.signal }).then(
    () => tcpDone(ws),
    (e: Error) => tcpDone(ws, e),
  )
}

