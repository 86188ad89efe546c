import test from 'ava'

import type { Channel, NetloopError } from '../index'
import { loopFor, netClient, serve, sleep, until } from './channel-helpers'

type WithCause = NetloopError & { cause?: NetloopError }

test('operations on a channel closed by a reset fail with ERR_CHANNEL_CLOSED whose cause is the ECONNRESET', async (t) => {
  const loop = loopFor(t)
  let child!: Channel
  const seen: string[] = []
  let inHandler: Promise<unknown> | undefined
  const { port } = await serve(t, loop, (ch) => {
    child = ch
    ch.pipeline.addLast('h', {
      exceptionCaught(ctx, err) {
        seen.push((err as NetloopError).code)
        // Made while the channel is closing: applied after the close.
        inHandler = ctx.writeAndFlush('x', ctx.newPromise()).promise.catch((e: unknown) => e)
      },
    })
  })
  const s = await netClient(t, port)
  await until(() => child !== undefined && child.isActive)
  s.resetAndDestroy()
  await child.closeFuture
  t.deepEqual(seen, ['ECONNRESET'])
  const early = (await inHandler) as WithCause
  t.is(early.code, 'ERR_CHANNEL_CLOSED')
  t.is(early.cause?.code, 'ECONNRESET')
  await sleep(20) // the channel leaves the native side; JS keeps the cause
  const late = (await child.writeAndFlush('late', child.newPromise()).promise.catch((e: unknown) => e)) as WithCause
  t.is(late.code, 'ERR_CHANNEL_CLOSED')
  t.is(late.cause?.code, 'ECONNRESET')
})

test('operations on a channel the user closed fail without a cause', async (t) => {
  const loop = loopFor(t)
  let child!: Channel
  const { port } = await serve(t, loop, (ch) => {
    child = ch
  })
  await netClient(t, port)
  await until(() => child !== undefined && child.isActive)
  await child.close()
  const e = (await child.writeAndFlush('late', child.newPromise()).promise.catch((err: unknown) => err)) as WithCause
  t.is(e.code, 'ERR_CHANNEL_CLOSED')
  t.is(e.cause, undefined)
})
