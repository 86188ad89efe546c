import test from 'ava'
import * as net from 'node:net'
import { randomBytes } from 'node:crypto'
import { connect, reader, startExample } from './example-helpers'

// ---- echo and proxy ----

test.serial('echo: bytes come back unchanged', async (t) => {
  const ex = await startExample(t, 'echo')
  const s = await connect(t, ex.port)
  const r = reader(s)
  const data = Buffer.concat([Buffer.from('hello\n'), randomBytes(256 * 1024)])
  s.write(data.subarray(0, 6))
  await r.bytes(6)
  t.is(r.text(), 'hello\n')
  s.write(data.subarray(6))
  await r.bytes(data.length)
  t.deepEqual(r.data(), data)
})

test.serial('proxy: 1 MiB through the proxy to the echo example comes back intact', async (t) => {
  const echo = await startExample(t, 'echo')
  const proxy = await startExample(t, 'proxy', ['--target', `127.0.0.1:${echo.port}`])
  const s = await connect(t, proxy.port)
  const r = reader(s)
  const data = randomBytes(1 << 20)
  s.write(data)
  await r.bytes(data.length, 30_000)
  t.is(r.data().length, data.length)
  t.true(r.data().equals(data))
  s.end()
  await r.closed()
  t.is(proxy.stderr(), '')
})

test.serial('proxy: an unreachable target closes the client', async (t) => {
  const port = await new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port
      srv.close(() => resolve(p))
    })
  })
  const proxy = await startExample(t, 'proxy', ['--target', `127.0.0.1:${port}`])
  const s = await connect(t, proxy.port)
  const r = reader(s)
  await r.closed()
  t.is(r.data().length, 0)
  t.regex(proxy.stderr(), /cannot reach/)
})

for (const flag of ['--send-proxy', '--send-proxy-v2']) {
  test.serial(`proxy ${flag}: the target learns the client's address from the PROXY header`, async (t) => {
    const { EventLoop, HAProxyMessageDecoder } = await import('../index')
    const { serve } = await import('./channel-helpers')
    const loop = new EventLoop()
    t.teardown(() => loop.shutdownGracefully(0, 500))
    const { port } = await serve(t, loop, (ch) => {
      ch.pipeline.addLast('proxy', new HAProxyMessageDecoder()).addLast('app', {
        channelRead: (ctx, _m: Buffer) => {
          const m = ctx.channel.haproxy!
          ctx.writeAndFlush(`v${m.version} ${m.sourceAddress}:${m.sourcePort} via ${m.destinationPort}`)
        },
      })
    })
    const proxy = await startExample(t, 'proxy', ['--target', `127.0.0.1:${port}`, flag])
    const s = await connect(t, proxy.port)
    const r = reader(s)
    s.write('who am i')
    const want = `v${flag.endsWith('v2') ? 2 : 1} 127.0.0.1:${s.localPort} via ${proxy.port}`
    await r.bytes(want.length)
    t.is(r.text(), want)
  })
}
