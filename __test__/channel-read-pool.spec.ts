import test from 'ava'

import { loopFor, netClient, serve, until } from './channel-helpers'

// Small delivery batches are copied into a per-thread pool Buffer one after the other (as
// Node's pooled Buffers): what JS keeps of one must stay as it was while later batches fill
// the pool and new pools replace it.

test('small reads kept by a handler stay unchanged while thousands of later reads arrive', async (t) => {
  const loop = loopFor(t)
  const kept: Buffer[] = []
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('keep', {
      channelRead(ctx, msg: Buffer) {
        kept.push(msg)
        ctx.writeAndFlush(Buffer.from([msg.length & 0xff]))
      },
    })
  })
  const s = await netClient(t, port)
  const N = 3000
  const sent: Buffer[] = []
  let acks = 0
  s.on('data', (d: Buffer) => {
    acks += d.length
    if (sent.length < N) send()
  })
  const send = () => {
    const i = sent.length
    const m = Buffer.alloc(2 + (i % 200), (i * 7) & 0xff)
    m.writeUInt16BE(i, 0)
    sent.push(m)
    s.write(m)
  }
  send()
  await until(() => acks >= N, 30_000)
  const got = Buffer.concat(kept)
  t.true(kept.every((b) => Buffer.isBuffer(b)))
  t.true(got.equals(Buffer.concat(sent)))
})
