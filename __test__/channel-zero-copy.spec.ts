import test from 'ava'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

import type { Channel, ChannelPromise } from '../index'
import { collect, dial, loopFor, netClient, pattern, serve, until } from './channel-helpers'

// Byte writes of 8 KiB and more are written from the JS Buffer itself (the native side holds a
// reference until the socket took the bytes); these tests pin what that must keep: content and
// order, writability, failed promises, and the Buffer's release.

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

test('large Buffer writes arrive intact and in order among small writes and strings', async (t) => {
  const loop = loopFor(t)
  const big = pattern(200 * 1024, 7)
  const parts: Array<Buffer | string> = [
    Buffer.from('head'),
    big.subarray(1000, 1000 + 64 * 1024),
    Buffer.from('-'),
    pattern(8 * 1024, 3),
    'x'.repeat(20_000),
    new Uint8Array(pattern(9000, 5)) as Buffer,
    big,
    Buffer.from('tail'),
  ]
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('w', {
      channelActive(ctx) {
        for (const p of parts) ctx.write(p)
        ctx.writeAndFlush(Buffer.alloc(0), ctx.newPromise()).addListener(() => void ctx.close())
      },
    })
  })
  const s = await netClient(t, port)
  const got = collect(s)
  await got.ended
  t.true(got.data().equals(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)))))
})

test('a large write behind a full op buffer keeps its bytes', async (t) => {
  // 4096 ops fill the op buffer: the large write that follows starts a new batch, and its
  // Buffer must travel with that batch.
  const loop = loopFor(t)
  const big = pattern(10 * 1024, 11)
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('w', {
      channelActive(ctx) {
        for (let i = 0; i < 4096; i++) ctx.write(Buffer.from([i & 0xff]))
        ctx.write(big)
        ctx.writeAndFlush(Buffer.alloc(0), ctx.newPromise()).addListener(() => void ctx.close())
      },
    })
  })
  const s = await netClient(t, port)
  const got = collect(s)
  await got.ended
  const data = got.data()
  t.is(data.length, 4096 + big.length)
  t.true(data.subarray(4096).equals(big))
  t.is(data[4095], 4095 & 0xff)
})

test('a large write counts towards the high water mark at once and its promise resolves once written', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, () => {})
  const ch = await dial(loop, port, () => {}, { writeBufferHighWaterMark: 16 * 1024, writeBufferLowWaterMark: 8 * 1024 })
  t.true(ch.isWritable)
  const p = ch.write(pattern(32 * 1024, 1), ch.newPromise())
  t.false(ch.isWritable)
  t.true(ch.bytesBeforeWritable > 0)
  ch.flush()
  await p.promise
  await until(() => ch.isWritable)
  t.true(p.isSuccess)
  await ch.close()
})

test('large pending writes fail their promises when the peer resets, and their Buffers are released', async (t) => {
  const loop = loopFor(t)
  let child: Channel | undefined
  const promises: ChannelPromise[] = []
  let collected = 0
  const registry = new FinalizationRegistry(() => void collected++)
  const { port } = await serve(t, loop, (ch) => {
    child = ch
    ch.pipeline.addLast('w', {
      channelRead(ctx) {
        for (let i = 0; i < 8; i++) {
          const b = pattern(16 * 1024, i)
          registry.register(b, i)
          promises.push(ctx.write(b, ctx.newPromise()))
        }
      },
      exceptionCaught: () => {},
    })
  })
  const s = await netClient(t, port)
  s.write('go')
  await until(() => promises.length === 8)
  s.resetAndDestroy()
  const outcomes = await Promise.allSettled(promises.map((p) => p.promise))
  t.true(outcomes.every((o) => o.status === 'rejected'))
  const first = outcomes[0] as PromiseRejectedResult
  const code = (first.reason as { cause?: { code?: string }; code?: string }).cause?.code ?? (first.reason as { code?: string }).code
  t.is(code, 'ECONNRESET')
  await child!.closeFuture
  await until(() => {
    gc()
    return collected === 8
  })
  t.is(collected, 8)
})

test('a large Buffer is released once written', async (t) => {
  const loop = loopFor(t)
  let collected = 0
  const registry = new FinalizationRegistry(() => void collected++)
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('w', {
      channelActive(ctx) {
        const b = pattern(64 * 1024, 9)
        registry.register(b, 0)
        ctx.writeAndFlush(b)
      },
    })
  })
  const s = await netClient(t, port)
  let received = 0
  s.on('data', (d: Buffer) => void (received += d.length))
  await until(() => received === 64 * 1024)
  await until(() => {
    gc()
    return collected === 1
  })
  t.is(collected, 1)
})

test('large reads reach JS as Buffers of their own, intact, and kept ones stay unchanged', async (t) => {
  // Reads of 16 KiB and more are handed over without a copy into the delivery's arena.
  const loop = loopFor(t)
  const kept: Buffer[] = []
  let largest = 0
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('keep', {
      channelRead(_ctx, msg: Buffer) {
        t.true(Buffer.isBuffer(msg))
        largest = Math.max(largest, msg.length)
        kept.push(msg)
      },
    })
  })
  const s = await netClient(t, port)
  const data = pattern(4 * 1024 * 1024, 13)
  s.write(data)
  await until(() => kept.reduce((n, b) => n + b.length, 0) >= data.length, 30_000)
  t.true(largest >= 16 * 1024, `the largest read was ${largest} bytes`)
  t.true(Buffer.concat(kept).equals(data))
})

// A handler that writes back a large read it got (an echo, a proxy) sends the read's own
// memory: the write holds no reference to the JS Buffer, so a slow peer does not keep it (and
// its external memory) alive; `bytesOutFromReads` counts those bytes.

/** Echoes every read through `transform` (in the delivery, unless `later`); registers the reads. */
function echoServer(t: Parameters<typeof loopFor>[0], transform: (m: Buffer) => Buffer, later = false) {
  const loop = loopFor(t)
  const registry = new FinalizationRegistry<number>(() => void state.collected++)
  const state = { collected: 0, registered: 0, child: undefined as Channel | undefined }
  const served = serve(t, loop, (ch) => {
    state.child = ch
    ch.pipeline.addLast('echo', {
      channelRead(ctx, m: Buffer) {
        registry.register(m, state.registered++)
        const out = transform(m)
        if (later) setImmediate(() => ctx.writeAndFlush(out))
        else ctx.writeAndFlush(out)
      },
    })
  })
  return { loop, state, served }
}

test('a large read written back is not held by its pending write, and arrives intact', async (t) => {
  const { loop, state, served } = echoServer(t, (m) => m)
  const { port } = await served
  const s = await netClient(t, port)
  s.pause()
  const data = pattern(32 * 1024 * 1024, 21)
  s.write(data)
  // The peer reads nothing: the echo queues on the server.
  await until(() => loop.metrics().bytesOutFromReads >= 1024 * 1024 && state.child?.isWritable === false, 30_000)
  await until(() => {
    gc()
    return state.collected === state.registered
  })
  t.is(state.collected, state.registered, 'every read Buffer JS got was collected while its echo waited')
  t.false(state.child!.isWritable, 'the echo was still queued')
  const got = collect(s)
  s.resume()
  await until(() => got.data().length >= data.length, 30_000)
  t.true(got.data().equals(data))
  t.true(loop.metrics().bytesOutFromReads >= 0.9 * loop.metrics().bytesOut)
})

test('a large read changed in place before it is written back sends the changed bytes', async (t) => {
  const { loop, served } = echoServer(t, (m) => {
    for (let i = 0; i < m.length; i++) m[i] ^= 0x5a
    return m
  })
  const { port } = await served
  const s = await netClient(t, port)
  const got = collect(s)
  const data = pattern(1024 * 1024, 22)
  s.write(data)
  await until(() => got.data().length >= data.length, 30_000)
  t.true(got.data().equals(Buffer.from(data.map((x) => x ^ 0x5a))))
  t.true(loop.metrics().bytesOutFromReads > 0)
})

test('a large read written back after its delivery is sent intact (kept by a reference)', async (t) => {
  const { loop, served } = echoServer(t, (m) => m, true)
  const { port } = await served
  const s = await netClient(t, port)
  const got = collect(s)
  const data = pattern(2 * 1024 * 1024, 23)
  s.write(data)
  await until(() => got.data().length >= data.length, 30_000)
  t.true(got.data().equals(data))
  t.is(loop.metrics().bytesOutFromReads, 0)
})
