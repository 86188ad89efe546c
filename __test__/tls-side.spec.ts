// A context of the wrong side for the channel is refused when the SslHandler is added, with a
// clear error, instead of a handshake the peer cannot make sense of.
import test from 'ava'
import * as tls from 'node:tls'

import { Bootstrap, type Channel, NetloopError, SslContext, SslHandler } from '../index'
import { loopFor, netClient, serve, until } from './channel-helpers'
import { clientContext, pem, serverContext } from './tls-helpers'

test('a client context (no isServer) on an accepted channel is refused when the SslHandler is added', async (t) => {
  const loop = loopFor(t)
  const ctx = new SslContext({ cert: pem('server.pem'), key: pem('server.key') }) // as tls.createSecureContext users write it
  t.false(ctx.isServer)
  let refused: unknown
  let child: Channel | undefined
  const { port } = await serve(t, loop, (ch) => {
    child = ch
    try {
      ch.pipeline.addLast('tls', new SslHandler(ctx))
    } catch (e) {
      refused = e
      ch.close()
    }
  })
  const s = await netClient(t, port)
  await until(() => refused !== undefined)
  t.true(refused instanceof NetloopError)
  t.is((refused as NetloopError).code, 'ERR_INVALID_ARG_VALUE')
  t.regex((refused as Error).message, /client context on channel \d+, which a server accepted: make the context with isServer: true/)
  t.deepEqual(child!.pipeline.names(), [])
  s.destroy()
})

test('a server context on a connected channel is refused when the SslHandler is added', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, () => {})
  let refused: unknown
  const ch = await new Bootstrap()
    .group(loop)
    .handler((c) => {
      try {
        c.pipeline.addLast('tls', new SslHandler(serverContext()))
      } catch (e) {
        refused = e
      }
    })
    .connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  t.is((refused as NetloopError)?.code, 'ERR_INVALID_ARG_VALUE')
  t.regex((refused as Error).message, /server context \(isServer: true\) on channel \d+, which connected to a server/)
})

test('contexts of the right side still serve and connect (node:tls client against a server context)', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('tls', new SslHandler(serverContext())).addLast('echo', { channelRead: (ctx, m) => void ctx.writeAndFlush(m) })
  })
  const s = tls.connect({ port, host: '127.0.0.1', ca: pem('ca.pem'), servername: 'localhost' })
  t.teardown(() => s.destroy())
  s.write('ping')
  const [data] = (await new Promise((resolve, reject) => {
    s.once('data', (d) => resolve([d]))
    s.once('error', reject)
  })) as [Buffer]
  t.is(data.toString(), 'ping')
  t.false(clientContext().isServer)
})
