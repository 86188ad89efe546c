// A TLS channel reset with many writes queued behind its SslHandler reaches exceptionCaught
// once, as a plain TCP channel does (issue 35: one reset TLS channel of examples/echo.ts
// --tls reached it 3,978 times). The examples put an IdleStateHandler first, which listens to
// every write (`unvoid`): a write made without a promise must stay silent when it fails.
import test from 'ava'
import * as net from 'node:net'
import * as tls from 'node:tls'
import { type ChannelHandler, IdleStateHandler } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { pem, serverContext, withTls } from './tls-helpers'

for (const own of [false, true]) {
  test.serial(`a reset TLS channel with thousands of queued echo writes reaches exceptionCaught once${own ? ' (own record layer)' : ''}`, async (t) => {
    t.timeout(60_000)
    const loop = loopFor(t)
    const caught: unknown[] = []
    let echoed = 0
    let closed = false
    const echo: ChannelHandler = {
      channelRead: (ctx, msg: Buffer) => {
        echoed += msg.length
        ctx.write(Buffer.from(msg))
      },
      channelReadComplete: (ctx) => void ctx.flush(),
      exceptionCaught: (_ctx, e) => void caught.push(e),
      channelInactive: (ctx) => {
        closed = true
        ctx.fireChannelInactive()
      },
    }
    const init = withTls(serverContext(own ? { experimentalOwnRecords: true } : {}), echo)
    const { port } = await serve(t, loop, (ch) => {
      init(ch)
      ch.pipeline.addFirst('idle', new IdleStateHandler(0, 0, 60_000))
    })
    const raw = net.connect(port, '127.0.0.1')
    const s = tls.connect({ socket: raw, servername: 'localhost', ca: pem('ca.pem') })
    await new Promise((r) => s.once('secureConnect', r))
    s.on('error', () => {})
    // Small writes, never read: the server's echoes queue up (one write per read).
    const piece = Buffer.alloc(512, 7)
    for (let i = 0; i < 40_000 && echoed < 8 << 20; i++) {
      if (!s.write(piece)) await new Promise((r) => setTimeout(r, 1))
    }
    await until(() => echoed >= 4 << 20, 30_000)
    raw.resetAndDestroy()
    await until(() => closed, 30_000)
    await new Promise((r) => setTimeout(r, 200))
    t.is(caught.length, 1, `exceptionCaught saw ${caught.length}: ${[...new Set(caught.map((e) => (e as { code?: string }).code))].join(', ')}`)
  })
}
