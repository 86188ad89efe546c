/**
 * `ServerBootstrap` and `Bootstrap`: Netty's way to set up server and client channels.
 * `init(ch)` is Netty's `ChannelInitializer`: it runs once per channel, on the channel's
 * loop, before the channel is registered, so its handlers see `channelRegistered` and
 * `channelActive`.
 */
import { lookup } from 'node:dns/promises'
import { type AddressInfo, isIP } from 'node:net'
import { Channel, type ServerChannel, initialize } from './channel'
import { tlsHandlerOf } from './tls'
import { publishClientSocket, publishListen, publishServerSocket, traceConnect } from './diagnostics'
import { AbortError, type AbortOptions, abortError, closeOnAbort, signalOf, whenAborted } from './abort'
import { NetloopError, checkFunction, checkNumber, dnsError, fromNative, invalidArgType, rejected, socketError } from './errors'
import { EventLoopGroup } from './group'
import { type ChannelHub, type ServerAcceptor, hubOf } from './hub'
import { EventLoop } from './loop'
import { encodeOption, encodeOptions, type ChannelOptionName, type ChannelOptions } from './options'
import { ChannelPromise } from './promise'
import type { ChannelHandler } from './handlers'

/** Sets up a channel's pipeline. May be async only in what it does later: it runs synchronously. */
export type ChannelInitializer = (ch: Channel) => void

type Loops = EventLoop | EventLoopGroup

function loopsOf(g: Loops): EventLoop[] {
  return g instanceof EventLoop ? [g] : [...g.loops]
}

function nextOf(g: Loops): EventLoop {
  return g instanceof EventLoop ? g : g.next()
}

/**
 * Throws `ERR_REJECTED_EXECUTION` when a loop of `g` is shutting down or shut down: a new
 * channel could not be registered on it (Netty's rejected register).
 */
function checkRunning(what: string, g: Loops): void {
  for (const l of loopsOf(g)) {
    const s = l.state
    if (s === 'shutting-down' || s === 'shutdown' || s === 'terminated') {
      const which = g instanceof EventLoop ? 'event loop' : 'event loop group'
      throw rejected(`${what}: the ${which} is shut down (a loop is '${s}'; shutdownGracefully was called): use a running one`)
    }
  }
}

function checkGroup(name: string, g: unknown): Loops {
  if (!(g instanceof EventLoop) && !(g instanceof EventLoopGroup)) {
    throw invalidArgType(name, 'EventLoopGroup or EventLoop', g)
  }
  return g
}

function checkInit(init: unknown): ChannelInitializer {
  checkFunction('init', init)
  return init as ChannelInitializer
}

function checkPort(port: unknown): number {
  checkNumber('port', port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new NetloopError('ERR_SOCKET_BAD_PORT', `Port should be >= 0 and < 65536. Received ${port}.`)
  }
  return port
}

async function resolveHost(host: unknown): Promise<string> {
  if (typeof host !== 'string') {
    throw invalidArgType('host', 'string', host)
  }
  if (isIP(host)) return host
  try {
    return (await lookup(host)).address
  } catch (e) {
    throw dnsError(e, host)
  }
}

/** A native call that makes a channel (it throws when the loop is shut down). */
function open<T>(fn: () => T): T {
  try {
    return fn()
  } catch (e) {
    throw fromNative(e)
  }
}

function setOption(target: ChannelOptions, name: ChannelOptionName, value: unknown): void {
  encodeOption(name, value)
  ;(target as Record<string, unknown>)[name] = value
}

/** Sets up and binds server channels. */
export class ServerBootstrap {
  #boss: Loops | undefined
  #workers: Loops | undefined
  #options: ChannelOptions = {}
  #childOptions: ChannelOptions = {}
  #childInit: ChannelInitializer | undefined
  #serverInit: ChannelInitializer | undefined

  /** The loops of the server channel (`boss`) and of accepted channels (`workers`, default: `boss`). */
  group(boss: Loops, workers?: Loops): this {
    this.#boss = checkGroup('boss', boss)
    this.#workers = workers === undefined ? boss : checkGroup('workers', workers)
    return this
  }

  /** An option of the server channel (`soBacklog`, `soReuseaddr`, `autoRead`, ...), checked at once. */
  option<K extends ChannelOptionName>(name: K, value: NonNullable<ChannelOptions[K]>): this {
    setOption(this.#options, name, value)
    return this
  }

  /** An option of every accepted channel (`tcpNoDelay`, water marks, `autoRead`, ...). */
  childOption<K extends ChannelOptionName>(name: K, value: NonNullable<ChannelOptions[K]>): this {
    setOption(this.#childOptions, name, value)
    return this
  }

  /** Sets up each accepted channel's pipeline, on the channel's loop. */
  childHandler(init: ChannelInitializer): this {
    this.#childInit = checkInit(init)
    return this
  }

  /**
   * The server channel's own handler (Netty's `ServerBootstrap.handler`): a handler, added
   * last, or an initializer of the server channel's pipeline. It sees the server channel's
   * events (`channelRegistered`, `channelActive`, `channelInactive`, ...) and its exceptions
   * (an accept failure such as `EMFILE`), and the exceptions of accepted channels that arrive
   * after those channels closed (their handlers are gone by then), with the channel's id as
   * the error's `channelId`.
   */
  handler(handler: ChannelHandler | ChannelInitializer): this {
    if (typeof handler === 'function') this.#serverInit = handler
    else if (typeof handler === 'object' && handler !== null) this.#serverInit = (ch) => void ch.pipeline.addLast(handler)
    else throw invalidArgType('handler', 'object or function', handler)
    return this
  }

  /**
   * Binds a server channel to `port` on `host` (default `0.0.0.0`); resolves to the server
   * channel (`bind(0)` picks a free port: see `localAddress`). Rejects with `EADDRINUSE`, ...
   *
   * With a worker group as `workers`, the boss loop (on this thread) hands each accepted
   * connection to the next worker loop; with `option('soReusePort', true)` (or the worker
   * group as boss too) every worker binds its own listener and the kernel spreads
   * connections. The workers' module sets channels up: `childHandler()` is not used then.
   *
   * `{ signal }` (node:net's `listen`): an abort before the server listens rejects with an
   * `AbortError` (its `cause`: the signal's reason); an abort afterwards closes the server.
   */
  async bind(port: number, host = '0.0.0.0', options?: AbortOptions): Promise<ServerChannel> {
    const signal = signalOf(options)
    if (signal?.aborted) throw abortError(signal)
    const binding = this.#bind(port, host)
    const server = await whenAborted(signal, binding, () => binding.then((s) => s.close(), () => undefined))
    closeOnAbort(signal, server)
    return server
  }

  async #bind(port: number, host: string): Promise<ServerChannel> {
    checkPort(port)
    if (!this.#boss || !this.#workers) throw new NetloopError('ERR_INVALID_STATE', 'ServerBootstrap: call group() before bind()')
    const workers = this.#workers
    if (workers instanceof EventLoopGroup && workers.isWorkerGroup) {
      if (this.#childInit) throw new NetloopError('ERR_INVALID_STATE', "ServerBootstrap: with a worker group, the workers' module sets channels up (childHandler() must not be given)")
      await workers.ready()
      const address = await resolveHost(host)
      if (this.#options.soReusePort || this.#boss === workers) {
        if (this.#serverInit) throw new NetloopError('ERR_INVALID_STATE', 'ServerBootstrap: with SO_REUSEPORT listeners on worker threads there is no server channel on this thread for handler()')
        return bindReusePort(workers, port, address, this.#options, this.#childOptions)
      }
      const loopIds = workers._workers.filter((w) => w.alive && w.loopId !== undefined).map((w) => w.loopId!)
      return this.#bindHere(port, address, loopIds, [], undefined)
    }
    if (!this.#childInit) throw new NetloopError('ERR_INVALID_STATE', 'ServerBootstrap: call childHandler() before bind()')
    checkRunning('ServerBootstrap.bind', this.#boss)
    checkRunning('ServerBootstrap.bind', workers)
    const address = await resolveHost(host)
    checkRunning('ServerBootstrap.bind', this.#boss)
    checkRunning('ServerBootstrap.bind', workers)
    const children = open(() => loopsOf(workers).map(hubOf))
    return this.#bindHere(port, address, children.map((h) => h.native.loopId), children, this.#childInit)
  }

  /**
   * A server channel on the boss loop (this thread) handing connections to `loopIds`; those
   * on this thread (`children`, their hubs) make them JS channels with `init`.
   */
  async #bindHere(port: number, address: string, loopIds: number[], children: ChannelHub[], init: ChannelInitializer | undefined): Promise<Channel> {
    const [names, values] = encodeOptions(this.#options)
    const [childNames, childValues] = encodeOptions(this.#childOptions)
    const hub = open(() => hubOf(nextOf(this.#boss!)))
    const id = open(() => hub.native.openServer(names, values, childNames, childValues, loopIds))
    const server = new Channel(hub, id)
    const acceptor: ServerAcceptor = {
      accept(childHub: ChannelHub, childId: number) {
        const ch = new Channel(childHub, childId, server)
        publishServerSocket(ch)
        if (initialize(ch, init)) {
          ch.pipeline._compact()
          childHub.register(ch)
        }
      },
    }
    for (const child of children) child.servers.set(id, acceptor)
    server.closeFuture.then(() => children.forEach((child) => child.servers.delete(id)))
    if (!initialize(server, this.#serverInit)) throw new NetloopError('ERR_CHANNEL_CLOSED', 'the server channel initializer threw')
    hub.register(server)
    const p = new ChannelPromise(NaN)
    const pid = hub.promiseFor(p)
    hub.sync()
    hub.native.bind(id, address, port, pid)
    try {
      await p.promise
    } catch (e) {
      await server.close().catch(() => undefined) // the bind's error is the one to report
      throw socketError(e, 'bind', address, port)
    }
    publishListen(server, port, address)
    return server
  }
}

/**
 * Every worker loop binds its own listener on the port (`SO_REUSEPORT`); the first one picks
 * the port when `port` is 0. The returned object stands for all of them.
 */
async function bindReusePort(group: EventLoopGroup, port: number, address: string, options: ChannelOptions, childOptions: ChannelOptions): Promise<ServerChannel> {
  const live = group._workers.filter((w) => w.alive)
  if (live.length === 0) throw new NetloopError('ERR_WORKER_EXITED', 'no worker loop is running')
  const opts = { ...options, soReusePort: true }
  const first = await live[0].request<number>({ t: 'bind', port, host: address, options: opts, childOptions })
  await Promise.all(live.slice(1).map((w) => w.request({ t: 'bind', port: first, host: address, options: opts, childOptions })))
  const server = new ReusePortServer(group, address, first)
  publishListen(server, port, address)
  return server
}

let nextReusePortId = -1

/** The listeners of a worker group on one port, as one server channel. */
class ReusePortServer implements ServerChannel {
  readonly id = nextReusePortId--
  readonly localAddress: AddressInfo
  #open = true
  #resolveClose!: () => void
  readonly closeFuture = new Promise<void>((r) => (this.#resolveClose = r))

  constructor(
    readonly group: EventLoopGroup,
    address: string,
    port: number,
  ) {
    this.localAddress = { address, port, family: isIP(address) === 6 ? 'IPv6' : 'IPv4' }
    group.terminationFuture().then(() => this.#closed())
  }

  get isOpen(): boolean {
    return this.#open
  }

  #closed(): void {
    this.#open = false
    this.#resolveClose()
  }

  /** Closes every worker's listener (accepted channels stay open). */
  async close(): Promise<void> {
    await Promise.all(this.group._workers.filter((w) => w.alive).map((w) => w.request({ t: 'closeServers' }).catch(() => undefined)))
    this.#closed()
  }

  ref(): this {
    return this
  }

  unref(): this {
    return this
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }
}

/** Sets up and connects client channels. */
export class Bootstrap {
  #group: Loops | undefined
  #options: ChannelOptions = {}
  #init: ChannelInitializer | undefined

  group(group: Loops): this {
    this.#group = checkGroup('group', group)
    return this
  }

  /** An option of the channel (`connectTimeoutMillis`, `tcpNoDelay`, ...), checked at once. */
  option<K extends ChannelOptionName>(name: K, value: NonNullable<ChannelOptions[K]>): this {
    setOption(this.#options, name, value)
    return this
  }

  /** Sets up the channel's pipeline, on its loop, before it connects. */
  handler(init: ChannelInitializer): this {
    this.#init = checkInit(init)
    return this
  }

  /**
   * Connects to `host:port`; resolves to the connected channel. Rejects with `ECONNREFUSED`,
   * `ETIMEDOUT` (after `connectTimeoutMillis`), ...; the channel is closed then.
   *
   * `{ signal }` (node:net's): an abort while connecting closes the half-open channel and
   * rejects with an `AbortError` (its `cause`: the signal's reason); an abort afterwards
   * closes the channel; an already-aborted signal rejects at once.
   */
  connect(port: number, host = '127.0.0.1', options?: AbortOptions): Promise<Channel> {
    return traceConnect(() => this.#connect(port, host, options), port, host)
  }

  async #connect(port: number, host: string, options: AbortOptions | undefined): Promise<Channel> {
    checkPort(port)
    const signal = signalOf(options)
    if (signal?.aborted) throw abortError(signal)
    if (!this.#group) throw new NetloopError('ERR_INVALID_STATE', 'Bootstrap: call group() before connect()')
    checkRunning('Bootstrap.connect', this.#group)
    const [names, values] = encodeOptions(this.#options)
    const address = await resolveHost(host)
    if (signal?.aborted) throw abortError(signal)
    checkRunning('Bootstrap.connect', this.#group)
    const hub = open(() => hubOf(nextOf(this.#group!)))
    const id = open(() => hub.native.openClient(names, values))
    const ch = new Channel(hub, id)
    ch._connectHost = host
    publishClientSocket(ch)
    if (!initialize(ch, this.#init)) throw new NetloopError('ERR_CHANNEL_CLOSED', 'the channel initializer threw')
    closeOnAbort(signal, ch)
    hub.register(ch)
    const p = new ChannelPromise(NaN)
    const pid = hub.promiseFor(p)
    hub.sync()
    hub.native.connect(id, address, port, pid)
    try {
      await whenAborted(signal, p.promise)
      // With an SslHandler in the pipeline, connected means the handshake completed (node:tls).
      const tls = tlsHandlerOf(ch)
      if (tls) await whenAborted(signal, tls.handshakeFuture())
    } catch (e) {
      await ch.close().catch(() => undefined) // the connect's error is the one to report
      if (e instanceof AbortError) throw e
      throw socketError(e, 'connect', address, port)
    }
    return ch
  }
}
