import test from 'ava'

import type { Channel, ChannelPromise } from '../index'
import { collect, loopFor, netClient, serve, until } from './channel-helpers'

test('a write whose promise is cancelled before the flush is never written', async (t) => {
  const loop = loopFor(t)
  let cancelled: boolean | undefined
  let p!: ChannelPromise
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('w', {
      channelActive(ctx) {
        ctx.write('a')
        p = ctx.write('SECRET', ctx.newPromise())
        ctx.write('b')
        cancelled = p.cancel()
        ctx.writeAndFlush('c\n')
      },
    })
  })
  const s = await netClient(t, port)
  const got = collect(s)
  await until(() => got.data().includes('\n'))
  t.is(got.data().toString(), 'abc\n')
  t.true(cancelled)
  t.true(p.isCancelled)
  const e = await t.throwsAsync(p.promise)
  t.is((e as { code?: string }).code, 'ERR_CANCELLED')
})

test('a promise cancelled before its write reached the channel makes the write do nothing', async (t) => {
  const loop = loopFor(t)
  let p!: ChannelPromise
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('w', {
      channelActive(ctx) {
        p = ctx.newPromise()
        t.true(p.cancel())
        ctx.writeAndFlush('never', p)
        ctx.writeAndFlush('ok\n')
      },
    })
  })
  const s = await netClient(t, port)
  const got = collect(s)
  await until(() => got.data().includes('\n'))
  t.is(got.data().toString(), 'ok\n')
  t.true(p.isCancelled)
})

test('a flushed write cannot be cancelled', async (t) => {
  const loop = loopFor(t)
  let result: boolean | undefined
  let p!: ChannelPromise
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('w', {
      channelActive(ctx) {
        p = ctx.writeAndFlush('flushed\n', ctx.newPromise())
        result = p.cancel()
      },
    })
  })
  const s = await netClient(t, port)
  const got = collect(s)
  await until(() => got.data().includes('\n'))
  t.is(got.data().toString(), 'flushed\n')
  t.false(result)
  await p
  t.false(p.isCancelled)
})

test('close with a cancelled promise leaves the channel open', async (t) => {
  const loop = loopFor(t)
  let child!: Channel
  const { port } = await serve(t, loop, (ch) => {
    child = ch
    ch.pipeline.addLast('echo', {
      channelRead(ctx, msg: Buffer) {
        if (msg.toString() === 'close\n') {
          const p = ctx.newPromise()
          p.cancel()
          ctx.close(p)
          ctx.writeAndFlush('still open\n')
        }
      },
    })
  })
  const s = await netClient(t, port)
  const got = collect(s)
  s.write('close\n')
  await until(() => got.data().includes('\n'))
  t.is(got.data().toString(), 'still open\n')
  t.true(child.isOpen)
})
