import test from 'ava'
import * as net from 'node:net'

import { type Channel, EventLoop, ServerBootstrap } from '../index'
import { until } from './channel-helpers'

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s))
    s.on('error', reject)
  })
}

function closedByServer(s: net.Socket): Promise<boolean> {
  return new Promise((resolve) => {
    s.on('error', () => undefined)
    s.on('close', () => resolve(true))
  })
}

test('maxConnections closes the connections beyond it at once and counts them in the loop metrics', async (t) => {
  const loop = new EventLoop()
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  const children: Channel[] = []
  const server = await new ServerBootstrap()
    .group(loop)
    .option('maxConnections', 2)
    .childHandler((ch) => void children.push(ch))
    .bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  const port = server.localAddress!.port
  const sockets: net.Socket[] = []
  t.teardown(() => sockets.forEach((s) => s.destroy()))
  sockets.push(await connect(port), await connect(port))
  await until(() => children.length === 2)
  t.is(loop.metrics().refusedConnections, 0)

  const third = await connect(port)
  sockets.push(third)
  t.true(await closedByServer(third), 'the third client sees its connection closed')
  await until(() => loop.metrics().refusedConnections === 1)
  t.is(children.length, 2, 'no channel was made for it')

  // A closed connection frees its place.
  sockets[0].end()
  await children[0].closeFuture
  sockets.push(await connect(port))
  await until(() => children.length === 3)
  t.is(loop.metrics().refusedConnections, 1)
})

test('maxConnections takes a non-negative integer', (t) => {
  const b = new ServerBootstrap()
  t.throws(() => b.option('maxConnections', -1), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => b.option('maxConnections', 1.5), { code: 'ERR_OUT_OF_RANGE' })
  t.notThrows(() => b.option('maxConnections', 0))
})
