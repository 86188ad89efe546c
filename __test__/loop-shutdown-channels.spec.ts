// A loop's shutdown closes its channels (Netty's closeAll) and ends on time: a channel whose
// close a JS handler holds is closed when the loop terminates, its pending writes failing with
// the shutdown as the reason, and its peer sees the connection end.
import test from 'ava'
import { EventLoop } from '../index'
import { netClient, serve, until } from './channel-helpers'

test('a channel whose close a JS handler holds is closed at termination: writes fail with ERR_LOOP_SHUTDOWN, the peer sees the end', async (t) => {
  const loop = new EventLoop()
  const chunk = Buffer.alloc(16 * 1024, 3)
  const outcomes: Array<Promise<string>> = []
  let held = 0
  const { port } = await serve(t, loop, (ch) =>
    ch.pipeline
      .addLast('holds-close', { close: () => void held++ })
      .addLast('writer', {
        channelActive: (ctx) => {
          for (let i = 0; i < 1000; i++) outcomes.push(ctx.channel.write(chunk, ctx.channel.newPromise()).then(() => 'ok', (e: { code?: string; cause?: { code?: string } }) => `${e.code}/${e.cause?.code ?? ''}`))
          ctx.channel.flush()
        },
      }),
  )
  const s = await netClient(t, port)
  s.pause() // the kernel takes a few MiB, the rest stays queued
  await until(() => outcomes.length === 1000)
  const ended = new Promise<void>((r) => s.once('close', () => r()))
  const started = performance.now()
  await loop.shutdownGracefully(100, 1000)
  const took = performance.now() - started
  t.true(held >= 1, 'the shutdown asked the pipeline to close the channel')
  t.true(took < 1000 + 500, `the shutdown took ${took.toFixed(0)} ms`)
  const results = await Promise.all(outcomes)
  const kinds = new Set(results)
  t.true(results.includes('ok'), 'what the socket took was acknowledged')
  t.true(results.some((r) => r.includes('ERR_LOOP_SHUTDOWN')), `the rest failed with the shutdown: ${[...kinds].join(', ')}`)
  t.deepEqual([...kinds].filter((k) => k !== 'ok' && !k.includes('ERR_LOOP_SHUTDOWN')), [], 'and with nothing else')
  s.resume()
  await ended
  t.pass('the peer saw the connection end')
})
