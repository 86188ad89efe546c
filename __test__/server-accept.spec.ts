import test from 'ava'
import * as net from 'node:net'

import { type Channel, EventLoop, EventLoopGroup, ServerBootstrap } from '../index'
import { until } from './helpers'

// What a server's acceptor (the transport's ServerBootstrapAcceptor with the binding's hook)
// does with each accepted socket: which loop gets it, with which options.

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s))
    s.on('error', reject)
  })
}

test('accepted channels go to the child loops round robin, in order, each with the child options', async (t) => {
  const boss = new EventLoop()
  const children = new EventLoopGroup(3)
  t.teardown(async () => {
    await children.shutdownGracefully(0, 1000)
    await boss.shutdownGracefully(0, 1000)
  })
  const accepted: Channel[] = []
  const server = await new ServerBootstrap()
    .group(boss, children)
    .childOption('tcpNoDelay', false)
    .childOption('writeBufferHighWaterMark', 123_456)
    .childHandler((ch) => void accepted.push(ch))
    .bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  const sockets: net.Socket[] = []
  t.teardown(() => sockets.forEach((s) => s.destroy()))
  for (let i = 0; i < 6; i++) {
    sockets.push(await connect(server.localAddress!.port))
    await until(() => accepted.length === i + 1)
  }
  t.deepEqual(
    accepted.map((ch) => children.loops.indexOf(ch.eventLoop)),
    [0, 1, 2, 0, 1, 2],
  )
  for (const ch of accepted) {
    t.false(ch.getOption('tcpNoDelay'))
    t.is(ch.getOption('writeBufferHighWaterMark'), 123_456)
  }
  // One child changing an option leaves the others' (shared until then) as they were.
  accepted[0].setOption('writeBufferHighWaterMark', 200_000)
  t.is(accepted[1].getOption('writeBufferHighWaterMark'), 123_456)
})

test('a child loop that shut down is skipped; the others keep taking connections in turn', async (t) => {
  const boss = new EventLoop()
  const children = new EventLoopGroup(3)
  t.teardown(async () => {
    await children.shutdownGracefully(0, 1000)
    await boss.shutdownGracefully(0, 1000)
  })
  const accepted: Channel[] = []
  const server = await new ServerBootstrap()
    .group(boss, children)
    .childHandler((ch) => void accepted.push(ch))
    .bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  await children.loops[1].shutdownGracefully(0, 1000)
  const sockets: net.Socket[] = []
  t.teardown(() => sockets.forEach((s) => s.destroy()))
  for (let i = 0; i < 4; i++) {
    sockets.push(await connect(server.localAddress!.port))
    await until(() => accepted.length === i + 1)
  }
  t.deepEqual(
    accepted.map((ch) => children.loops.indexOf(ch.eventLoop)),
    [0, 2, 0, 2],
  )
})

test("a server is known to its child loops' hubs while it is open, and to no other", async (t) => {
  const boss = new EventLoop()
  const children = new EventLoopGroup(2)
  t.teardown(async () => {
    await children.shutdownGracefully(0, 1000)
    await boss.shutdownGracefully(0, 1000)
  })
  const server = await new ServerBootstrap()
    .group(boss, children)
    .childHandler(() => {})
    .bind(0, '127.0.0.1')
  for (const l of children.loops) t.true(l._hub!.servers.has(server.id), `${l.name} knows the server`)
  t.is(boss._hub!.servers.size, 0, 'the boss loop is not a child loop')
  await server.close()
  for (const l of children.loops) t.is(l._hub!.servers.size, 0, `${l.name} forgot the server`)
})
