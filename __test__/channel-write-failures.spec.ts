import test from 'ava'

import { type Channel, type ChannelHandlerContext, type ChannelPromise, LineBasedFrameDecoder, NetloopError } from '../index'
import { captureUnhandled, loopFor, netClient, serve, until } from './channel-helpers'

const PENDING = 1000
const chunk = Buffer.alloc(1024, 1)

/** The code of `e`'s cause, or of `e` itself (a flushed write fails with the error itself). */
function rootCode(e: unknown): string | undefined {
  const err = e as { code?: string; cause?: { code?: string } }
  return err.cause?.code ?? err.code
}

/**
 * A server whose handler makes `PENDING` writes (none flushed, so they stay pending) when the
 * client says hello, then a client that resets the connection. `write` makes each write.
 */
async function resetWithPendingWrites(
  t: Parameters<Parameters<typeof test>[1]>[0],
  write: (ctx: ChannelHandlerContext) => void,
): Promise<{ caught: unknown[]; child: Channel }> {
  const loop = loopFor(t)
  const caught: unknown[] = []
  let child: Channel | undefined
  let written = false
  const { port } = await serve(t, loop, (ch) => {
    child = ch
    ch.pipeline.addLast('w', {
      channelRead: (ctx) => {
        for (let i = 0; i < PENDING; i++) write(ctx)
        written = true
      },
      exceptionCaught: (_ctx, e) => void caught.push(e),
    })
  })
  const s = await netClient(t, port)
  s.write('hello')
  await until(() => written)
  s.resetAndDestroy()
  await until(() => child !== undefined && !child.isOpen)
  await child!.closeFuture
  return { caught, child: child! }
}

test.serial('a reset with 1,000 pending writes made without a promise reaches exceptionCaught once', async (t) => {
  const unhandled = captureUnhandled(t)
  const { caught } = await resetWithPendingWrites(t, (ctx) => ctx.write(chunk))
  // Let whatever the close produced be delivered (the close future completes first).
  await new Promise((r) => setTimeout(r, 50))
  t.is(caught.length, 1, `exceptionCaught saw: ${[...new Set(caught.map((e) => (e as { code?: string }).code))].join(', ')}`)
  t.is((caught[0] as NetloopError).code, 'ECONNRESET')
  t.deepEqual(unhandled, [])
})

test.serial('a reset fails each of 1,000 awaited pending writes with the error that closed the channel as its cause', async (t) => {
  const promises: ChannelPromise[] = []
  const { caught } = await resetWithPendingWrites(t, (ctx) => void promises.push(ctx.write(chunk, ctx.newPromise())))
  t.is(promises.length, PENDING)
  const outcomes = await Promise.allSettled(promises.map((p) => p.promise))
  const failures = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason as NetloopError)
  t.is(failures.length, PENDING)
  t.true(failures.every((e) => e instanceof NetloopError && e.code === 'ERR_CHANNEL_CLOSED'))
  t.true(failures.every((e) => rootCode(e) === 'ECONNRESET'), `causes: ${[...new Set(failures.map(rootCode))].join(', ')}`)
  t.is(caught.length, 1)
})

test.serial('only a write given voidPromise() reports its failure to exceptionCaught; a plain one is silent', async (t) => {
  const unhandled = captureUnhandled(t)
  const loop = loopFor(t)
  const caught: unknown[] = []
  let child: Channel | undefined
  const { port } = await serve(t, loop, (ch) => {
    child = ch
    ch.pipeline.addLast('w', { exceptionCaught: (_ctx, e) => void caught.push(e) })
  })
  const s = await netClient(t, port)
  await until(() => child !== undefined && child.isActive)
  // A JS value that reaches the socket fails its write (ERR_UNSUPPORTED_MESSAGE).
  child!.writeAndFlush({ plain: true } as never)
  child!.writeAndFlush({ void: true } as never, child!.voidPromise())
  const awaited = child!.writeAndFlush({ awaited: true } as never, child!.newPromise())
  await t.throwsAsync(awaited.promise, { code: 'ERR_UNSUPPORTED_MESSAGE' })
  await until(() => caught.length >= 1)
  // The plain write failed before the awaited one: had it been reported, it would be here.
  t.is(caught.length, 1)
  t.is((caught[0] as NetloopError).code, 'ERR_UNSUPPORTED_MESSAGE')
  t.true(child!.isOpen)
  t.deepEqual(unhandled, [])
  s.destroy()
})

test.serial('a voidPromise() write that reaches the native side after it forgot the channel still reports its failure', async (t) => {
  // The race: the native side forgets a closed channel B at the start of a delivery round,
  // and a record before B's forget in that round makes a JS handler write to B, which JS
  // still knows. Here that record is a line from A's native decoder, fed by B's
  // channelInactive in the round before, so the order is certain.
  const unhandled = captureUnhandled(t)
  const loop = loopFor(t)
  let a: Channel | undefined
  let b: Channel | undefined
  let knownWhenWritten: boolean | undefined
  let closing: ChannelPromise | undefined
  const { port, children } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('lines', new LineBasedFrameDecoder(64)).addLast('app', {
      channelRead: () => {
        knownWhenWritten = b!._known
        b!.writeAndFlush(Buffer.from('late'), b!.voidPromise())
        // Closing it succeeds, as closing a closed channel does (Netty's close future is done).
        closing = b!.pipeline.context('app')!.close()
      },
      channelInactive: (ctx) => {
        if (ch === b) a!.pipeline.fireChannelRead(Buffer.from('go\n'))
        ctx.fireChannelInactive()
      },
    })
  })
  await netClient(t, port)
  const sb = await netClient(t, port)
  await until(() => children.length === 2 && children.every((c) => c.isActive))
  b = children.find((c) => c.remoteAddress!.port === sb.localPort)
  a = children.find((c) => c !== b)
  sb.destroy()
  await until(() => unhandled.length > 0)
  t.true(knownWhenWritten, 'JS wrote while it still knew the channel (the race this test is about)')
  t.false(b!._known)
  t.is(unhandled.length, 1)
  t.is(unhandled[0].channel, b)
  t.is((unhandled[0].error as NetloopError).code, 'ERR_CHANNEL_CLOSED')
  await t.notThrowsAsync(closing!.promise)
  t.true(a!.isOpen)
})

test('void promises cannot be listened to; unvoid() gives one that can', async (t) => {
  const loop = loopFor(t)
  let child: Channel | undefined
  const { port } = await serve(t, loop, (ch) => void (child = ch))
  const s = await netClient(t, port)
  await until(() => child !== undefined && child.isActive)
  const v = child!.voidPromise()
  t.true(v.isVoid)
  t.throws(() => v.addListener(() => {}), { code: 'ERR_INVALID_STATE' })
  const real = v.unvoid()
  t.false(real.isVoid)
  let outcome: Error | null | undefined
  real.addListener((e) => (outcome = e))
  child!.writeAndFlush('x', real)
  await real
  t.is(outcome, null)
  s.destroy()
})

test.serial('an outbound handler gets a promise it may listen to for a write made without one; unheard, its failure is silent', async (t) => {
  const unhandled = captureUnhandled(t)
  const loop = loopFor(t)
  const outcomes: string[] = []
  const caught: unknown[] = []
  let child: Channel | undefined
  const { port } = await serve(t, loop, (ch) => {
    child = ch
    ch.pipeline
      .addLast('refuse', {
        write: (ctx, msg, promise) => {
          if (String(msg) === 'refused') throw new Error('refused')
          ctx.write(msg, promise)
        },
      })
      .addLast('listen', {
        write: (ctx, msg, promise) => {
          t.false(promise.isVoid)
          if (String(msg) !== 'unheard') promise.addListener((e) => void outcomes.push(`${String(msg)}:${e === null ? 'ok' : e.message}`))
          ctx.write(msg, promise)
        },
        exceptionCaught: (_ctx, e) => void caught.push(e),
      })
  })
  const s = await netClient(t, port)
  let received = ''
  s.on('data', (d) => (received += d))
  await until(() => child !== undefined && child.isActive)
  child!.write('refused')
  child!.write('unheard')
  child!.writeAndFlush('heard')
  await until(() => outcomes.length === 2 && received === 'unheardheard')
  t.deepEqual(outcomes, ['refused:refused', 'heard:ok'])
  t.deepEqual(caught, [])
  t.deepEqual(unhandled, [])
  s.destroy()
})

for (const how of ['a reset', 'a FIN then a reset'] as const) {
  test.serial(`flushed writes broken by ${how} from the peer reject with the I/O error; a write after the close with ERR_CHANNEL_CLOSED`, async (t) => {
    const loop = loopFor(t)
    let child: Channel | undefined
    const flushed: ChannelPromise[] = []
    const { port } = await serve(t, loop, (ch) => {
      child = ch
      ch.pipeline.addLast('w', {
        // 64 MiB the peer never reads: most of it stays in the outbound buffer
        channelRead: (ctx) => {
          for (let i = 0; i < 64; i++) flushed.push(ctx.writeAndFlush(Buffer.alloc(1 << 20, 1), ctx.newPromise()))
        },
        exceptionCaught: () => {},
      })
    })
    const s = await netClient(t, port)
    s.pause()
    s.write('hello')
    await until(() => flushed.length === 64 && !child!.isWritable)
    if (how === 'a reset') s.resetAndDestroy()
    else s.end(() => s.resetAndDestroy()) // both reach the server before it reads the FIN
    await child!.closeFuture
    const outcomes = await Promise.allSettled(flushed.map((p) => p.promise))
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason as NetloopError)
    t.true(failed.length > 0, 'some writes were still queued')
    const codes = [...new Set(failed.map(rootCode))]
    t.true(codes.every((c) => c === 'EPIPE' || c === 'ECONNRESET'), `failed with: ${codes.join(', ')}`)
    const late = child!.writeAndFlush(Buffer.from('late'), child!.newPromise())
    const err = await t.throwsAsync(late.promise)
    t.is((err as NetloopError).code, 'ERR_CHANNEL_CLOSED')
  })
}
