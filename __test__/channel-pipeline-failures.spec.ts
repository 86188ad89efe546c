import test from 'ava'

import { type Channel, type ChannelHandler, EventLoop, NetloopError } from '../index'
import { captureUnhandled, collect, loopFor, netClient, serve, until } from './channel-helpers'

const throwingClose = (caught: unknown[]): ChannelHandler => ({
  close() {
    throw new Error('close failed')
  },
  exceptionCaught: (_ctx, e) => void caught.push(e),
})

test.serial('a close handler that throws still closes the channel, and ch.close() rejects with its error once closed', async (t) => {
  const loop = loopFor(t)
  const caught: unknown[] = []
  const { port, children } = await serve(t, loop, (ch) => ch.pipeline.addLast('bad', throwingClose(caught)))
  const s = await netClient(t, port)
  const c = collect(s)
  await until(() => children.length === 1)
  const err = await t.throwsAsync(children[0].close())
  t.is(err?.message, 'close failed')
  t.false(children[0].isOpen)
  await c.ended
  t.deepEqual(caught, [], 'the error went to the promise, not to exceptionCaught')
})

test.serial('ch.close(ch.voidPromise()) with a close handler that throws closes and reports the error to exceptionCaught', async (t) => {
  const loop = loopFor(t)
  const caught: unknown[] = []
  const { port, children } = await serve(t, loop, (ch) => ch.pipeline.addLast('catch', { exceptionCaught: (_ctx, e) => void caught.push(e) }).addFirst('bad', throwingClose([])))
  const s = await netClient(t, port)
  const c = collect(s)
  await until(() => children.length === 1)
  const ch = children[0]
  ch.close(ch.voidPromise())
  await ch.closeFuture
  await c.ended
  await until(() => caught.length === 1)
  t.is((caught[0] as Error).message, 'close failed')
})

test.serial('ch.close() nobody awaits, with a close handler that throws, is no unhandled rejection', async (t) => {
  const loop = loopFor(t)
  const rejections: unknown[] = []
  const onRejection = (e: unknown) => void rejections.push(e)
  process.on('unhandledRejection', onRejection)
  t.teardown(() => process.off('unhandledRejection', onRejection))
  const { port, children } = await serve(t, loop, (ch) => ch.pipeline.addLast('bad', throwingClose([])))
  const s = await netClient(t, port)
  const c = collect(s)
  await until(() => children.length === 1)
  void children[0].close()
  await children[0].closeFuture
  await c.ended
  await new Promise((r) => setTimeout(r, 50))
  t.deepEqual(rejections, [])
})

test.serial('a close handler that throws fails the close promise with its error, after the channel closed', async (t) => {
  const loop = loopFor(t)
  const { port, children } = await serve(t, loop, (ch) => ch.pipeline.addLast('bad', throwingClose([])).addLast('after', {}))
  const s = await netClient(t, port)
  const c = collect(s)
  await until(() => children.length === 1)
  const ch = children[0]
  const p = ch.pipeline.context('after')!.close()
  const err = await t.throwsAsync(p.promise)
  t.is(err?.message, 'close failed')
  t.false(ch.isOpen)
  await c.ended
})

test.serial('a close handler that rejects fails the close promise; with the void promise a throw goes to exceptionCaught; both close', async (t) => {
  const loop = loopFor(t)
  const caught: string[] = []
  let n = 0
  const { port, children } = await serve(t, loop, (ch) =>
    ch.pipeline
      .addLast(
        'bad',
        n++ === 0
          ? { close: async () => Promise.reject(new Error('async close failed')) }
          : {
              close: () => {
                throw new Error('void close failed')
              },
            },
      )
      .addLast('catch', { exceptionCaught: (_ctx, e) => void caught.push((e as Error).message) }),
  )
  for (const want of ['async close failed', 'void close failed']) {
    const s = await netClient(t, port)
    const c = collect(s)
    await until(() => children.length === n)
    const ch = children[n - 1]
    const from = ch.pipeline.context('catch')!
    if (want.startsWith('void')) {
      from.close(ch.voidPromise())
      await until(() => caught.includes(want))
    } else {
      t.is((await t.throwsAsync(from.close().promise))?.message, want)
    }
    await c.ended
    await ch.closeFuture
    t.false(ch.isOpen)
  }
  t.deepEqual(caught, ['void close failed'])
})

test.serial('a close handler that throws does not keep sockets open past the loop\'s termination', async (t) => {
  captureUnhandled(t)
  const loop = new EventLoop()
  const { port } = await serve(t, loop, (ch) => ch.pipeline.addLast('bad', throwingClose([])))
  const s = await netClient(t, port)
  const c = collect(s)
  await loop.shutdownGracefully(0, 1000)
  await c.ended
  t.is(loop.state, 'terminated')
})

test.serial('an async handlerAdded that rejects takes the handler out and reaches exceptionCaught; a rejecting handlerRemoved too', async (t) => {
  const loop = loopFor(t)
  const caught: string[] = []
  let names: string[] = []
  const { port, children } = await serve(t, loop, (ch) =>
    ch.pipeline
      .addLast('catch', { exceptionCaught: (_ctx, e) => void caught.push((e as Error).message) })
      .addFirst('added', { handlerAdded: async () => Promise.reject(new Error('async handlerAdded')) })
      .addFirst('removed', { handlerRemoved: async () => Promise.reject(new Error('async handlerRemoved')) }),
  )
  const s = await netClient(t, port)
  await until(() => caught.includes('async handlerAdded'))
  const ch = children[0]
  names = ch.pipeline.names()
  t.deepEqual(names, ['removed', 'catch'])
  ch.pipeline.remove('removed')
  await until(() => caught.includes('async handlerRemoved'))
  t.deepEqual(caught, ['async handlerAdded', 'async handlerRemoved'])
  s.destroy()
})
