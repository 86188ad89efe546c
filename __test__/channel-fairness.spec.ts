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
  // A second of the server streaming: count what Node and the loop get to run meanwhile.
  let ticks = 0
  const interval = setInterval(() => ticks++, 20)
  // Consecutive setImmediate callbacks are one turn of Node's event loop apart: the longest gap
  // bounds what one loop iteration held the thread for. The gap is taken in CPU time (the
  // process's, in ms) as well as wall time: on a loaded machine a descheduled process sees long
  // wall gaps without any iteration holding the thread.
  let immediates = 0
  let on = true
  let last = performance.now()
  let lastCpu = process.cpuUsage()
  let maxTurn = 0
  let maxTurnCpu = 0
  const immediate = () => {
    const now = performance.now()
    const cpu = process.cpuUsage()
    maxTurn = Math.max(maxTurn, now - last)
    maxTurnCpu = Math.max(maxTurnCpu, (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000)
    last = now
    lastCpu = cpu
    immediates++
    if (on) setImmediate(immediate)
  }
  setImmediate(immediate)
  let scheduledAfter = -1
  const started = Date.now()
  loop.schedule(() => (scheduledAfter = Date.now() - started), 50)
  await new Promise<void>((resolve) => setTimeout(resolve, 1000))
  const elapsed = Date.now() - started
  clearInterval(interval)
  on = false
  t.log(`${ticks} ticks, ${immediates} setImmediates, longest turn ${maxTurn.toFixed(1)} ms, slowest IPC ${maxPingDelay} ms`)
  child.send('exit')
  const streamed = (loop.metrics().bytesOut ?? 0) - bytesBefore
  t.true(streamed > 16 * 1024 * 1024, `the server streamed ${streamed} bytes in the second`)
  const seen = `${ticks} ticks of a 20 ms setInterval in ${elapsed} ms, ${immediates} setImmediates, longest turn ${maxTurn.toFixed(1)} ms (${maxTurnCpu.toFixed(1)} ms of CPU)`
  // Generous bounds (the machine may be shared): a starved thread gets far less.
  t.true(ticks >= 0.3 * (elapsed / 20), seen) // a thread held for 100 ms a turn gets under 0.2
  t.true(immediates > 50, seen)
  t.true(maxTurnCpu < 100, seen)
  t.true(scheduledAfter >= 0 && scheduledAfter < 500, `loop.schedule(50 ms) ran after ${scheduledAfter} ms`)
  t.true(pings > 10 && maxPingDelay < 500, `${pings} IPC messages, the slowest answered after ${maxPingDelay} ms`)
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
