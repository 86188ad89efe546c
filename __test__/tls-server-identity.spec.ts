// checkServerIdentity (node:tls's): a netloop client lets JS judge the server once its chain
// verified; nothing is written to, or delivered from, a server before the verdict.
import test from 'ava'
import { X509Certificate } from 'node:crypto'
import { once } from 'node:events'
import * as tls from 'node:tls'
import { Bootstrap, type Channel, NetloopError, type PeerCertificate, SslContext, SslHandler } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { echo, pem, serverContext, withTls } from './tls-helpers'

type Judge = (hostname: string, cert: PeerCertificate) => Error | undefined

/** A netloop echo server presenting the test PKI's `name` certificate; its port. */
async function echoServer(t: Parameters<typeof loopFor>[0], name: string): Promise<number> {
  const { port } = await serve(t, loopFor(t), withTls(serverContext({}, name), { ...echo, exceptionCaught: () => {} }))
  return port
}

/** Connects a client judging with `judge` to localhost:`port`; `early` is written on activation. */
function connect(t: Parameters<typeof loopFor>[0], port: number, judge: Judge, extra: Partial<Parameters<typeof SslContext.forClient>[0]> = {}, early?: string) {
  const ctx = SslContext.forClient({ ca: pem('ca.pem'), checkServerIdentity: judge, ...extra })
  const got: Buffer[] = []
  const connected = new Bootstrap()
    .group(loopFor(t))
    .handler((c) => {
      c.pipeline.addLast('tls', new SslHandler(ctx)).addLast('app', {
        channelActive: (cx) => {
          if (early) cx.writeAndFlush(early)
        },
        channelRead: (_cx, m: Buffer) => void got.push(Buffer.from(m)),
        exceptionCaught: () => {},
      })
    })
    .connect(port, 'localhost')
  return { connected, got, ctx }
}

test('a pinned fingerprint accepts a server whose name does not match: the function replaces the host-name check', async (t) => {
  const port = await echoServer(t, 'wrong-host')
  const pinned = new X509Certificate(pem('wrong-host.pem')).fingerprint256
  const asked: Array<[string, PeerCertificate]> = []
  const { connected, got } = connect(t, port, (host, cert) => {
    asked.push([host, cert])
    return cert.fingerprint256 === pinned ? undefined : new Error('not the pinned certificate')
  })
  const ch = await connected
  t.teardown(() => ch.close())
  t.is(asked.length, 1)
  t.is(asked[0][0], 'localhost')
  t.regex(asked[0][1].subjectaltname!, /DNS:example\.org/)
  const x = new X509Certificate(pem('wrong-host.pem'))
  t.like(asked[0][1], { ca: false, fingerprint: x.fingerprint, fingerprint512: x.fingerprint512, serialNumber: x.serialNumber })
  t.true(ch.tls!.authorized)
  await ch.writeAndFlush('ping', ch.newPromise())
  await until(() => Buffer.concat(got).length >= 4)
  t.is(String(Buffer.concat(got)), 'ping')
})

test("a refusal rejects connect() with the function's own error and nothing written reaches the server", async (t) => {
  const received: Buffer[] = []
  const server = tls.createServer({ cert: pem('wrong-host.pem'), key: pem('wrong-host.key') }, (s) => {
    s.on('data', (d: Buffer) => received.push(d))
    s.on('error', () => {})
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const port = (server.address() as { port: number }).port
  // node's own check, as node:tls runs it by default: the name does not match.
  const { connected } = connect(t, port, (host, cert) => tls.checkServerIdentity(host, cert), {}, 'secret request')
  const err = await t.throwsAsync(connected)
  t.true(err instanceof NetloopError)
  t.is((err as NetloopError).code, 'ERR_TLS_CERT_ALTNAME_INVALID', 'the code of the error the function returned')
  t.regex(err!.message, /localhost/)
  t.is((err as Error & { cause?: { code?: string } }).cause?.code, 'ERR_TLS_CERT_ALTNAME_INVALID')
  await new Promise((r) => setTimeout(r, 100))
  t.is(Buffer.concat(received).length, 0, 'the early write never reached the server')
})

test('a function that throws refuses the server with ERR_TLS_SERVER_IDENTITY', async (t) => {
  const port = await echoServer(t, 'server')
  const { connected } = connect(t, port, () => {
    throw new Error('pin store unavailable')
  })
  const err = await t.throwsAsync(connected)
  t.is((err as NetloopError).code, 'ERR_TLS_SERVER_IDENTITY')
  t.is(err!.message, 'pin store unavailable')
})

test('with rejectUnauthorized false a refusal connects, reported as not authorized', async (t) => {
  const port = await echoServer(t, 'server')
  const { connected } = connect(t, port, () => Object.assign(new Error('not pinned'), { code: 'ERR_NOT_PINNED' }), { rejectUnauthorized: false })
  const ch: Channel = await connected
  t.teardown(() => ch.close())
  t.false(ch.tls!.authorized)
  t.is(ch.tls!.authorizationError?.message, 'not pinned')
})

test('a resumed session is not judged again (as node:tls)', async (t) => {
  const port = await echoServer(t, 'server')
  let calls = 0
  const ctx = SslContext.forClient({ ca: pem('ca.pem'), checkServerIdentity: (h, c) => (calls++, tls.checkServerIdentity(h, c)) })
  const loop = loopFor(t)
  const open = async () => {
    const ch = await new Bootstrap()
      .group(loop)
      .handler((c) => void c.pipeline.addLast('tls', new SslHandler(ctx)).addLast('app', { channelRead: () => {} }))
      .connect(port, 'localhost')
    // TLS 1.3 tickets come after the handshake: one echo round trip lets them arrive.
    await ch.writeAndFlush('x', ch.newPromise())
    await new Promise((r) => setTimeout(r, 50))
    const resumed = ch.tls!.resumed
    await ch.close()
    return resumed
  }
  t.false(await open())
  t.true(await open())
  t.is(calls, 1)
})

test('checkServerIdentity: client contexts only, a function, and not shareable with worker threads', (t) => {
  t.throws(() => SslContext.forServer({ cert: pem('server.pem'), key: pem('server.key'), checkServerIdentity: () => undefined }), { code: 'ERR_INVALID_ARG_VALUE' })
  t.throws(() => SslContext.forClient({ checkServerIdentity: 'strict' as never }), { code: 'ERR_INVALID_ARG_TYPE' })
  const ctx = SslContext.forClient({ checkServerIdentity: () => undefined })
  t.throws(() => new SslContext({ netloopSslContext: ctx.netloopSslContext }), { code: 'ERR_TLS_CHECK_SERVER_IDENTITY_NOT_SHAREABLE' })
  t.throws(() => ctx.reload({}), { code: 'ERR_INVALID_ARG_VALUE', message: /checkServerIdentity/ })
  t.notThrows(() => ctx.reload({ checkServerIdentity: () => new Error('no') }))
})
