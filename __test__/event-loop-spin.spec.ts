import test from 'ava'

import './helpers'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { EventLoop } from '../index'
import { serve, sleep, until } from './channel-helpers'
import { withLoop } from './helpers'

const index = join(__dirname, '..', 'index.js')

test('spinBeforeSleepMicros outside 0..1000, or not an integer, throws ERR_OUT_OF_RANGE', (t) => {
  for (const bad of [-1, 1001, 2.5, Number.NaN, Infinity]) {
    t.throws(() => new EventLoop({ spinBeforeSleepMicros: bad }), { code: 'ERR_OUT_OF_RANGE' }, String(bad))
  }
  t.throws(() => new EventLoop({ spinBeforeSleepMicros: '20' as never }), { code: 'ERR_INVALID_ARG_TYPE' })
})

test('spinBeforeSleepMicros 0 and 1000 are accepted; by default and with 0 a loop never spins', async (t) => {
  const still = withLoop(t, { spinBeforeSleepMicros: 0 })
  const byDefault = withLoop(t)
  withLoop(t, { spinBeforeSleepMicros: 1000 })
  for (let i = 0; i < 20; i++) {
    await new Promise<void>((r) => still.execute(r))
    await new Promise<void>((r) => byDefault.execute(r))
  }
  t.is(still._spinPolls, 0)
  t.is(byDefault._spinPolls, 0)
})

test.serial('an idle loop with a spin budget stops spinning and burns no CPU', async (t) => {
  const loop = withLoop(t, { spinBeforeSleepMicros: 1000 })
  // Work that ends: the loop spins after it at most a budget per wait, then goes cold.
  for (let i = 0; i < 50; i++) await new Promise<void>((r) => loop.execute(r))
  await sleep(100)
  const polls = loop._spinPolls
  const cpu = process.cpuUsage()
  const wall = performance.now()
  await sleep(300)
  const used = process.cpuUsage(cpu)
  const elapsed = performance.now() - wall
  t.is(loop._spinPolls, polls, 'no spin while idle')
  // A thread spinning the whole time would use about `elapsed` ms; an idle one close to none.
  t.true((used.user + used.system) / 1000 < elapsed / 3, `CPU ${(used.user + used.system) / 1000} ms in ${elapsed} ms`)
})

test.serial('a loop kept busy by a peer spins, yet setImmediate and timers keep their turn', async (t) => {
  const loop = withLoop(t, { spinBeforeSleepMicros: 1000 })
  let echoed = 0
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('echo', {
      channelRead: (ctx, msg) => {
        echoed++
        ctx.writeAndFlush(msg)
      },
      // The peer's thread is terminated at the end: resets are expected.
      exceptionCaught: (ctx) => void ctx.close(),
    })
  })
  // The peer runs on another thread: 8 connections of ping-pong for as long as the test runs.
  const peer = new Worker(
    `
    const net = require('node:net')
    const { workerData, parentPort } = require('node:worker_threads')
    let stop = false
    parentPort.on('message', () => { stop = true; process.exit(0) })
    for (let i = 0; i < 8; i++) {
      const s = net.connect(workerData.port, '127.0.0.1', () => s.write(Buffer.alloc(64, i)))
      s.setNoDelay(true)
      s.on('data', (d) => { if (!stop) s.write(d) })
      s.on('error', () => {})
    }
    parentPort.postMessage('started')
    `,
    { eval: true, workerData: { port } },
  )
  t.teardown(() => peer.terminate())
  await new Promise((r) => peer.once('message', r))
  await until(() => echoed > 100 && loop._spinPolls > 0)

  // While the traffic runs, the thread's own phases come round: setImmediate chains and timers.
  let immediates = 0
  let maxGap = 0
  let last = performance.now()
  let running = true
  const chain = () => {
    const now = performance.now()
    maxGap = Math.max(maxGap, now - last)
    last = now
    immediates++
    if (running) setImmediate(chain)
  }
  setImmediate(chain)
  let timers = 0
  const interval = setInterval(() => timers++, 10)
  await sleep(500)
  running = false
  clearInterval(interval)
  peer.postMessage('stop')
  const during = echoed
  t.true(during > 200, `${during} messages echoed`)
  t.true(immediates > 20, `${immediates} setImmediate turns in 500 ms`)
  t.true(timers > 1, `${timers} interval runs in 500 ms`)
  // Each libuv turn waits at most one iteration, the 1 ms window and one more iteration; an
  // unbounded spin would hold the thread for the whole 500 ms. Generous: the machine is shared.
  t.true(maxGap < 400, `longest gap between setImmediate turns ${maxGap.toFixed(1)} ms`)
})

test('a loop with a spin budget does not keep the process alive once idle, and a ref()ed one does', (t) => {
  const run = (ref: boolean) =>
    execFileSync(
      process.execPath,
      [
        '-e',
        `const { EventLoop } = require(${JSON.stringify(index)})
        const loop = new EventLoop({ spinBeforeSleepMicros: 1000 })
        ${ref ? 'loop.ref()' : ''}
        loop._onRemoteTask = () => { console.log('remote task ran'); loop.shutdownGracefully(0, 100).then(() => console.log('terminated')) }
        for (let i = 0; i < 10; i++) loop.execute(() => {})
        loop._postFromOtherThread(1, 100)`,
      ],
      { encoding: 'utf8', timeout: 20_000 },
    )
  t.is(run(false), '')
  t.is(run(true), 'remote task ran\nterminated\n')
})

for (const [given, spins] of [
  [undefined, true],
  [0, false],
] as const) {
  test.serial(`a worker group's loops ${spins ? 'spin by default' : 'do not spin with spinBeforeSleepMicros 0'}`, async (t) => {
    const { EventLoopGroup, ServerBootstrap } = await import('../index')
    const group = new EventLoopGroup({
      threads: 1,
      module: join(__dirname, 'fixtures', 'spin-report-module.ts'),
      ...(given === undefined ? {} : { spinBeforeSleepMicros: given }),
    })
    t.teardown(() => group.shutdownGracefully(0, 1000))
    const boss = new EventLoop()
    t.teardown(() => boss.shutdownGracefully(0, 1000))
    const server = await new ServerBootstrap().group(boss, group).bind(0, '127.0.0.1')
    t.teardown(() => server.close())
    const net = await import('node:net')
    // 8 connections of 64 B ping-pong keep the worker loop busy for a while.
    const sockets = Array.from({ length: 8 }, () => net.connect(server.localAddress!.port, '127.0.0.1'))
    let echoes = 0
    for (const s of sockets) {
      s.setNoDelay(true)
      s.on('connect', () => s.write(Buffer.alloc(64, 1)))
      s.on('data', (d) => {
        echoes++
        if (echoes < 20_000) s.write(d)
      })
      s.on('error', () => {})
    }
    t.teardown(() => sockets.forEach((s) => s.destroy()))
    await until(() => echoes >= 20_000, 30_000)
    const ask = net.connect(server.localAddress!.port, '127.0.0.1')
    t.teardown(() => ask.destroy())
    let answer = ''
    ask.on('data', (d) => (answer += d.toString()))
    ask.write('spin?\n')
    await until(() => answer.endsWith('\n'), 10_000)
    const polls = Number(/spinPolls=(\d+)/.exec(answer)![1])
    if (spins) t.true(polls > 0, `${polls} spin polls`)
    else t.is(polls, 0)
  })
}
