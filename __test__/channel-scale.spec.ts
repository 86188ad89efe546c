import test from 'ava'
import { execFileSync } from 'node:child_process'
import * as net from 'node:net'
import { join } from 'node:path'

import { type Channel, LineBasedFrameDecoder } from '../index'
import { collect, dial, loopFor, netClient, serve, until } from './channel-helpers'

test('one loop serves 1,000 connections at once, every byte echoed to its sender', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => ch.pipeline.addLast('echo', { channelRead: (ctx, m) => ctx.writeAndFlush(m) }))
  const clients: Channel[] = []
  const got = new Map<number, Buffer[]>()
  for (let i = 0; i < 1000; i++) {
    const chunks: Buffer[] = []
    const ch = await dial(loop, port, (c) => c.pipeline.addLast('r', { channelRead: (_ctx, m: Buffer) => void chunks.push(Buffer.from(m)) }))
    got.set(i, chunks)
    clients.push(ch)
  }
  t.is(loop.metrics().channels, 2001)
  clients.forEach((ch, i) => ch.writeAndFlush(`client ${i};`))
  await until(() => clients.every((_c, i) => Buffer.concat(got.get(i)!).toString() === `client ${i};`), 20_000)
  await Promise.all(clients.map((c) => c.close()))
  await until(() => loop.metrics().channels <= 2, 20_000)
  t.pass()
})

test('a received Buffer kept by JS stays intact after 10,000 later reads', async (t) => {
  const loop = loopFor(t)
  let first: Buffer | undefined
  let count = 0
  const { port } = await serve(t, loop, (ch) =>
    ch.pipeline.addLast('framer', new LineBasedFrameDecoder(100)).addLast('keep', {
      channelRead: (_ctx, m: Buffer) => {
        if (!first) first = m
        count++
      },
    }),
  )
  const s = await netClient(t, port)
  s.write('the first line, kept\n')
  const filler = Buffer.from('x'.repeat(60) + '\n')
  for (let i = 0; i < 10_000; i++) s.write(filler)
  await until(() => count === 10_001, 30_000)
  t.is(first!.toString(), 'the first line, kept')
})

test('a 50-connection echo makes fewer than one JS<->native call per message', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => ch.pipeline.addLast('echo', { channelRead: (ctx, m) => ctx.writeAndFlush(m) }))
  const rounds = 200
  const sockets = await Promise.all(Array.from({ length: 50 }, () => netClient(t, port)))
  const before = loop.metrics()
  await Promise.all(
    sockets.map(
      (s) =>
        new Promise<void>((resolve) => {
          let n = 0
          const msg = Buffer.alloc(64, 1)
          s.on('data', (d) => {
            n += d.length
            if (n >= rounds * 64) resolve()
            else if (n % 64 === 0) s.write(msg)
          })
          s.write(msg)
        }),
    ),
  )
  const after = loop.metrics()
  const messages = 50 * rounds
  const calls = after.deliveries - before.deliveries + (after.jsToNativeCalls - before.jsToNativeCalls)
  t.log(`${messages} messages, ${after.deliveries - before.deliveries} deliveries, ${after.jsToNativeCalls - before.jsToNativeCalls} JS->native calls`)
  t.true(calls / messages < 1, `${calls} calls for ${messages} messages`)
  t.is(after.bytesIn - before.bytesIn, messages * 64)
})

const index = join(__dirname, '..', 'index.js')
function run(script: string): string {
  return execFileSync(process.execPath, ['-e', `const nl = require(${JSON.stringify(index)});\n(async () => {\n${script}\n})()`], { encoding: 'utf8', timeout: 20_000 })
}

test('a bound server keeps the process alive like node:net; unref() lets it exit', async (t) => {
  // Alive: the child only exits because the server closes itself after its first connection.
  const alive = run(`
    const loop = new nl.EventLoop()
    const server = await new nl.ServerBootstrap().group(loop).childHandler((ch) => {
      ch.pipeline.addLast('bye', { channelActive: (ctx) => { ctx.close(); server.close().then(() => console.log('closed')) } })
    }).bind(0, '127.0.0.1')
    console.log('bound')
    require('net').connect(server.localAddress.port, '127.0.0.1').on('error', () => {}).resume()
  `)
  t.is(alive, 'bound\nclosed\n')
  const gone = run(`
    const loop = new nl.EventLoop()
    const server = await new nl.ServerBootstrap().group(loop).childHandler(() => {}).bind(0, '127.0.0.1')
    server.unref()
    console.log('bound')
  `)
  t.is(gone, 'bound\n')
})
