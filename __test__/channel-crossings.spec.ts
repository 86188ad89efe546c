// What crosses the JS/native boundary per echoed message (issue 17): a channelReadComplete no
// JS handler could act on stays native, and writeAndFlush is one op. Each saving must keep
// the behaviour of a pipeline run in one go.
import test from 'ava'

import { type ChannelHandler, type ChannelHandlerContext, FlushConsolidationHandler, LengthFieldPrepender, LineBasedFrameDecoder } from '../index'
import { crossingsFor, loopFor, netClient, pingPong, serve, until } from './channel-helpers'

const echo = (): ChannelHandler => ({ channelRead: (ctx, m) => ctx.writeAndFlush(m) })

test('an echoed message crosses as one record (the read) and one op (the write-and-flush)', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('echo', echo()))
  const s = await netClient(t, port)
  const n = 200
  const { events, ops } = await crossingsFor(loop, s, n)
  t.true(events >= n && events <= n + 10, `${events} records for ${n} messages`)
  t.true(ops >= n && ops <= n + 10, `${ops} ops for ${n} messages`)
})

test('a decoder in front of the JS handler keeps the read-complete native too', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('lines', new LineBasedFrameDecoder(64, false)).addLast('echo', echo()))
  const s = await netClient(t, port)
  const n = 100
  const { events } = await crossingsFor(loop, s, n)
  t.true(events >= n && events <= n + 10, `${events} records for ${n} messages`)
})

test('channelReadComplete still reaches a JS handler that has it, behind one that has not', async (t) => {
  const loop = loopFor(t)
  let completes = 0
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('first', { channelRead: (ctx, m) => void ctx.fireChannelRead(m) }).addLast('echo', {
      channelRead: (ctx: ChannelHandlerContext, m: unknown) => void ctx.write(m),
      channelReadComplete: (ctx: ChannelHandlerContext) => {
        completes++
        ctx.flush()
      },
    })
  })
  const s = await netClient(t, port)
  const n = 20
  // Every echo waits for the flush in channelReadComplete.
  await pingPong(s, n)
  t.true(completes >= n, `${completes} read-completes for ${n} messages`)
})

test('a native handler behind a JS handler without channelReadComplete still gets it after the reads', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => {
    // The consolidation handler holds the echo's flush until the read completes.
    ch.pipeline
      .addLast('first', { channelRead: (ctx, m) => void ctx.fireChannelRead(m) })
      .addLast('consolidate', new FlushConsolidationHandler({ explicitFlushAfterFlushes: 1000 }))
      .addLast('echo', echo())
  })
  const s = await netClient(t, port)
  await pingPong(s, 20)
  t.pass('every echo was flushed')
})

for (const [where, title] of [
  ['last', 'a handler with channelReadComplete added while a read is handled gets that read-complete'],
  ['first', 'a handler with channelReadComplete added in front of the JS handler during a read gets that read-complete'],
] as const) {
  test(title, async (t) => {
    const loop = loopFor(t)
    let completes = 0
    const flusher = {
      channelReadComplete: (c: ChannelHandlerContext) => {
        completes++
        c.flush()
        c.fireChannelReadComplete()
      },
    }
    const { port } = await serve(t, loop, (ch) => {
      ch.pipeline.addLast('echo', {
        channelRead(ctx: ChannelHandlerContext, m: unknown) {
          // Writes without flushing; the first read adds the handler that flushes.
          ctx.write(m)
          if (ctx.pipeline.get('flusher') === undefined) {
            if (where === 'last') ctx.pipeline.addLast('flusher', flusher)
            else ctx.pipeline.addFirst('flusher', flusher)
          }
        },
      })
    })
    const s = await netClient(t, port)
    await pingPong(s, 5)
    t.true(completes >= 5, `${completes} read-completes`)
  })
}

test('removing the only channelReadComplete handler keeps the other handlers working', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('watch', { channelReadComplete: (ctx: ChannelHandlerContext) => void ctx.pipeline.remove('watch') }).addLast('echo', echo())
  })
  const s = await netClient(t, port)
  await pingPong(s, 10)
  t.pass('every message was echoed')
})

test('writeAndFlush as one op reaches the handlers in front as a write, then a flush, and its promise completes', async (t) => {
  const loop = loopFor(t)
  const log: string[] = []
  let done = 0
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline
      .addLast('outer', {
        write: (ctx: ChannelHandlerContext, m: unknown, p: never) => {
          log.push('write')
          ctx.write(m, p)
        },
        flush: (ctx: ChannelHandlerContext) => {
          log.push('flush')
          ctx.flush()
        },
      })
      .addLast('frame', new LengthFieldPrepender(2))
      .addLast('echo', {
        channelRead: (ctx: ChannelHandlerContext, m: unknown) => {
          void ctx.writeAndFlush(m, ctx.newPromise()).addListener((e) => {
            if (e === null) done++
          })
        },
      })
  })
  const s = await netClient(t, port)
  const n = 10
  // Each reply is the 4-byte line behind a 2-byte length.
  await pingPong(s, n, 6)
  await until(() => done === n)
  t.deepEqual(log, Array.from({ length: n }, () => ['write', 'flush']).flat())
})

test('a write and then a writeAndFlush from one handler arrive in order', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('echo', {
      channelRead: (ctx: ChannelHandlerContext, m: unknown) => {
        ctx.write('<')
        ctx.write(m)
        ctx.writeAndFlush('>')
        ctx.flush()
      },
    })
  })
  const s = await netClient(t, port)
  const chunks: Buffer[] = []
  s.on('data', (d: Buffer) => chunks.push(d))
  s.write('abc\n')
  await until(() => Buffer.concat(chunks).length >= 6)
  t.is(Buffer.concat(chunks).toString(), '<abc\n>')
})
