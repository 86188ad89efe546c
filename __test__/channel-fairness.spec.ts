// A TypeScript server streaming flat out must not starve its own thread: every loop iteration
// is bounded, so Node's timers, I/O and setImmediate keep their turn.
import test from 'ava'
import { fork } from 'node:child_process'
import { join } from 'node:path'

import { type Channel } from '../index'
import { loopFor, serve, until } from './channel-helpers'

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
  let immediates = 0
  let on = true
  const immediate = () => {
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
  child.send('exit')
  const streamed = (loop.metrics().bytesOut ?? 0) - bytesBefore
  t.true(streamed > 16 * 1024 * 1024, `the server streamed ${streamed} bytes in the second`)
  t.true(ticks >= 0.8 * (elapsed / 20), `a 20 ms setInterval ticked ${ticks} times in ${elapsed} ms`)
  t.true(immediates > 50, `setImmediate ran ${immediates} times`)
  t.true(scheduledAfter >= 0 && scheduledAfter < 500, `loop.schedule(50 ms) ran after ${scheduledAfter} ms`)
  t.true(pings > 10 && maxPingDelay < 500, `${pings} IPC messages, the slowest answered after ${maxPingDelay} ms`)
}

test.serial('a server writing on every writability change to a fast reader leaves timers, setImmediate and IPC their turn', async (t) => {
  await streamTo(t, 1)
})

test.serial('twenty such connections leave timers, setImmediate and IPC their turn', async (t) => {
  await streamTo(t, 20)
})
