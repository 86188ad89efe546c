// Writes made by tasks and timers (code a loop runs outside a channel event) go to the socket
// like any other: a large Buffer written from loop.execute or loop.schedule is not lost, and
// its promise resolves only once the socket took its bytes.
import test from 'ava'
import { loopFor, netClient, serve, until } from './channel-helpers'

for (const where of ['loop.execute', 'loop.schedule'] as const) {
  test(`large writes made in ${where} reach the peer, and their promises resolve only for bytes the socket took`, async (t) => {
    const loop = loopFor(t)
    const chunk = Buffer.alloc(16 * 1024, 9)
    const outcomes: Array<Promise<string>> = []
    const { port } = await serve(t, loop, (ch) =>
      ch.pipeline.addLast('writer', {
        channelActive: (ctx) => {
          const write = () => {
            for (let i = 0; i < 1000; i++) outcomes.push(ctx.channel.write(chunk, ctx.channel.newPromise()).then(() => 'ok', (e: { code?: string }) => e.code ?? 'error'))
            ctx.channel.flush()
          }
          if (where === 'loop.execute') loop.execute(write)
          else loop.schedule(write, 1)
        },
        exceptionCaught: () => {},
      }),
    )
    // A client that does not read: the kernel takes a few MiB, the rest stays queued.
    const s = await netClient(t, port)
    s.pause()
    await until(() => outcomes.length === 1000)
    await until(() => (loop.metrics().bytesOut ?? 0) >= 1000 * chunk.length, 5_000)
    await loop.shutdownGracefully(0, 1000)
    const results = await Promise.all(outcomes)
    const ok = results.filter((r) => r === 'ok').length
    const failed = results.filter((r) => r === 'ERR_CHANNEL_CLOSED').length
    let got = 0
    s.on('data', (d: Buffer) => void (got += d.length))
    s.resume()
    await new Promise((r) => s.once('close', r))
    t.is(ok + failed, 1000, `every write settled: ${JSON.stringify(results.filter((r) => r !== 'ok' && r !== 'ERR_CHANNEL_CLOSED').slice(0, 3))}`)
    t.true(failed > 0, 'the writes the socket could not take failed when the channel closed')
    t.true(got >= ok * chunk.length, `the peer got ${got} bytes; ${ok} writes of ${chunk.length} were acknowledged`)
  })
}
