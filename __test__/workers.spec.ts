import test from 'ava'
import * as net from 'node:net'
import { join } from 'node:path'

import { EventLoop, EventLoopGroup, type LoopTermination, NetloopError, ServerBootstrap, writeToChannel } from '../index'
import { until } from './helpers'

const echoModule = join(__dirname, 'fixtures', 'echo-module.ts')

function workerGroup(t: { teardown(fn: () => unknown): void }, threads: number, workerData?: unknown): EventLoopGroup {
  const g = new EventLoopGroup({ threads, module: echoModule, workerData })
  t.teardown(() => g.shutdownGracefully(0, 2000))
  return g
}

function bossLoop(t: { teardown(fn: () => unknown): void }): EventLoop {
  const l = new EventLoop()
  t.teardown(() => l.shutdownGracefully(0, 1000))
  return l
}

/** Connects, reads the greeting line `thread=T channel=C`. */
function greeted(port: number): Promise<{ socket: net.Socket; thread: number; channel: number; rest: () => Buffer }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1')
    let buf = Buffer.alloc(0)
    let done = false
    s.on('error', reject)
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      const nl = buf.indexOf('\n')
      if (!done && nl >= 0) {
        done = true
        const m = /thread=(\d+) channel=(\d+)/.exec(buf.subarray(0, nl).toString())!
        buf = buf.subarray(nl + 1)
        resolve({ socket: s, thread: Number(m[1]), channel: Number(m[2]), rest: () => buf })
      }
    })
  })
}

/** Sends `n` random messages one at a time and checks each echo. */
async function echoChecked(port: number, n: number, size: number): Promise<void> {
  const s = net.connect(port, '127.0.0.1')
  await new Promise<void>((r, j) => s.once('connect', r).once('error', j))
  let pending: Buffer = Buffer.alloc(0)
  for (let i = 0; i < n; i++) {
    const msg = Buffer.alloc(size, (i * 7 + port) & 0xff)
    const back = new Promise<void>((resolve, reject) => {
      const onData = (d: Buffer) => {
        pending = Buffer.concat([pending, d])
        if (pending.length >= size) {
          s.off('data', onData)
          if (!pending.subarray(0, size).equals(msg)) reject(new Error('echo mismatch'))
          pending = pending.subarray(size)
          resolve()
        }
      }
      s.on('data', onData)
    })
    s.write(msg)
    await back
  }
  s.destroy()
}

test.serial('boss hand-off: 2 worker loops echo 200 concurrent connections, every byte checked, each worker busy', async (t) => {
  const workers = workerGroup(t, 2)
  const server = await new ServerBootstrap().group(bossLoop(t), workers).bind(0, '127.0.0.1')
  const port = server.localAddress!.port
  await Promise.all(Array.from({ length: 200 }, () => echoChecked(port, 20, 100)))
  const metrics = await workers.metrics()
  t.is(metrics.length, 2)
  for (const m of metrics) t.true(m.bytesIn >= 100 * 20 * 90, `each worker read a fair share: ${m.bytesIn}`)
  await server.close()
})

test.serial('both spreading modes put connections on every worker', async (t) => {
  for (const reusePort of [false, true]) {
    const workers = workerGroup(t, 2, { greet: true })
    const b = new ServerBootstrap().group(bossLoop(t), workers)
    if (reusePort) b.option('soReusePort', true)
    const server = await b.bind(0, '127.0.0.1')
    const threads = new Set<number>()
    for (let i = 0; i < 40 && threads.size < 2; i++) {
      const g = await greeted(server.localAddress!.port)
      threads.add(g.thread)
      g.socket.destroy()
    }
    t.is(threads.size, 2, reusePort ? 'reuse-port' : 'hand-off')
    await server.close()
    await workers.shutdownGracefully(0, 1000)
  }
})

test.serial('a worker killed mid-traffic does not crash the process: its loop is reported and new connections go to the others', async (t) => {
  const workers = workerGroup(t, 2, { greet: true })
  const ended: LoopTermination[] = []
  workers.on('loopTerminated', (info) => ended.push(info))
  const server = await new ServerBootstrap().group(bossLoop(t), workers).bind(0, '127.0.0.1')
  const port = server.localAddress!.port
  const a = await greeted(port)
  const b = await greeted(port)
  t.not(a.thread, b.thread)
  const closed = new Promise<void>((r) => a.socket.once('close', () => r()))
  a.socket.write('crash\n')
  await closed
  await until(() => ended.length === 1)
  t.is(ended[0].threadId, a.thread)
  t.is((ended[0].cause as NetloopError).code, 'ERR_WORKER_EXITED')
  for (let i = 0; i < 4; i++) {
    const c = await greeted(port)
    t.is(c.thread, b.thread)
    c.socket.destroy()
  }
  const c = await greeted(port)
  c.socket.write('still echoing\n')
  await until(() => c.rest().toString() === 'still echoing\n')
  t.is(c.thread, b.thread)
  c.socket.destroy()
  b.socket.destroy()
})

test.serial('a module that fails to load rejects bind with ERR_WORKER_INIT_FAILED and its cause', async (t) => {
  const workers = new EventLoopGroup({ threads: 1, module: join(__dirname, 'fixtures', 'broken-module.ts') })
  const err = await t.throwsAsync(new ServerBootstrap().group(bossLoop(t), workers).bind(0, '127.0.0.1'))
  t.is((err as NetloopError).code, 'ERR_WORKER_INIT_FAILED')
  t.regex(err!.message, /broken on purpose/)
  await workers.terminationFuture()
  t.true(workers.isTerminated)
})

test.serial('writes to a channel of a worker loop by id arrive in order', async (t) => {
  const workers = workerGroup(t, 2, { greet: true })
  const server = await new ServerBootstrap().group(bossLoop(t), workers).bind(0, '127.0.0.1')
  const g = await greeted(server.localAddress!.port)
  let text = g.rest().toString()
  g.socket.on('data', (d) => (text += d))
  for (let i = 0; i < 1000; i++) t.true(writeToChannel(g.channel, `${i},`))
  const expected = Array.from({ length: 1000 }, (_, i) => `${i},`).join('')
  await until(() => text.length >= expected.length)
  t.is(text, expected)
  t.false(writeToChannel(999_999_999, 'nobody'))
  g.socket.destroy()
})

test.serial('shutting a worker group down closes its channels and lets its threads exit', async (t) => {
  const workers = new EventLoopGroup({ threads: 2, module: echoModule })
  const server = await new ServerBootstrap().group(bossLoop(t), workers).bind(0, '127.0.0.1')
  const port = server.localAddress!.port
  const sockets = await Promise.all(
    Array.from({ length: 20 }, () => new Promise<net.Socket>((r) => { const s = net.connect(port, '127.0.0.1', () => r(s)) })),
  )
  let received = 0
  const closed = sockets.map((s) => new Promise<void>((r) => { s.on('data', (d) => (received += d.length)); s.on('close', () => r()) }))
  for (const s of sockets) s.write(Buffer.alloc(1000, 1))
  await until(() => received === 20 * 1000)
  await workers.shutdownGracefully(0, 2000)
  await Promise.all(closed)
  t.true(workers.isTerminated)
  await server.close()
})

test.serial('a worker group starts under process-wide node flags (they are not handed to workers)', (t) => {
  const { execFileSync } = require('node:child_process') as typeof import('node:child_process')
  const out = execFileSync(
    process.execPath,
    ['--max-old-space-size=512', '-e', `const g = new (require(${JSON.stringify(join(__dirname, '..', 'index.js'))}).EventLoopGroup)({ threads: 1, module: ${JSON.stringify(join(__dirname, 'fixtures', 'echo-module.ts'))} }); g.ready().then(() => { console.log('ready'); return g.shutdownGracefully(0, 500) })`],
    { encoding: 'utf8', timeout: 20_000 },
  )
  t.is(out, 'ready\n')
})
