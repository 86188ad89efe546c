import test from 'ava'

import { type ChannelHandler, type ChannelHandlerContext, FlushConsolidationHandler, LineBasedFrameDecoder, NetloopError } from '../index'
import { collect, loopFor, netClient, serve, until } from './channel-helpers'

const LINES = 16
const batch = Array.from({ length: LINES }, (_, i) => `line ${String(i).padStart(2, '0')}\n`).join('')

/**
 * A server whose pipeline is: a JS flush counter (towards the head: it sees every flush that
 * leaves the consolidation handler, and each flush it passes on is a write to the socket), the
 * consolidation handler (or none), a line decoder, and a handler that answers every line with
 * `writeAndFlush`. The client sends 16 lines in one write and waits for the 16 answers.
 */
async function flushesFor(t: Parameters<typeof loopFor>[0], consolidation?: FlushConsolidationHandler) {
  const loop = loopFor(t)
  let flushes = 0
  const counter: ChannelHandler = {
    flush(ctx: ChannelHandlerContext) {
      flushes++
      ctx.flush()
    },
  }
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('count', counter)
    if (consolidation) ch.pipeline.addLast('consolidate', consolidation)
    ch.pipeline.addLast('lines', new LineBasedFrameDecoder(64, false)).addLast('echo', {
      channelRead: (ctx: ChannelHandlerContext, line: Buffer) => void ctx.writeAndFlush(line),
    })
  })
  const s = await netClient(t, port)
  const got = collect(s)
  s.write(batch)
  await until(() => got.data().length === batch.length)
  t.is(got.data().toString(), batch, 'every line answered, in order')
  return flushes
}

test('without consolidation a JS handler that writeAndFlushes each line flushes once per line', async (t) => {
  t.is(await flushesFor(t), LINES)
})

test('consolidateWhenNoReadInProgress turns the 16 writeAndFlushes of a pipelined batch into one or two flushes', async (t) => {
  // One read batch normally; two if the 16 lines happen to arrive in two reads.
  const flushes = await flushesFor(t, new FlushConsolidationHandler({ consolidateWhenNoReadInProgress: true }))
  t.true(flushes >= 1 && flushes <= 2, `${flushes} flushes`)
})

test('explicitFlushAfterFlushes passes every nth flush on at once', async (t) => {
  const flushes = await flushesFor(t, new FlushConsolidationHandler({ explicitFlushAfterFlushes: 4, consolidateWhenNoReadInProgress: true }))
  t.true(flushes >= 4 && flushes <= 5, `${flushes} flushes`)
})

for (const options of [{}, { consolidateWhenNoReadInProgress: true }]) {
  test(`with ${JSON.stringify(options)} and no JS handler in front, every pipelined line is answered in order`, async (t) => {
    const loop = loopFor(t)
    const { port } = await serve(t, loop, (ch) => {
      ch.pipeline
        .addLast('consolidate', new FlushConsolidationHandler(options))
        .addLast('lines', new LineBasedFrameDecoder(64, false))
        .addLast('echo', { channelRead: (ctx: ChannelHandlerContext, line: Buffer) => void ctx.writeAndFlush(line) })
    })
    const s = await netClient(t, port)
    const got = collect(s)
    for (let i = 0; i < 3; i++) s.write(batch)
    await until(() => got.data().length === 3 * batch.length)
    t.is(got.data().toString(), batch.repeat(3))
  })
}

test('FlushConsolidationHandler checks its options', (t) => {
  for (const bad of [0, -1, 1.5, Number.NaN]) {
    const e = t.throws(() => new FlushConsolidationHandler({ explicitFlushAfterFlushes: bad }))
    t.true(e instanceof NetloopError)
  }
  t.throws(() => new FlushConsolidationHandler({ consolidateWhenNoReadInProgress: 'yes' as unknown as boolean }), { code: 'ERR_INVALID_ARG_TYPE' })
})
