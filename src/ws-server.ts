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
 * connections are channels, not node:net sockets. That handshake is src/ws-server-upgrade.ts;
 * the options and the request handed out are src/ws-server-options.ts.
 *
 * Ground rules: the JS thread of the server's loops (a worker group cannot emit `connection`
 * here: use `WebSocketServerProtocolHandler` in its `childHandler`). `close` is emitted once,
 * when the listener is closed and every connection it tracked has closed.
 */
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
import { SslHandler } from './tls'
import { WebSocketServerProtocolHandler, deflateParams } from './ws'
import { WebSocketHandshakeEvent } from './ws-client'
import { WebSocket } from './ws-socket'
import { attach, bridge, opened } from './ws-socket-lifecycle'
import { toBuffer, type WebSocketData } from './ws-data'
import { publish, type PublishOptions } from './ws-topics'
import { requestOf, type WebSocketRequest, type WebSocketServerOptions } from './ws-server-options'
import { acceptUpgrade, answerPlain } from './ws-server-upgrade'

export type { WebSocketRequest, WebSocketServerOptions } from './ws-server-options'

export class WebSocketServer extends EventEmitter {
  /** The open connections (when `clientTracking` is on). */
  readonly clients: Set<WebSocket> | undefined
  readonly options: Readonly<WebSocketServerOptions>
  readonly #all = new Set<WebSocket>()
  readonly #params: number[]
  readonly #deflate: readonly number[]
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
    const accepted = acceptUpgrade(request, ctx, this.options, this.#params, this.#deflate, (r) => this.shouldHandle(r))
    if (accepted === undefined) return
    const [ws, info] = accepted
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
