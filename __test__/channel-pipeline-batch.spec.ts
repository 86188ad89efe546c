import test from 'ava'

import { type ChannelHandler, LineBasedFrameDecoder } from '../index'
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
