// A TypeScript server streaming flat out must not starve its own thread: every loop iteration
// is bounded, so Node's timers, I/O and setImmediate keep their turn.
import test from 'ava'
import { fork } from 'node:child_process'
import { join } from 'node:path'

import { type Channel, LineBasedFrameDecoder } from '../index'
import { loopFor, netClient, serve, until } from './channel-helpers'

const chunk = Buffer.alloc(16 * 1024, 1)

/** Writes while writable, on activation and on every change to writable. */
function produce(ch: Channel): void {
  while (ch.isWritable) ch.writeAndFlush(chunk)
}

async function streamTo(t: Parameters<Parameters<typeof test>[1]>[0], clients: number) {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) =>
    ch.pipeline.addLast('producer', {
      channelActive: (ctx) => produce(ctx.channel),
      channelWritabilityChanged: (ctx) => void (ctx.channel.isWritable && produce(ctx.channel)),
      exceptionCaught: () => {}, // the readers' resets at the end
    }),
  )
  const child = fork(join(__dirname, 'fixtures', 'fast-reader.cjs'), [String(port), String(clients)])
  t.teardown(() => void child.kill('SIGKILL'))
  let flowing = false
  let maxPingDelay = 0
  let pings = 0
  child.on('message', (m: { flowing?: boolean; sent?: number }) => {
    if (m.flowing) flowing = true
    if (m.sent !== undefined && flowing) {
      pings++
      maxPingDelay = Math.max(maxPingDelay, Date.now() - m.sent)
    }
  })
  await until(() => flowing)
  const bytesBefore = loop.metrics().bytesOut ?? 0
  // While the server streams, count what Node and the loop get to run meanwhile. Every bound
  // is on the process's CPU time (in ms), not on wall time: on a loaded machine a descheduled
  // process sees long wall gaps without any iteration holding the thread, and a starved thread
  // burns CPU on the loop while the others wait. Wall times are reported.
  const cpuMs = () => {
    const c = process.cpuUsage()
    return (c.user + c.system) / 1000
  }
  let ticks = 0
  const interval = setInterval(() => ticks++, 20)
  // Consecutive setImmediate callbacks are one turn of Node's event loop apart: the longest gap
  // bounds what one loop iteration held the thread for. Each turn also samples (wall, CPU) so
  // that the CPU spent since a wall time can be told (cpuSince).
  let immediates = 0
  let on = true
  let last = performance.now()
  let lastCpu = cpuMs()
  let maxTurn = 0
  let maxTurnCpu = 0
  const samples: Array<{ wall: number; cpu: number }> = [{ wall: Date.now(), cpu: lastCpu }]
  const immediate = () => {
    const now = performance.now()
    const cpu = cpuMs()
    maxTurn = Math.max(maxTurn, now - last)
    maxTurnCpu = Math.max(maxTurnCpu, cpu - lastCpu)
    last = now
    lastCpu = cpu
    immediates++
    samples.push({ wall: Date.now(), cpu })
    if (on) setImmediate(immediate)
  }
  setImmediate(immediate)
  /** CPU ms of this process since the last turn that started at or before `wall` (a Date.now()). */
  const cpuSince = (wall: number) => {
    let i = samples.length - 1
    while (i > 0 && samples[i].wall > wall) i--
    return cpuMs() - samples[i].cpu
  }
  let maxPingCpu = 0
  child.on('message', (m: { sent?: number }) => {
    if (m.sent !== undefined && on) maxPingCpu = Math.max(maxPingCpu, cpuSince(m.sent))
  })
  const started = Date.now()
  const cpuStarted = cpuMs()
  let scheduledAfter = -1
  let scheduledCpuLate = -1
  loop.schedule(() => {
    scheduledAfter = Date.now() - started
    scheduledCpuLate = cpuSince(started + 50)
  }, 50)
  // At least a second, and until the measures have something to show (a loaded machine may
  // take longer to stream 16 MiB or to deliver ten pings); the server streams all along.
  const pingsBefore = pings
  await until(() => Date.now() - started >= 1000 && pings - pingsBefore > 10 && (loop.metrics().bytesOut ?? 0) - bytesBefore > 16 * 1024 * 1024, 15_000).catch(() => undefined)
  const elapsed = Date.now() - started
  const cpu = cpuMs() - cpuStarted
  clearInterval(interval)
  on = false
  t.log(`${ticks} ticks, ${immediates} setImmediates, longest turn ${maxTurn.toFixed(1)} ms, slowest IPC ${maxPingDelay} ms, in ${elapsed} ms (${cpu.toFixed(0)} ms of CPU)`)
  child.send('exit')
  const streamed = (loop.metrics().bytesOut ?? 0) - bytesBefore
  t.true(streamed > 16 * 1024 * 1024, `the server streamed ${streamed} bytes in ${elapsed} ms`)
  const seen = `${ticks} ticks of a 20 ms setInterval in ${elapsed} ms (${cpu.toFixed(0)} ms of CPU), ${immediates} setImmediates, longest turn ${maxTurn.toFixed(1)} ms (${maxTurnCpu.toFixed(1)} ms of CPU)`
  // Generous bounds (the machine may be shared): a starved thread gets far less.
  // A thread held for 100 ms a turn gets under 0.2 of the ticks; a descheduled one loses
  // ticks too, but then it also spent less CPU than wall time.
  t.true(ticks >= 0.3 * (Math.min(elapsed, cpu) / 20), seen)
  t.true(immediates > 10 && cpu / immediates < 20, `${seen}: ${(cpu / immediates).toFixed(1)} ms of CPU a turn on average`)
  t.true(maxTurnCpu < 100, seen)
  t.true(scheduledAfter >= 50 && scheduledCpuLate < 100, `loop.schedule(50 ms) ran after ${scheduledAfter} ms, ${scheduledCpuLate.toFixed(1)} ms of CPU after its deadline`)
  t.true(pings - pingsBefore > 10 && maxPingCpu < 100, `${pings - pingsBefore} IPC messages, the slowest answered after ${maxPingDelay} ms (${maxPingCpu.toFixed(1)} ms of CPU)`)
}

test.serial('a server writing on every writability change to a fast reader leaves timers, setImmediate and IPC their turn', async (t) => {
  await streamTo(t, 1)
})

test.serial('twenty such connections leave timers, setImmediate and IPC their turn', async (t) => {
  await streamTo(t, 20)
})

test('events that bounce across the boundary round after round never stall: what the last round made is applied', async (t) => {
  // Each event makes the next one cross into native code (through the decoder) and back: one
  // delivery round each, far more than one iteration runs.
  const loop = loopFor(t)
  const N = 1000
  let seen = 0
  const { port } = await serve(t, loop, (ch) =>
    ch.pipeline.addLast('lines', new LineBasedFrameDecoder(64)).addLast('bounce', {
      channelActive: (ctx) => void ctx.pipeline.fireUserEventTriggered(1),
      userEventTriggered: (ctx, n: number) => {
        seen = n
        if (n < N) ctx.pipeline.fireUserEventTriggered(n + 1)
      },
    }),
  )
  const s = await netClient(t, port)
  await until(() => seen === N, 5_000)
  t.is(seen, N)
  s.destroy()
})
