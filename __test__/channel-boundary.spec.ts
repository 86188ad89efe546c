// Pipelines where JS handlers sit on both sides of a native one (JS -> native -> JS): events and
// operations cross the JS/native boundary several times and must behave as in one pipeline.
import test from 'ava'

import { type Channel, type ChannelHandler, LineBasedFrameDecoder } from '../index'
import { crossingsFor, loopFor, netClient, pingPong, recorder, serve, until } from './channel-helpers'

/** `recorder` plus handlerRemoved, tagged. */
function tracked(log: string[], tag: string): ChannelHandler {
  return { ...recorder(log, tag), handlerRemoved: () => void log.push(`${tag}removed`) }
}

test('every handler of a JS -> native -> JS pipeline sees inactive, then unregistered, then handlerRemoved', async (t) => {
  const loop = loopFor(t)
  const log: string[] = []
  let child: Channel | undefined
  const { port } = await serve(t, loop, (ch) => {
    child = ch
    ch.pipeline.addLast('first', tracked(log, 'A:')).addLast('lines', new LineBasedFrameDecoder(1024)).addLast('last', tracked(log, 'C:'))
  })
  const s = await netClient(t, port)
  s.write('one\n')
  await until(() => log.includes('C:read:one'))
  s.end()
  await until(() => log.includes('A:removed') && log.includes('C:removed'))
  await child!.closeFuture
  const order = (tag: string) => log.filter((e) => e.startsWith(tag) && /inactive|unregistered|removed/.test(e))
  t.deepEqual(order('A:'), ['A:inactive', 'A:unregistered', 'A:removed'])
  t.deepEqual(order('C:'), ['C:inactive', 'C:unregistered', 'C:removed'])
  // As in Netty, the handlers are removed once the events went through the whole pipeline.
  t.true(log.indexOf('C:unregistered') < log.indexOf('A:removed'))
  t.true(log.indexOf('C:unregistered') < log.indexOf('C:removed'))
})

test('a JS handler behind two native handlers and another JS handler still sees the close', async (t) => {
  const loop = loopFor(t)
  const log: string[] = []
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline
      .addLast('lines', new LineBasedFrameDecoder(1024, false))
      .addLast('first', tracked(log, 'A:'))
      .addLast('again', new LineBasedFrameDecoder(1024))
      .addLast('middle', tracked(log, 'B:'))
      .addLast('last', tracked(log, 'C:'))
  })
  const s = await netClient(t, port)
  s.write('x\n')
  await until(() => log.includes('C:read:x'))
  s.destroy()
  await until(() => ['A:', 'B:', 'C:'].every((tag) => log.includes(`${tag}removed`)))
  for (const tag of ['A:', 'B:', 'C:']) {
    t.deepEqual(
      log.filter((e) => e.startsWith(tag) && /inactive|unregistered|removed/.test(e)),
      [`${tag}inactive`, `${tag}unregistered`, `${tag}removed`],
    )
  }
})

test('a write made behind a native handler reaches the outbound buffer: the writability loop stops and everything arrives', async (t) => {
  const loop = loopFor(t)
  const chunk = Buffer.alloc(4096, 7)
  const cap = 10_000
  let writes = -1
  const { port } = await serve(
    t,
    loop,
    (ch) => {
      ch.pipeline
        .addLast('first', { channelRead: (ctx, m) => void ctx.fireChannelRead(m) })
        .addLast('lines', new LineBasedFrameDecoder(1024))
        .addLast('producer', {
          channelActive: (ctx) => {
            let n = 0
            while (ctx.channel.isWritable && n < cap) {
              ctx.writeAndFlush(chunk)
              n++
            }
            writes = n
          },
        })
    },
    { writeBufferHighWaterMark: 64 * 1024, writeBufferLowWaterMark: 32 * 1024 },
  )
  const s = await netClient(t, port)
  let received = 0
  s.on('data', (d) => (received += d.length))
  await until(() => writes >= 0)
  t.true(writes < cap, `the loop ran ${writes} writes`)
  await until(() => received === writes * chunk.length)
  t.pass()
})

test("autoRead's read request passes a JS handler without outbound methods natively: no record and no op of it per echoed message", async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('echo', { channelRead: (ctx, m) => ctx.writeAndFlush(m) } satisfies ChannelHandler)
  })
  const s = await netClient(t, port)
  const n = 200
  const { events, ops } = await crossingsFor(loop, s, n)
  // At most two records and two ops per message (channel-crossings.spec.ts counts them
  // exactly); the read request that autoRead makes after each batch used to add a record to
  // JS and an op back.
  t.true(events >= n && events <= 2 * n + 10, `${events} records for ${n} messages`)
  t.true(ops >= n && ops <= 2 * n + 10, `${ops} ops for ${n} messages`)
})

test('a read request still reaches a JS handler with a read method in front of a native handler and an inbound-only JS handler', async (t) => {
  const loop = loopFor(t)
  let reads = 0
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline
      .addLast('reads', {
        read: (ctx) => {
          reads++
          ctx.read()
        },
      } satisfies ChannelHandler)
      .addLast('lines', new LineBasedFrameDecoder(1024, false))
      .addLast('echo', { channelRead: (ctx, m) => ctx.writeAndFlush(m) } satisfies ChannelHandler)
  })
  const s = await netClient(t, port)
  const n = 20
  await pingPong(s, n)
  // autoRead asks for a read after every batch of reads (one per message here, the client
  // waits for each echo); each request passes 'echo' and the decoder natively, then 'reads'.
  t.true(reads >= n, `${reads} read requests for ${n} messages`)
})
