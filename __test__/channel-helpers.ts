import * as net from 'node:net'
import {
  Bootstrap,
  type Channel,
  type ChannelHandler,
  ChannelPipeline,
  EventLoop,
  ServerBootstrap,
  type ChannelOptions,
} from '../index'

export { sleep, until } from './helpers'

type Teardown = { teardown(fn: () => unknown): void }

/** A loop, shut down when the test ends. */
export function loopFor(t: Teardown): EventLoop {
  const loop = new EventLoop()
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  return loop
}

/** A server on 127.0.0.1 with a free port whose accepted channels get `init`; closed at teardown. */
export async function serve(
  t: Teardown,
  loop: EventLoop,
  init: (ch: Channel) => void,
  childOptions: ChannelOptions = {},
): Promise<{ server: Channel; port: number; children: Channel[] }> {
  const children: Channel[] = []
  const b = new ServerBootstrap().group(loop).childHandler((ch) => {
    children.push(ch)
    init(ch)
  })
  for (const [k, v] of Object.entries(childOptions)) b.childOption(k as never, v as never)
  const server = await b.bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  return { server, port: server.localAddress!.port, children }
}

/** A netloop client channel connected to `port`. */
export async function dial(loop: EventLoop, port: number, init: (ch: Channel) => void, options: ChannelOptions = {}): Promise<Channel> {
  const b = new Bootstrap().group(loop).handler(init)
  for (const [k, v] of Object.entries(options)) b.option(k as never, v as never)
  return b.connect(port, '127.0.0.1')
}

/** A node:net client; resolves once connected. Destroyed at teardown. */
export function netClient(t: Teardown, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s))
    s.on('error', reject)
    t.teardown(() => s.destroy())
  })
}

/** A node:net client that collects what it reads as latin1 text (`got()`). */
export async function textClient(port: number): Promise<{ s: net.Socket; got: () => string }> {
  const s = net.connect(port, '127.0.0.1')
  await new Promise<void>((resolve, reject) => s.once('connect', resolve).once('error', reject))
  let out = ''
  s.on('data', (d) => (out += d.toString('latin1')))
  return { s, got: () => out }
}

/** `n` bytes of a pattern that depends on `seed` (so that a shifted or mixed-up copy differs). */
export function pattern(n: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(n)
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff
  return b
}

/** Collects everything a socket receives until it ends. */
export function collect(s: net.Socket): { data: () => Buffer; ended: Promise<void> } {
  const chunks: Buffer[] = []
  s.on('data', (d) => chunks.push(d))
  const ended = new Promise<void>((r) => s.on('close', () => r()))
  return { data: () => Buffer.concat(chunks), ended }
}

/** A handler that records the events it sees (and passes them on). */
export function recorder(log: string[], tag = ''): ChannelHandler {
  const p = (s: string) => log.push(tag + s)
  return {
    channelRegistered(ctx) {
      p('registered')
      ctx.fireChannelRegistered()
    },
    channelActive(ctx) {
      p('active')
      ctx.fireChannelActive()
    },
    channelRead(ctx, msg) {
      p(`read:${Buffer.isBuffer(msg) ? msg.toString() : JSON.stringify(msg)}`)
      ctx.fireChannelRead(msg)
    },
    channelReadComplete(ctx) {
      p('readComplete')
      ctx.fireChannelReadComplete()
    },
    channelInactive(ctx) {
      p('inactive')
      ctx.fireChannelInactive()
    },
    channelUnregistered(ctx) {
      p('unregistered')
      ctx.fireChannelUnregistered()
    },
  }
}

/** Captures exceptions that reach the tail of any pipeline while the test runs. */
export function captureUnhandled(t: Teardown): Array<{ error: unknown; channel: Channel }> {
  const seen: Array<{ error: unknown; channel: Channel }> = []
  ChannelPipeline.setUnhandledExceptionHandler((error, channel) => seen.push({ error, channel }))
  // The default again: resets from tests running meanwhile stay quiet, anything else prints.
  t.teardown(() => ChannelPipeline.setUnhandledExceptionHandler(undefined))
  return seen
}

/** Sends `n` lines one at a time, each after `reply` bytes came back for the one before. */
export async function pingPong(s: net.Socket, n: number, reply = 4): Promise<void> {
  let got = 0
  let want = 0
  let next: (() => void) | undefined
  s.on('data', (d: Buffer) => {
    got += d.length
    if (got >= want) next?.()
  })
  for (let i = 0; i < n; i++) {
    want += reply
    const echoed = new Promise<void>((resolve) => (next = resolve))
    s.write(`${String(i % 1000).padStart(3, '0')}\n`)
    await echoed
  }
}

/** The records (events) and ops `loop` counted for `n` ping-pongs on `s`, after 10 to warm up. */
export async function crossingsFor(loop: EventLoop, s: net.Socket, n: number): Promise<{ events: number; ops: number }> {
  await pingPong(s, 10)
  const before = loop.metrics()
  await pingPong(s, n)
  const after = loop.metrics()
  return { events: after.events! - before.events!, ops: after.ops! - before.ops! }
}
