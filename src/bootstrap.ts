/**
 * `ServerBootstrap` and `Bootstrap`: Netty's way to set up server and client channels.
 * `init(ch)` is Netty's `ChannelInitializer`: it runs once per channel, on the channel's
 * loop, before the channel is registered, so its handlers see `channelRegistered` and
 * `channelActive`.
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { Channel } from './channel'
import { NetloopError } from './errors'
import { EventLoopGroup } from './group'
import { type ChannelHub, hubOf, servers } from './hub'
import { EventLoop } from './loop'
import { encodeOption, encodeOptions, type ChannelOptionName, type ChannelOptions } from './options'
import { ChannelPromise } from './promise'

/** Sets up a channel's pipeline. May be async only in what it does later: it runs synchronously. */
export type ChannelInitializer = (ch: Channel) => void

type Loops = EventLoop | EventLoopGroup

function loopsOf(g: Loops): EventLoop[] {
  return g instanceof EventLoop ? [g] : [...g.loops]
}

function nextOf(g: Loops): EventLoop {
  return g instanceof EventLoop ? g : g.next()
}

function checkGroup(name: string, g: unknown): Loops {
  if (!(g instanceof EventLoop) && !(g instanceof EventLoopGroup)) {
    throw new NetloopError('ERR_INVALID_ARG_TYPE', `The "${name}" argument must be an EventLoopGroup or an EventLoop. Received ${g === null ? 'null' : `type ${typeof g}`}`)
  }
  return g
}

function checkInit(init: unknown): ChannelInitializer {
  if (typeof init !== 'function') {
    throw new NetloopError('ERR_INVALID_ARG_TYPE', `The "init" argument must be of type function. Received type ${typeof init}`)
  }
  return init as ChannelInitializer
}

function checkPort(port: unknown): number {
  if (typeof port !== 'number') {
    throw new NetloopError('ERR_INVALID_ARG_TYPE', `The "port" argument must be of type number. Received type ${typeof port}${typeof port === 'string' ? ` ('${port}')` : ''}`)
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new NetloopError('ERR_SOCKET_BAD_PORT', `Port should be >= 0 and < 65536. Received ${port}.`)
  }
  return port
}

async function resolveHost(host: unknown): Promise<string> {
  if (typeof host !== 'string') {
    throw new NetloopError('ERR_INVALID_ARG_TYPE', `The "host" argument must be of type string. Received type ${typeof host}`)
  }
  if (isIP(host)) return host
  const { address } = await lookup(host)
  return address
}

/** Runs `init` for `ch`; a throwing initializer closes the channel and reports the error. */
function initialize(ch: Channel, init: ChannelInitializer | undefined): boolean {
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
   * Binds a server channel to `port` on `host` (default `0.0.0.0`); resolves to the server
   * channel (`bind(0)` picks a free port: see `localAddress`). Rejects with `EADDRINUSE`, ...
   */
  async bind(port: number, host = '0.0.0.0'): Promise<Channel> {
    checkPort(port)
    if (!this.#boss || !this.#workers) throw new NetloopError('ERR_INVALID_STATE', 'ServerBootstrap: call group() before bind()')
    if (!this.#childInit) throw new NetloopError('ERR_INVALID_STATE', 'ServerBootstrap: call childHandler() before bind()')
    const [names, values] = encodeOptions(this.#options)
    const [childNames, childValues] = encodeOptions(this.#childOptions)
    const children = loopsOf(this.#workers).map((l) => hubOf(l))
    const address = await resolveHost(host)
    const hub = hubOf(nextOf(this.#boss))
    const id = hub.native.openServer(names, values, childNames, childValues, children.map((h) => h.native.id))
    const server = new Channel(hub, id)
    const init = this.#childInit
    servers.set(id, {
      accept(childHub: ChannelHub, childId: number) {
        const ch = new Channel(childHub, childId, server)
        if (initialize(ch, init)) childHub.register(ch)
      },
    })
    server.closeFuture.then(() => servers.delete(id))
    hub.register(server)
    const p = new ChannelPromise(NaN)
    const pid = hub.promiseFor(p)
    hub.sync()
    hub.native.bind(id, address, port, pid)
    try {
      await p.promise
    } catch (e) {
      await server.close()
      throw e
    }
    return server
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
   */
  async connect(port: number, host = '127.0.0.1'): Promise<Channel> {
    checkPort(port)
    if (!this.#group) throw new NetloopError('ERR_INVALID_STATE', 'Bootstrap: call group() before connect()')
    const [names, values] = encodeOptions(this.#options)
    const address = await resolveHost(host)
    const hub = hubOf(nextOf(this.#group))
    const id = hub.native.openClient(names, values)
    const ch = new Channel(hub, id)
    if (!initialize(ch, this.#init)) throw new NetloopError('ERR_CHANNEL_CLOSED', 'the channel initializer threw')
    hub.register(ch)
    const p = new ChannelPromise(NaN)
    const pid = hub.promiseFor(p)
    hub.sync()
    hub.native.connect(id, address, port, pid)
    try {
      await p.promise
    } catch (e) {
      await ch.close()
      throw e
    }
    return ch
  }
}
