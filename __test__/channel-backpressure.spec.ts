// Writability from TypeScript counts every write made so far, the ones still queued on the JS
// side of the boundary included, so that the water marks bound memory as in Netty.
import test from 'ava'

import { type Channel, type ChannelHandler, LineBasedFrameDecoder } from '../index'
import { loopFor, netClient, serve, sleep, until } from './channel-helpers'

const HIGH = 64 * 1024
const LOW = 32 * 1024
const marks = { writeBufferHighWaterMark: HIGH, writeBufferLowWaterMark: LOW }
const chunk = Buffer.alloc(4096, 7)
/** What one write of `chunk` counts (its bytes plus Netty's 96 bytes per entry). */
const COUNTED = chunk.length + 96
const CAP = 10_000

interface LoopOutcome {
  writes: number
  bytesBeforeUnwritable: number
  bytesBeforeWritable: number
}

/** A handler that runs Netty's idiom once the channel is active and records what it sees. */
function idiom(outcome: { value?: LoopOutcome }, events: boolean[]): ChannelHandler {
  return {
    channelActive: (ctx) => {
      let n = 0
      while (ctx.channel.isWritable && n < CAP) {
        ctx.writeAndFlush(chunk)
        n++
      }
      const ch = ctx.channel
      outcome.value = { writes: n, bytesBeforeUnwritable: ch.bytesBeforeUnwritable, bytesBeforeWritable: ch.bytesBeforeWritable }
    },
    channelWritabilityChanged: (ctx) => void events.push(ctx.channel.isWritable),
    exceptionCaught: () => {}, // the client's reset at teardown
  }
}

/**
 * Runs the idiom on a server whose pipeline `setup` builds around `producer`; a client reads it
 * all. Returns the `isWritable` the producer read at each `channelWritabilityChanged`.
 */
async function runIdiom(t: Parameters<Parameters<typeof test>[1]>[0], setup: (ch: Channel, producer: ChannelHandler) => void): Promise<boolean[]> {
  const loop = loopFor(t)
  const outcome: { value?: LoopOutcome } = {}
  const events: boolean[] = []
  const { port } = await serve(t, loop, (ch) => setup(ch, idiom(outcome, events)), marks)
  const s = await netClient(t, port)
  let received = 0
  s.on('data', (d) => (received += d.length))
  await until(() => outcome.value !== undefined)
  const o = outcome.value!
  // Stopped within one write of the high mark: the last write crossed it.
  t.true(o.writes * COUNTED > HIGH, `${o.writes} writes`)
  t.true((o.writes - 1) * COUNTED <= HIGH, `${o.writes} writes`)
  t.is(o.bytesBeforeUnwritable, 0)
  t.is(o.bytesBeforeWritable, o.writes * COUNTED + 1 - LOW)
  await until(() => received === o.writes * chunk.length)
  await until(() => events.length >= 2 && events[events.length - 1])
  return events
}

test('while (isWritable) writeAndFlush(4 KiB) stops within one write of the high mark; one event per crossing', async (t) => {
  const events = await runIdiom(t, (ch, producer) => ch.pipeline.addLast('producer', producer))
  // In order: unwritable inside the write that crossed, writable once the socket took it all.
  t.deepEqual(events, [false, true])
})

test('the same loop behind a native handler (JS -> native -> JS) stops within one write of the high mark', async (t) => {
  const events = await runIdiom(t, (ch, producer) =>
    ch.pipeline
      .addLast('first', { channelRead: (ctx, m) => void ctx.fireChannelRead(m) })
      .addLast('lines', new LineBasedFrameDecoder(1024))
      .addLast('producer', producer),
  )
  // One event per crossing. The first reaches the producer through the native handler a
  // delivery later, when the socket took the writes already: it reads the state of then.
  t.is(events.length, 2)
})

test('the same loop behind a native handler and a JS outbound handler stops within one write of the high mark', async (t) => {
  const events = await runIdiom(t, (ch, producer) =>
    ch.pipeline
      .addLast('first', { write: (ctx, m, p) => void ctx.write(m, p) })
      .addLast('lines', new LineBasedFrameDecoder(1024))
      .addLast('producer', producer),
  )
  t.true(events[events.length - 1])
})

test('a producer that honours writability keeps the pending bytes of a client that never reads within one write of the high mark', async (t) => {
  const loop = loopFor(t)
  let child: Channel | undefined
  let writes = 0
  const produce = (ch: Channel) => {
    while (ch.isWritable) {
      ch.writeAndFlush(chunk)
      writes++
    }
  }
  await serve(
    t,
    loop,
    (ch) => {
      child = ch
      ch.pipeline.addLast('producer', {
        channelActive: (ctx) => produce(ctx.channel),
        channelWritabilityChanged: (ctx) => void (ctx.channel.isWritable && produce(ctx.channel)),
        exceptionCaught: () => {}, // the client's reset at teardown
      })
    },
    marks,
  ).then(async ({ port }) => {
    const s = await netClient(t, port)
    s.pause() // never reads: the kernel buffers fill, then the channel's own
  })
  await until(() => child !== undefined && writes > 0)
  const rssBefore = process.memoryUsage().rss
  // Pending bytes (JS's queued writes included) = bytesBeforeWritable + low - 1 while unwritable.
  let maxPending = 0
  let sawUnwritable = 0
  const deadline = Date.now() + 1500
  while (Date.now() < deadline) {
    const ch = child!
    if (!ch.isWritable) {
      sawUnwritable++
      maxPending = Math.max(maxPending, ch.bytesBeforeWritable + LOW - 1)
    }
    await sleep(5)
  }
  t.true(sawUnwritable > 0, 'the channel turned unwritable')
  t.true(maxPending >= LOW, `pending reached ${maxPending}, unwritable ${sawUnwritable} times`)
  t.true(maxPending <= HIGH + COUNTED, `pending reached ${maxPending}`)
  const written = writes
  await sleep(200)
  t.is(writes, written, 'the producer stays stopped while the client does not read')
  // Generous: the kernel holds a few MiB; the process must not grow with the writes.
  t.true(process.memoryUsage().rss - rssBefore < 256 * 1024 * 1024)
})

test('a closed channel is not writable, so a loop on isWritable ends', async (t) => {
  const loop = loopFor(t)
  let child: Channel | undefined
  const { port } = await serve(t, loop, (ch) => void (child = ch))
  const s = await netClient(t, port)
  await until(() => child !== undefined && child.isActive)
  t.true(child!.isWritable)
  await child!.close()
  let n = 0
  while (child!.isWritable && n < CAP) {
    child!.writeAndFlush(chunk)
    n++
  }
  t.is(n, 0)
  t.false(child!.isWritable)
  t.is(child!.bytesBeforeUnwritable, 0)
  s.destroy()
})
