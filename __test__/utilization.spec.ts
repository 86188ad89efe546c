// EventLoop.utilization() and EventLoopGroup.utilization(), as performance.eventLoopUtilization().
// Serial: a test spinning on this thread would count as another test's loop's idle time.
import test from 'ava'
import * as net from 'node:net'
import { join } from 'node:path'
import { EventLoop, EventLoopGroup, type LoopUtilization, ServerBootstrap } from '../index'
import { sleep, until, withLoop } from './helpers'

function spin(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end);
}

/** After the current loop iteration has ended (its time is counted then). */
const nextTurn = () => new Promise<void>((r) => setImmediate(r))

function valid(t: { true(v: boolean, m?: string): void }, u: LoopUtilization): void {
  t.true(u.idle >= 0 && u.active >= 0 && u.utilization >= 0 && u.utilization <= 1, JSON.stringify(u))
}

test.serial('a task that spins for 50 ms makes the loop busy: active >= 45 ms and utilization above 0.3 over that window', async (t) => {
  const loop = withLoop(t)
  const before = loop.utilization()
  valid(t, before)
  let ran = false
  loop.execute(() => {
    spin(50)
    ran = true
  })
  await until(() => ran)
  await nextTurn()
  const d = loop.utilization(before)
  valid(t, d)
  t.true(d.active >= 45, `active ${d.active}`)
  // The window also holds the polling of `until` and, on a loaded machine, time descheduled.
  t.true(d.utilization > 0.3, `utilization ${d.utilization}`)
})

test.serial('an idle loop shows low utilization over 200 ms', async (t) => {
  const loop = withLoop(t)
  loop.execute(() => undefined) // started and ran once
  await nextTurn()
  const before = loop.utilization()
  await sleep(200)
  const d = loop.utilization(before)
  valid(t, d)
  t.true(d.idle >= 150, `idle ${d.idle}`)
  t.true(d.utilization < 0.2, `utilization ${d.utilization}`)
})

test.serial('utilization(later, earlier) is the difference between two readings, as Node computes it', (t) => {
  const loop = withLoop(t)
  const a: LoopUtilization = { idle: 100, active: 20, utilization: 20 / 120 }
  const b: LoopUtilization = { idle: 160, active: 80, utilization: 80 / 240 }
  t.deepEqual(loop.utilization(b, a), { idle: 60, active: 60, utilization: 0.5 })
  const now = loop.utilization()
  t.true(now.idle + now.active >= 0)
})

test.serial('time spent in channel handlers counts as busy', async (t) => {
  const loop = withLoop(t)
  let reads = 0
  const server = await new ServerBootstrap()
    .group(loop)
    .childHandler((ch) => {
      ch.pipeline.addLast('slow', {
        channelRead() {
          spin(30)
          reads++
        },
      })
    })
    .bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  const before = loop.utilization()
  const s = net.connect(server.localAddress!.port, '127.0.0.1')
  t.teardown(() => s.destroy())
  s.write('a')
  await until(() => reads === 1)
  await nextTurn()
  const d = loop.utilization(before)
  t.true(d.active >= 25, `active ${d.active}`)
})

test("a group reports each loop's utilization; a busy loop shows above an idle one", async (t) => {
  const group = new EventLoopGroup(2)
  t.teardown(() => group.shutdownGracefully(0, 1000))
  const before = group.utilization()
  t.is(before.length, 2)
  let ran = false
  group.loops[0].execute(() => {
    spin(40)
    ran = true
  })
  group.loops[1].execute(() => undefined)
  await until(() => ran)
  await nextTurn()
  const d = group.utilization(before)
  t.is(d.length, 2)
  for (const u of d) valid(t, u)
  t.true(d[0].active >= 35, `loop 0 active ${d[0].active}`)
  t.true(d[0].utilization > d[1].utilization, JSON.stringify(d))
  const later = group.utilization()
  t.deepEqual(
    group.utilization(later, before).map((u) => u.active),
    later.map((u, i) => u.active - before[i].active),
    'two readings: their difference, loop by loop',
  )
  t.throws(() => group.utilization({} as never), { code: 'ERR_INVALID_ARG_TYPE' })
})

test.serial('a terminated loop reads the same ever after: neither its active nor its idle time grows', async (t) => {
  const loop = new EventLoop()
  loop.execute(() => spin(5))
  await loop.shutdownGracefully(0, 1000)
  await nextTurn() // the last iteration (which resolved the shutdown) has ended
  const a = loop.utilization()
  await sleep(50)
  const d = loop.utilization(a)
  t.is(d.active, 0)
  t.is(d.idle, 0)
  t.true(a.active > 0 && a.idle >= 0)
})

test.serial("a worker group reports each worker thread's utilization", async (t) => {
  const group = new EventLoopGroup({ threads: 2, module: join(__dirname, 'fixtures', 'echo-module.ts') })
  t.teardown(() => group.shutdownGracefully(0, 2000))
  await group.ready()
  const first = group.utilization()
  t.is(first.length, 2)
  for (const u of first) valid(t, u)
  await sleep(50)
  const d = group.utilization(first)
  t.is(d.length, 2)
  for (const u of d) {
    valid(t, u)
    t.true(u.idle + u.active > 0, 'time passed on each worker')
  }
})
