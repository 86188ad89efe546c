import test from 'ava'
import * as tls from 'node:tls'
import { once } from 'node:events'
import { Bootstrap, type Channel, NetloopError, SslContext, SslHandler, SslHandshakeCompletionEvent } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { clientContext, echo, nodeTlsClient as nodeClient, pem, serverContext, withTls, workerGroupServer } from './tls-helpers'

test('a node:tls client talks to a netloop TLS server through a JS echo handler', async (t) => {
  const loop = loopFor(t)
  const events: unknown[] = []
  const ctx = serverContext({ ALPNProtocols: ['h2', 'http/1.1'] })
  const { port, children } = await serve(t, loop, withTls(ctx, { ...echo, userEventTriggered: (_c, e) => void events.push(e) }))
  const s = await nodeClient(port, { ALPNProtocols: ['http/1.1'] })
  t.teardown(() => s.destroy())
  t.is(s.getProtocol(), 'TLSv1.3')
  t.is(s.alpnProtocol, 'http/1.1')
  s.write('hello over tls')
  const [data] = await once(s, 'data')
  t.is(String(data), 'hello over tls')
  await until(() => events.length > 0)
  t.true(events[0] instanceof SslHandshakeCompletionEvent && events[0].isSuccess)
  const info = children[0].tls!
  t.is(info.protocol, 'TLSv1.3')
  t.is(info.alpnProtocol, 'http/1.1')
  t.is(info.servername, 'localhost')
  t.false(info.authorized)
  t.is(info.peerCertificate, undefined)
})

test('a netloop client connects to a node:tls server, verifies it and reads its certificate', async (t) => {
  const server = tls.createServer({ cert: pem('server.pem'), key: pem('server.key') }, (s) => s.pipe(s))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const port = (server.address() as { port: number }).port
  const loop = loopFor(t)
  const got: Buffer[] = []
  const ch: Channel = await new Bootstrap()
    .group(loop)
    .handler((c) => c.pipeline.addLast('tls', new SslHandler(clientContext(), { servername: 'localhost' })).addLast('app', { channelRead: (_c, m: Buffer) => void got.push(Buffer.from(m)) }))
    .connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  const info = ch.tls!
  t.true(info.authorized)
  t.is(info.peerCertificate!.subject.CN, 'localhost')
  t.regex(info.peerCertificate!.subjectaltname!, /DNS:localhost/)
  await ch.writeAndFlush(Buffer.from('ping'), ch.newPromise())
  await until(() => Buffer.concat(got).length >= 4)
  t.is(String(Buffer.concat(got)), 'ping')
})

test('connect() rejects with the verification failure, and the channel closes', async (t) => {
  const server = tls.createServer({ cert: pem('other-server.pem'), key: pem('other-server.key') }, () => {})
  server.on('tlsClientError', () => {})
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const port = (server.address() as { port: number }).port
  const loop = loopFor(t)
  let ch: Channel | undefined
  const err = await t.throwsAsync(
    new Bootstrap()
      .group(loop)
      .handler((c) => {
        ch = c
        c.pipeline.addLast('tls', new SslHandler(clientContext(), { servername: 'localhost' })).addLast('app', { exceptionCaught: () => {} })
      })
      .connect(port, '127.0.0.1'),
  )
  t.true(err instanceof NetloopError)
  t.is((err as NetloopError).code, 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY')
  await until(() => ch !== undefined && !ch.isOpen)
})

test('SslContext checks its options with Node-style errors', (t) => {
  t.throws(() => SslContext.forServer({}), { code: 'ERR_TLS_INVALID_CONTEXT' })
  t.throws(() => SslContext.forServer({ cert: 'garbage', key: 'garbage' }), { code: 'ERR_TLS_INVALID_CONTEXT' })
  t.throws(() => SslContext.forClient({ minVersion: 'TLSv1' as never }), { code: 'ERR_TLS_INVALID_PROTOCOL_VERSION' })
  t.throws(() => SslContext.forClient({ ALPNProtocols: 'h2' as never }), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => new SslHandler({} as never), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => SslContext.forServer({ cert: pem('server.pem'), key: pem('client.key') }), { message: /does not match/ })
})

test('one context made on the main thread serves TLS on every worker thread of a group', async (t) => {
  const port = await workerGroupServer(t, 'tls-echo-module.ts', { tls: serverContext() })
  const threads = new Set<string>()
  for (let i = 0; i < 4; i++) {
    const s = await nodeClient(port)
    s.write('hi')
    const [data] = await once(s, 'data')
    const m = /^thread=(\d+) hi$/.exec(String(data))
    t.truthy(m, String(data))
    threads.add(m![1])
    s.destroy()
  }
  t.is(threads.size, 2, 'both workers served TLS with the shared context')
})

test('connect() settles after the handshake even when no JS handler sits behind the SslHandler', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, withTls(serverContext(), echo))
  const ch = await new Bootstrap()
    .group(loop)
    .handler((c) => void c.pipeline.addLast('tls', new SslHandler(clientContext())))
    .connect(port, 'localhost')
  t.teardown(() => ch.close())
  t.is(ch.tls!.servername, 'localhost', 'the connect host was sent and verified')
  t.true(ch.tls!.authorized)
})

test('channel.tls stays readable after the channel closed (as node:tls getters do)', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, withTls(serverContext(), echo))
  const ch = await new Bootstrap()
    .group(loop)
    .handler((c) => void c.pipeline.addLast('tls', new SslHandler(clientContext())).addLast('app', {}))
    .connect(port, 'localhost')
  await ch.close()
  await until(() => !ch.isOpen)
  await new Promise((r) => setTimeout(r, 50))
  t.is(ch.tls?.protocol, 'TLSv1.3')
  t.true(ch.tls!.authorized)
})
