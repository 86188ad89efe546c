/**
 * `WebSocketServer`: the `ws` package's server surface over netloop. With `port` it starts
 * its own netloop server (`ServerBootstrap` on the `group` option's loops, else a loop of its
 * own): each connection's pipeline is `SslHandler` (with `tls`) → `HttpServerCodec` →
 * `WebSocketServerProtocolHandler` (the handshake and the frames, native) → a bridge that
 * makes a `WebSocket` (src/ws-socket.ts) and emits `connection`. With `handleProtocols` the
 * handshake is answered in JS instead (see `handleUpgrade`), since the native one cannot call
 * JS while it answers.
 *
 * With `noServer`, `handleUpgrade(request, ctx, cb)` takes an upgrade request a handler of
 * your own netloop HTTP pipeline (after `HttpServerCodec`) read: it checks the request,
 * answers the `101` through the codec, and puts the native frame handler and the bridge in
 * front of your handler. `ws` takes a node:http request and socket there; netloop's
 * connections are channels, not node:net sockets.
 *
 * Ground rules: the JS thread of the server's loops (a worker group cannot emit `connection`
 * here: use `WebSocketServerProtocolHandler` in its `childHandler`). `close` is emitted once,
 * when the listener is closed and every connection it tracked has closed.
 */
import { createHash } from 'node:crypto'
import { EventEmitter } from 'node:events'
import type { AddressInfo } from 'node:net'
import type { Channel, ServerChannel } from './channel'
import type { ChannelHandlerContext } from './context'
import type { ChannelHandler } from './handlers'
import { ServerBootstrap } from './bootstrap'
import { EventLoop } from './loop'
import type { EventLoopGroup } from './group'
import { NetloopError, checkInteger, invalidArgType } from './errors'
import { HttpServerCodec } from './http'
import { HttpRequest } from './http-request'
import { HttpResponse } from './http-response'
import { NativeHandler } from './codecs'
import { NativeHandlerKind } from './protocol'
import { SslContext, SslHandler } from './tls'
import { WebSocketServerProtocolHandler, deflateParams, markWebSocketChannel, type PerMessageDeflateOptions } from './ws'
import { WebSocketHandshakeEvent } from './ws-client'
import { WebSocket } from './ws-socket'
import { attach, bridge, opened } from './ws-socket-lifecycle'
import { toBuffer, type WebSocketData } from './ws-data'
import { publish, type PublishOptions } from './ws-topics'
import { negotiateDeflate } from './ws-deflate-offer'

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

const KEY = /^[A-Za-z0-9+/]{21}[AQgw]==$/
const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'

function hasToken(value: string | undefined, token: string): boolean {
  return value !== undefined && value.split(',').some((t) => t.trim().toLowerCase() === token)
}

/** The native frame handler alone (server role), for a handshake JS answered. */
class WebSocketFramesHandler extends NativeHandler {
  constructor(p: number[]) {
    super(NativeHandlerKind.WebSocketFrames, p)
  }
  /** @internal */
  override _attach(ch: unknown): void {
    markWebSocketChannel(ch)
  }
}

function requestOf(ch: Channel, url: string, ev: WebSocketHandshakeEvent): WebSocketRequest {
  const remote = ch.remoteAddress
  return { method: 'GET', url, headers: ev.headers, rawHeaders: ev.rawHeaders, socket: { remoteAddress: remote?.address, remotePort: remote?.port, remoteFamily: remote?.family }, channel: ch }
}

export class WebSocketServer extends EventEmitter {
  /** The open connections (when `clientTracking` is on). */
  readonly clients: Set<WebSocket> | undefined
  readonly options: Readonly<WebSocketServerOptions>
  readonly #all = new Set<WebSocket>()
  readonly #params: number[]
  readonly #deflate: number[]
  #server: ServerChannel | undefined
  #ownLoop: EventLoop | undefined
  #state: 'starting' | 'listening' | 'closing' | 'closed' = 'starting'
  #closeWaiters: Array<(err?: Error) => void> = []

  constructor(options: WebSocketServerOptions, callback?: () => void) {
    super()
    if (options === null || typeof options !== 'object') throw invalidArgType('options', 'object', options)
    const o = options
    if ((o.port === undefined) === (o.noServer !== true)) throw new NetloopError('ERR_INVALID_ARG_VALUE', 'One and only one of the "port" and "noServer" options must be specified')
    if ((o as { server?: unknown }).server !== undefined) throw new NetloopError('ERR_INVALID_ARG_VALUE', 'The "server" option (a node:http server) is not supported: use "port", or "noServer" with handleUpgrade in a netloop HTTP pipeline')
    if (o.path !== undefined && (typeof o.path !== 'string' || !o.path.startsWith('/'))) throw invalidArgType('path', 'a string starting with /', o.path)
    if (o.handleProtocols !== undefined && typeof o.handleProtocols !== 'function') throw invalidArgType('handleProtocols', 'function', o.handleProtocols)
    if (o.group !== undefined && (o.group as EventLoopGroup).isWorkerGroup) {
      throw new NetloopError('ERR_INVALID_ARG_VALUE', 'A group on worker threads cannot emit "connection" on this thread: put WebSocketServerProtocolHandler in its childHandler')
    }
    const maxPayload = o.maxPayload === undefined ? 100 << 20 : checkInteger('maxPayload', o.maxPayload, 125, Number.MAX_SAFE_INTEGER)
    const closeTimeout = o.closeTimeout === undefined ? 10_000 : checkInteger('closeTimeout', o.closeTimeout, 1, 0x7fffffff)
    this.#deflate = deflateParams(o.perMessageDeflate) // checked here, not in each connection's initializer
    this.#params = [maxPayload, maxPayload, closeTimeout, o.autoPong === false ? 0 : 1, 1]
    this.options = { ...o }
    this.clients = o.clientTracking === false ? undefined : new Set()
    if (callback !== undefined) this.once('listening', callback)
    if (o.noServer) {
      this.#state = 'listening'
      return
    }
    checkInteger('port', o.port, 0, 65535)
    // Checked here, not in each connection's initializer.
    if (o.protocols !== undefined && (!Array.isArray(o.protocols) || o.protocols.some((p) => typeof p !== 'string' || p === ''))) throw invalidArgType('protocols', 'an array of non-empty strings', o.protocols)
    this.#listen(o)
  }

  #listen(o: WebSocketServerOptions): void {
    const loops = o.group ?? (this.#ownLoop = new EventLoop({ name: 'netloop-ws-server' }))
    const boot = new ServerBootstrap().group(loops).childHandler((ch) => {
      if (o.tls) ch.pipeline.addLast('tls', new SslHandler(o.tls))
      ch.pipeline.addLast('http', new HttpServerCodec())
      if (o.handleProtocols) {
        ch.pipeline.addLast('app', this.#upgrader())
        return
      }
      const [maxPayload, , closeTimeout] = this.#params
      ch.pipeline
        .addLast('ws', new WebSocketServerProtocolHandler(o.path ?? '/', { checkStartsWith: o.path === undefined, subprotocols: o.protocols ?? [], maxFrameSize: maxPayload, maxMessageSize: maxPayload, closeTimeout, autoPong: o.autoPong !== false, forwardControlFrames: true, perMessageDeflate: o.perMessageDeflate }))
        .addLast('app', this.#nativeBridge(ch))
    })
    boot.bind(o.port!, o.host ?? '0.0.0.0').then(
      (server) => {
        this.#server = server
        if (this.#state === 'closing') {
          void server.close().then(() => this.#maybeClosed())
          return
        }
        this.#state = 'listening'
        this.emit('listening')
      },
      (e: Error) => {
        this.#state = 'closing'
        this.#emitError(e)
        this.#maybeClosed()
      },
    )
  }

  /** The listening address, node:net style (`null` with `noServer` or before listening). */
  address(): AddressInfo | null {
    return this.#server?.localAddress ?? null
  }

  /** Whether `request` is for this server's path (as `ws`'s `shouldHandle`). */
  shouldHandle(request: { url: string }): boolean {
    if (this.options.path === undefined) return true
    const q = request.url.indexOf('?')
    return (q < 0 ? request.url : request.url.slice(0, q)) === this.options.path
  }

  /**
   * Answers an upgrade request read by the handler of `ctx` (after `HttpServerCodec`): a
   * valid one gets its `101` (subprotocol by `handleProtocols`, else `protocols`, else the
   * first offered, as `ws`), the native frame handler and a bridge go in before that handler,
   * and `cb(ws, request)` runs; an invalid one is answered 400 (426 for another version)
   * and HTTP goes on.
   */
  handleUpgrade(request: HttpRequest, ctx: ChannelHandlerContext, cb: (ws: WebSocket, request: WebSocketRequest) => void): void {
    if (!(request instanceof HttpRequest)) throw invalidArgType('request', 'HttpRequest', request)
    if (typeof cb !== 'function') throw invalidArgType('cb', 'function', cb)
    const refuse = (status: number, message: string, extra: Array<[string, string]> = []): void => {
      ctx.writeAndFlush(new HttpResponse(status, [['content-type', 'text/plain'], ...extra], message).forRequest(request))
    }
    const h = (name: string): string | undefined => request.header(name)
    if (request.method !== 'GET') return refuse(405, 'a WebSocket handshake must be a GET', [['allow', 'GET']])
    if (!hasToken(h('upgrade'), 'websocket') || !hasToken(h('connection'), 'upgrade')) return refuse(400, 'not a WebSocket upgrade request')
    if (h('sec-websocket-version')?.trim() !== '13') return refuse(426, 'Sec-WebSocket-Version must be 13', [['sec-websocket-version', '13']])
    const key = h('sec-websocket-key')?.trim()
    if (key === undefined || !KEY.test(key)) return refuse(400, 'missing or invalid Sec-WebSocket-Key')
    if (!this.shouldHandle(request)) return refuse(400, 'no WebSocket at this path')
    const ch = ctx.channel
    const raw = request.rawHeaders
    const ev = new WebSocketHandshakeEvent(request.url, '', raw)
    const info = requestOf(ch, request.url, ev)
    const offered = new Set((h('sec-websocket-protocol') ?? '').split(',').map((p) => p.trim()).filter((p) => p !== ''))
    let protocol: string | false = false
    if (this.options.handleProtocols) protocol = offered.size > 0 ? this.options.handleProtocols(offered, info) : false
    else if (this.options.protocols) protocol = [...offered].find((p) => this.options.protocols!.includes(p)) ?? false
    else protocol = offered.values().next().value ?? false
    const headers: Array<[string, string]> = [
      ['upgrade', 'websocket'],
      ['connection', 'Upgrade'],
      ['sec-websocket-accept', createHash('sha1').update(key + GUID).digest('base64')],
    ]
    if (protocol !== false) headers.push(['sec-websocket-protocol', protocol])
    const deflate = negotiateDeflate(this.#deflate, h('sec-websocket-extensions'))
    if (deflate) headers.push(['sec-websocket-extensions', deflate.response])
    const ws = new WebSocket(null)
    const p = ch.pipeline
    const name = p.names().includes('ws') ? `ws-${ch.id}-${Date.now()}` : 'ws'
    p.addBefore(ctx.name, name, new WebSocketFramesHandler([...this.#params, ...(deflate ? [1, this.#deflate[1], ...deflate.agreed] : [0])])).addBefore(ctx.name, `${name}-app`, bridge(ws, false))
    ws._wsName = name
    ctx.writeAndFlush(new HttpResponse(101, headers).forRequest(request))
    attach(ws, ch)
    opened(ws, new WebSocketHandshakeEvent(request.url, protocol === false ? '' : protocol, raw), false)
    this.#track(ws)
    cb(ws, info)
  }

  /**
   * Sends `data` to every subscriber of `topic` (connections that called `ws.subscribe`), on
   * every loop of the process: `publish` of src/ws-topics.ts, encoded once, written natively.
   * A string is text, other data binary unless `options.binary` says otherwise. Returns the
   * subscribers reached.
   */
  publish(topic: string, data: WebSocketData, options?: PublishOptions): number {
    return publish(topic, typeof data === 'string' ? data : toBuffer(data), options)
  }

  /** Stops accepting; `close` (and `cb`) once the listener closed and every tracked connection ended. Connections are not closed (as `ws` 8). */
  close(cb?: (err?: Error) => void): void {
    if (this.#state === 'closed') {
      if (cb) process.nextTick(cb, new NetloopError('ERR_SERVER_NOT_RUNNING', 'The server is not running'))
      return
    }
    if (cb) this.#closeWaiters.push(cb)
    if (this.#state === 'closing') return
    const starting = this.#state === 'starting'
    this.#state = 'closing'
    if (this.#server) void this.#server.close().then(() => this.#maybeClosed())
    else if (!starting) this.#maybeClosed()
  }

  #track(ws: WebSocket): void {
    this.#all.add(ws)
    this.clients?.add(ws)
    ws.once('close', () => {
      this.#all.delete(ws)
      this.clients?.delete(ws)
      this.#maybeClosed()
    })
  }

  #maybeClosed(): void {
    if (this.#state !== 'closing' || this.#all.size > 0 || (this.#server !== undefined && this.#server.isOpen)) return
    this.#state = 'closed'
    const loop = this.#ownLoop
    const done = (): void => {
      this.emit('close')
      for (const cb of this.#closeWaiters.splice(0)) cb()
    }
    if (loop) void loop.shutdownGracefully(0, 1000).then(done, done)
    else process.nextTick(done)
  }

  /** `connection`; a listener that throws is this server's `error` (the connection goes on). */
  #emitConnection(ws: WebSocket, request: WebSocketRequest): void {
    try {
      this.emit('connection', ws, request)
    } catch (e) {
      this.#emitError(e instanceof Error ? e : new NetloopError('ERR_WS_LISTENER', String(e)))
    }
  }

  #emitError(e: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', e)
    else process.emitWarning(`unhandled WebSocketServer error: ${e.message}`, 'NetloopWarning')
  }

  /** After the native handshake: a socket per connection, `connection` emitted; plain requests answered. */
  #nativeBridge(ch: Channel): ChannelHandler {
    let ws: WebSocket | undefined
    let inner: ChannelHandler | undefined
    return {
      userEventTriggered: (ctx, ev) => {
        if (!(ev instanceof WebSocketHandshakeEvent) || ws) return
        ws = new WebSocket(null)
        attach(ws, ch)
        inner = bridge(ws, false)
        opened(ws, ev, false)
        this.#track(ws)
        this.#emitConnection(ws, requestOf(ctx.channel, ev.url, ev))
      },
      channelRead: (ctx, msg) => {
        if (msg instanceof HttpRequest) return answerPlain(ctx, msg)
        inner?.channelRead?.(ctx, msg)
      },
      exceptionCaught: (ctx, e) => {
        inner?.exceptionCaught?.(ctx, e)
      },
      channelInactive: (ctx) => {
        inner?.channelInactive?.(ctx)
      },
    }
  }

  /** The JS handshake (`handleProtocols`): each upgrade request through `handleUpgrade`. */
  #upgrader(): ChannelHandler {
    return {
      channelRead: (ctx, msg) => {
        if (!(msg instanceof HttpRequest)) return
        if (!msg.upgrade) return answerPlain(ctx, msg)
        this.handleUpgrade(msg, ctx, (ws, request) => this.#emitConnection(ws, request))
      },
      exceptionCaught: () => {},
    }
  }
}

/** A request that is not a WebSocket upgrade for this server: 426 (400 for an upgrade to another path), as `ws`. */
function answerPlain(ctx: ChannelHandlerContext, req: HttpRequest): void {
  const status = req.upgrade ? 400 : 426
  ctx.writeAndFlush(new HttpResponse(status, [['content-type', 'text/plain']], status === 426 ? 'Upgrade Required' : 'Bad Request').forRequest(req))
}

