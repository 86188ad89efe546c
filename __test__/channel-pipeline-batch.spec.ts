import test, { type ExecutionContext } from 'ava'

import { type ChannelHandler, type ChannelHandlerContext, FixedLengthFrameDecoder, LineBasedFrameDecoder } from '../index'
import { collect, loopFor, netClient, serve } from './channel-helpers'

const upper: ChannelHandler = { channelRead: (ctx, m: Buffer) => ctx.fireChannelRead(Buffer.from(m.toString().toUpperCase())) }

for (const how of ['addBefore', 'addAfter'] as const) {
  test(`a handler added with ${how} during channelRead sees the rest of the same read batch`, async (t) => {
    const loop = loopFor(t)
    const stage: ChannelHandler = {
      channelRead(ctx, m: Buffer) {
        if (m.toString() === 'a') {
          if (how === 'addBefore') ctx.pipeline.addBefore('stage', 'upper', upper)
          else ctx.pipeline.addAfter('framer', 'upper', upper)
        }
        ctx.write(`${m}\n`)
      },
      channelReadComplete: (ctx) => void ctx.flush(),
    }
    const { port } = await serve(t, loop, (ch) => ch.pipeline.addLast('framer', new LineBasedFrameDecoder(64)).addLast('stage', stage))
    const s = await netClient(t, port)
    const c = collect(s)
    s.end('a\nb\nc\nd\n') // one segment: one read batch
    await c.ended
    t.is(c.data().toString(), 'a\nB\nC\nD\n')
  })
}

/**
 * 100 frames after a `start` frame, in one segment (one read batch, or a few), through
 * framer → w → a → b → z (w has outbound methods only); `change` runs in a's channelRead of `start`. Each JS handler notes what
 * it saw in `seen`; a closes the channel after `end`.
 */
async function batchAfterChange(t: ExecutionContext, seen: Map<string, string[]>, change: (ctx: ChannelHandlerContext) => void): Promise<void> {
  const loop = loopFor(t)
  let done!: () => void
  const finished = new Promise<void>((r) => (done = r))
  const a = noting(seen, 'a', false, (ctx, m) => {
    if (m === 'start') change(ctx)
    // closed once the batch is through (a microtask runs after the delivery)
    if (m === 'end') queueMicrotask(() => void ctx.close().then(done))
  })
  const z = noting(seen, 'z')
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('framer', new LineBasedFrameDecoder(64))
    // an outbound-only handler: the native pipeline addresses inbound events to a, past it
    ch.pipeline.addLast('w', { write: (ctx, m, p) => ctx.write(m, p) } satisfies ChannelHandler)
    ch.pipeline.addLast('a', a).addLast('b', noting(seen, 'b')).addLast('z', z)
  })
  const s = await netClient(t, port)
  let payload = 'start\n'
  for (let i = 0; i < 99; i++) payload += `f${i}\n`
  s.write(`${payload}end\n`)
  await finished
}

/** A JS handler that notes what it sees under `name`, calls `then`, and passes it on (upper-cased if asked). */
function noting(seen: Map<string, string[]>, name: string, upperCase = false, then?: (ctx: ChannelHandlerContext, m: string) => unknown): ChannelHandler {
  return {
    channelRead(ctx, m: Buffer) {
      if (!seen.has(name)) seen.set(name, [])
      seen.get(name)!.push(m.toString())
      then?.(ctx, m.toString())
      ctx.fireChannelRead(upperCase ? Buffer.from(m.toString().toUpperCase()) : m)
    },
  }
}

test('a handler added with addBefore during channelRead sees all 100 later frames of the batch', async (t) => {
  const seen = new Map<string, string[]>()
  await batchAfterChange(t, seen, (ctx) => ctx.pipeline.addBefore('b', 'x', noting(seen, 'x', true)))
  t.is(seen.get('x')?.length, 101) // start (passed on after the add) and 100 more
  t.deepEqual(seen.get('b'), seen.get('x')!.map((f) => f.toUpperCase()))
})

test('a handler added in front of an outbound-only handler during channelRead sees all 100 later frames', async (t) => {
  const seen = new Map<string, string[]>()
  await batchAfterChange(t, seen, (ctx) => ctx.pipeline.addBefore('w', 'x', noting(seen, 'x')))
  t.is(seen.get('x')?.length, 100) // every frame after start (start had passed it)
  t.is(seen.get('a')?.length, 101)
})

test('a handler added with addBefore in front of the adding handler sees the rest of the batch', async (t) => {
  const seen = new Map<string, string[]>()
  await batchAfterChange(t, seen, (ctx) => ctx.pipeline.addBefore('a', 'x', noting(seen, 'x')))
  t.is(seen.get('x')?.length, 100) // every frame after start (start had passed it)
  t.is(seen.get('a')?.length, 101)
})

test('a handler added with addAfter during channelRead sees all 100 later frames of the batch', async (t) => {
  const seen = new Map<string, string[]>()
  await batchAfterChange(t, seen, (ctx) => ctx.pipeline.addAfter('a', 'x', noting(seen, 'x', true)))
  t.is(seen.get('x')?.length, 101)
  t.deepEqual(seen.get('b'), seen.get('x')!.map((f) => f.toUpperCase()))
})

test('a handler removed during channelRead sees none of the rest of the batch', async (t) => {
  const seen = new Map<string, string[]>()
  await batchAfterChange(t, seen, (ctx) => ctx.pipeline.remove('b'))
  t.is(seen.get('b'), undefined) // removed before start reached it
  t.is(seen.get('z')?.length, 101)
})

test('a handler replaced during channelRead: its replacement sees the rest of the batch', async (t) => {
  const seen = new Map<string, string[]>()
  await batchAfterChange(t, seen, (ctx) => void ctx.pipeline.replace('b', 'b2', noting(seen, 'b2')))
  t.is(seen.get('b2')?.length, 101)
  t.is(seen.get('b'), undefined)
})

test('a native decoder added after the reading handler during channelRead decodes the rest of the batch', async (t) => {
  const seen = new Map<string, string[]>()
  let bytes = 0
  await batchAfterChange(t, seen, (ctx) => ctx.pipeline.addAfter('a', 'pairs', new FixedLengthFrameDecoder(2)))
  for (const f of seen.get('b') ?? []) bytes += f.length
  t.is(seen.get('a')?.length, 101)
  t.true(seen.get('b')!.every((f) => f.length === 2))
  t.is(bytes, 5 + 2 * 10 + 3 * 89 + 3 - 1) // start, f0..f98, end in 2-byte frames (the odd byte waits)
})
