/**
 * What `WebSocketServer` (src/ws-server.ts) is made with (`WebSocketServerOptions`) and what
 * it hands out beside each socket (`WebSocketRequest`, node:http's request in part).
 */
import type { Channel } from './channel'
import type { EventLoop } from './loop'
import type { EventLoopGroup } from './group'
import type { SslContext } from './tls'
import type { PerMessageDeflateOptions } from './ws'
import type { WebSocketHandshakeEvent } from './ws-client'

/** What `connection` and `handleUpgrade`'s callback get beside the socket (node:http's request, in part). */
export interface WebSocketRequest {
  readonly method: 'GET'
  /** The request target (`/path?query`). */
  readonly url: string
  /** The fields by lower-case name (repeated ones joined with `, `). */
  readonly headers: Record<string, string>
  readonly rawHeaders: readonly string[]
  /** The remote end, node:net style. */
  readonly socket: { readonly remoteAddress?: string; readonly remotePort?: number; readonly remoteFamily?: string }
  /** The connection's channel. */
  readonly channel: Channel
}

/** Options of `new WebSocketServer(options, callback)`. */
export interface WebSocketServerOptions {
  /** Listen on this port (0: any); one of `port` and `noServer` is required. */
  port?: number
  /** The address to listen on (default `0.0.0.0`). */
  host?: string
  /** Only upgrade requests for this path (default: every path). */
  path?: string
  /** No server of its own: connections come through `handleUpgrade`. */
  noServer?: boolean
  /** Choose the subprotocol in JS (`false`: none); the handshake is then answered in JS. */
  handleProtocols?: (protocols: Set<string>, request: WebSocketRequest) => string | false
  /** The subprotocols spoken, chosen natively (the first the client offers); default: none. */
  protocols?: string[]
  /** Longest message accepted, in bytes (default 100 MiB, as `ws`; 1009 beyond). */
  maxPayload?: number
  /** Keep the open connections in `clients` (default true). */
  clientTracking?: boolean
  /** The loop(s) that accept and serve (default: a loop of its own, shut down on `close`). */
  group?: EventLoop | EventLoopGroup
  /** Serve `wss:` with this server `SslContext`. */
  tls?: SslContext
  /** How long `close()` on a connection waits for the peer's close frame, in ms (default 10000). */
  closeTimeout?: number
  /** Answer pings natively (default true). */
  autoPong?: boolean
  /**
   * Accept permessage-deflate when a client offers it (default false, as `ws`'s server):
   * `true` or `PerMessageDeflateOptions`; negotiated natively, or in JS by `handleUpgrade`
   * (and so with `handleProtocols`) by the same rules, then applied natively.
   */
  perMessageDeflate?: boolean | PerMessageDeflateOptions
}

/** The `WebSocketRequest` of a handshake on `ch` for `url`. */
export function requestOf(ch: Channel, url: string, ev: WebSocketHandshakeEvent): WebSocketRequest {
  const remote = ch.remoteAddress
  return { method: 'GET', url, headers: ev.headers, rawHeaders: ev.rawHeaders, socket: { remoteAddress: remote?.address, remotePort: remote?.port, remoteFamily: remote?.family }, channel: ch }
}
