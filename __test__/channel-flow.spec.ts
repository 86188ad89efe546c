import test from 'ava'
import * as net from 'node:net'

import { ChannelInputShutdownEvent, type Channel, NetloopError } from '../index'
import { captureUnhandled, collect, dial, loopFor, netClient, serve, sleep, until } from './channel-helpers'

test('a slow reader turns the channel unwritable once above the high mark and writable once below the low mark', async (t) => {
  const loop = loopFor(t)
  const events: boolean[] = []
  let child!: Channel
  const { port } = await serve(
    t,
    loop,
    (ch) => {
      child = ch
      ch.pipeline.addLast('w', { channelWritabilityChanged: (ctx) => void events.push(ctx.channel.isWritable) })
    },
    { writeBufferHighWaterMark: 64 * 1024, writeBufferLowWaterMark: 32 * 1024, soSndbuf: 8192 },
  )
  // The slow reader: a client that reads nothing (autoRead off) with a small receive buffer,
  // so the kernel cannot take the server's pending bytes while the test looks (a paused
  // node:net socket still lets its receive buffer grow, and drained the channel below the low
  // mark before the first check on a loaded machine).
  let received = 0
  const reader = await dial(loop, port, (ch) => ch.pipeline.addLast('count', { autoRelease: true, channelRead: (_ctx, m: Buffer) => void (received += m.length) }), { autoRead: false, soRcvbuf: 4096 })
  t.teardown(() => reader.close())
  await until(() => child !== undefined && child.isActive)
  const chunk = Buffer.alloc(16 * 1024, 7)
  let written = 0
  // Write until unwritable (the kernel buffers take some first).
  while (child.isWritable && events.length === 0 && written < 64 * 1024 * 1024) {
    child.writeAndFlush(chunk)
    written += chunk.length
    await sleep(1)
  }
  await until(() => events.length >= 1)
  t.deepEqual(events, [false])
  t.false(child.isWritable)
  t.is(child.bytesBeforeUnwritable, 0)
  t.true(child.bytesBeforeWritable > 0)
  reader.config.autoRead = true
  await until(() => received === written)
  t.deepEqual(events, [false, true])
  t.true(child.isWritable)
  t.true(child.bytesBeforeUnwritable > 0)
})

test('with autoRead off nothing is read until read() asks for it', async (t) => {
  const loop = loopFor(t)
  const reads: string[] = []
  let child!: Channel
  const { port } = await serve(
    t,
    loop,
    (ch) => {
      child = ch
      ch.pipeline.addLast('r', { channelRead: (_ctx, m: Buffer) => void reads.push(m.toString()) })
    },
    { autoRead: false },
  )
  const s = await netClient(t, port)
  s.write('first')
  await until(() => child !== undefined && child.isActive)
  await sleep(50)
  t.deepEqual(reads, [])
  t.false(child.config.autoRead)
  child.read()
  await until(() => reads.length === 1)
  t.is(reads.join(''), 'first')
  s.write('second')
  await sleep(50)
  t.is(reads.join(''), 'first')
  child.config.autoRead = true
  await until(() => reads.join('') === 'firstsecond')
  s.write('third')
  await until(() => reads.join('') === 'firstsecondthird')
})

test('read() called inside channelRead with autoRead off reads the next batch', async (t) => {
  const loop = loopFor(t)
  let total = 0
  const { port } = await serve(
    t,
    loop,
    (ch) =>
      ch.pipeline.addLast('r', {
        channelActive: (ctx) => void ctx.read(),
        channelRead: (ctx, m: Buffer) => {
          total += m.length
          ctx.read()
        },
      }),
    { autoRead: false },
  )
  const s = await netClient(t, port)
  const payload = Buffer.alloc(1024 * 1024, 1)
  s.write(payload)
  await until(() => total === payload.length)
  t.is(total, payload.length)
})

test('shutdownOutput half-closes: the peer sees EOF and can still send', async (t) => {
  const loop = loopFor(t)
  const got: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    ch.pipeline.addLast('h', {
      channelActive: async (ctx) => {
        ctx.writeAndFlush('bye')
        await ctx.channel.shutdownOutput()
      },
      channelRead: (_ctx, m: Buffer) => void got.push(m.toString()),
    }),
  )
  const s = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
  t.teardown(() => s.destroy())
  s.setEncoding('utf8')
  let data = ''
  s.on('data', (d) => (data += d))
  await new Promise<void>((r) => s.on('end', () => r()))
  t.is(data, 'bye')
  s.end('after your FIN')
  await until(() => got.join('') === 'after your FIN')
})

test('with allowHalfClosure the peer FIN arrives as ChannelInputShutdownEvent and writing goes on', async (t) => {
  const loop = loopFor(t)
  const events: unknown[] = []
  const { port } = await serve(
    t,
    loop,
    (ch) =>
      ch.pipeline.addLast('h', {
        userEventTriggered: (ctx, e) => {
          events.push(e)
          ctx.writeAndFlush('still writing')
          ctx.close()
        },
      }),
    { allowHalfClosure: true },
  )
  const s = await netClient(t, port)
  const c = collect(s)
  s.end()
  await c.ended
  t.is(events[0], ChannelInputShutdownEvent.INSTANCE)
  t.is(c.data().toString(), 'still writing')
})

test.serial('writes after close fail with ERR_CHANNEL_CLOSED: awaited ones reject, voidPromise ones are reported, plain ones are silent', async (t) => {
  const unhandled = captureUnhandled(t)
  const loop = loopFor(t)
  const { port } = await serve(t, loop, () => {})
  const caught: unknown[] = []
  const ch = await dial(loop, port, (c) => c.pipeline.addLast('catch', { exceptionCaught: (_ctx, e) => void caught.push(e) }))
  await ch.close()
  const err = await t.throwsAsync(ch.writeAndFlush('late', ch.newPromise()).promise)
  t.is((err as NetloopError).code, 'ERR_CHANNEL_CLOSED')
  // Netty's write(msg): nobody listens to its promise, so its failure is not reported.
  ch.writeAndFlush('late and silent')
  // A write given voidPromise() reports its failure to exceptionCaught; once the closed channel
  // left its loop its handlers are removed (as in Netty), and the failure reaches the tail.
  ch.writeAndFlush('late too', ch.voidPromise())
  await until(() => caught.length + unhandled.length >= 1)
  const last = ch.writeAndFlush('last', ch.newPromise())
  await t.throwsAsync(last.promise)
  const reported = [...caught, ...unhandled.map((u) => u.error)]
  t.is(reported.length, 1)
  t.is((reported[0] as NetloopError).code, 'ERR_CHANNEL_CLOSED')
})

test('pending writes fail with ERR_CHANNEL_CLOSED when the channel closes before they are flushed', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, () => {})
  const ch = await dial(loop, port, () => {})
  const p = ch.write('never flushed', ch.newPromise())
  await ch.close()
  const err = await t.throwsAsync(p.promise)
  t.is((err as NetloopError).code, 'ERR_CHANNEL_CLOSED')
  t.true(p.isDone)
  t.false(p.isSuccess)
})

test('an awaited write resolves once written', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => ch.pipeline.addLast('echo', { channelRead: (ctx, m) => ctx.writeAndFlush(m) }))
  const got: Buffer[] = []
  const ch = await dial(loop, port, (c) => c.pipeline.addLast('r', { channelRead: (_ctx, m: Buffer) => void got.push(Buffer.from(m)) }))
  const p = ch.writeAndFlush('ping', ch.newPromise())
  await p
  t.true(p.isSuccess)
  await until(() => Buffer.concat(got).toString() === 'ping')
  await ch.close()
})

test('channel options are readable, settable and validated while the channel lives', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, () => {})
  const ch = await dial(loop, port, () => {}, { tcpNoDelay: false, writeBufferHighWaterMark: 1000, writeBufferLowWaterMark: 500 })
  t.false(ch.config.tcpNoDelay)
  t.is(ch.config.writeBufferHighWaterMark, 1000)
  t.is(ch.config.writeBufferLowWaterMark, 500)
  ch.config.tcpNoDelay = true
  t.true(ch.config.tcpNoDelay)
  ch.config.writeSpinCount = 4
  t.is(ch.config.writeSpinCount, 4)
  t.is(t.throws(() => (ch.config.writeSpinCount = 0))?.code, 'ERR_OUT_OF_RANGE')
  t.is(t.throws(() => ((ch.config as Record<string, unknown>).autoRead = 'yes'))?.code, 'ERR_INVALID_ARG_TYPE')
  t.is(t.throws(() => ch.setOption('nope' as never, 1 as never))?.code, 'ERR_INVALID_ARG_VALUE')
  t.is(t.throws(() => (ch.config.writeBufferLowWaterMark = 5000))?.code, 'ERR_INVALID_ARG_VALUE')
  t.is(ch.config.writeBufferLowWaterMark, 500)
  await ch.close()
})

test('maxBytesPerRead: a JS channel hands its handlers at most about 64 KiB per read batch by default', async (t) => {
  const loop = loopFor(t)
  const batches: number[] = []
  let batch = 0
  let total = 0
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('count', {
      channelRead: (_ctx, m: Buffer) => {
        batch += m.length
        total += m.length
      },
      channelReadComplete: () => {
        batches.push(batch)
        batch = 0
      },
    }),
  )
  const ch = await dial(loop, port, () => {})
  t.is(ch.config.maxBytesPerRead, 65536)
  const sent = 8 << 20
  ch.writeAndFlush(Buffer.alloc(sent, 1))
  await until(() => total === sent)
  // A batch ends at the first read that reaches 64 KiB: less than two 64 KiB reads.
  t.true(Math.max(...batches) < 128 << 10, `largest batch ${Math.max(...batches)} bytes`)
  t.true(batches.length >= sent / (128 << 10))
  ch.config.maxBytesPerRead = 0
  t.is(ch.config.maxBytesPerRead, 0, '0: no limit, the core default')
  t.is(t.throws(() => (ch.config.maxBytesPerRead = -1))?.code, 'ERR_OUT_OF_RANGE')
  await ch.close()
})

test('a user-defined writability flag turns the channel unwritable and back, one event each way', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, () => {})
  const events: boolean[] = []
  const ch = await dial(loop, port, (c) => c.pipeline.addLast('w', { channelWritabilityChanged: (ctx) => void events.push(ctx.channel.isWritable) }))
  t.true(ch.isWritable)
  ch.setUserDefinedWritability(3, false)
  t.false(ch.isWritable)
  ch.setUserDefinedWritability(3, false)
  ch.setUserDefinedWritability(3, true)
  t.true(ch.isWritable)
  await until(() => events.length === 2)
  t.deepEqual(events.length, 2)
  t.is(t.throws(() => ch.setUserDefinedWritability(0, false))?.code, 'ERR_OUT_OF_RANGE')
  await ch.close()
})
