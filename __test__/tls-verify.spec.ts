import test, { type ExecutionContext } from 'ava'
import * as tls from 'node:tls'
import { Bootstrap, type Channel, type ChannelHandler, NetloopError, SslHandler } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { clientContext, echo, nodeEchoServer, otherCaClient, pem, serverContext, withTls } from './tls-helpers'

type T = ExecutionContext

/** A netloop TLS echo server that records the exceptions its children see. */
async function mtlsServer(t: T, extra: Parameters<typeof serverContext>[0]) {
  const errors: unknown[] = []
  const loop = loopFor(t)
  const app: ChannelHandler = { ...echo, exceptionCaught: (_c, e) => void errors.push(e) }
  const s = await serve(t, loop, withTls(serverContext({ requestCert: true, ca: pem('ca.pem'), ...extra }), app))
  return { ...s, errors }
}

/**
 * A node:tls client that writes `ping` once connected and reports how it ended: the echo, or
 * the error it saw (with TLS 1.3 a refused client certificate shows only after the client's
 * side of the handshake is done, as the server's alert).
 */
function nodeClient(t: T, port: number, opts: tls.ConnectionOptions): Promise<{ echoed?: string; error?: Error }> {
  return new Promise((resolve) => {
    const s = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem'), ...opts }, () => s.write('ping'))
    t.teardown(() => s.destroy())
    s.once('data', (d) => resolve({ echoed: String(d) }))
    s.once('error', (error) => resolve({ error }))
    s.once('close', () => resolve({}))
  })
}

test('mTLS: a client certificate signed by the CA is accepted and the server sees it', async (t) => {
  const { port, children, errors } = await mtlsServer(t, {})
  const r = await nodeClient(t, port, { cert: pem('client.pem'), key: pem('client.key') })
  t.is(r.echoed, 'ping')
  const info = children[0].tls!
  t.true(info.authorized)
  t.is(info.authorizationError, undefined)
  t.is(info.peerCertificate?.subject.CN, 'netloop-client')
  t.is(info.peerCertificate?.issuer.CN, 'netloop test CA')
  t.deepEqual(errors, [])
})

for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
  test(`mTLS (${version}): a client without a certificate is refused with ERR_TLS_CERT_REQUIRED`, async (t) => {
    const { port, children, errors } = await mtlsServer(t, {})
    const r = await nodeClient(t, port, { maxVersion: version })
    t.truthy(r.error, 'the client sees an error')
    t.is(r.echoed, undefined)
    await until(() => errors.length > 0)
    t.true(errors[0] instanceof NetloopError)
    t.is((errors[0] as NetloopError).code, 'ERR_TLS_CERT_REQUIRED')
    await until(() => !children[0].isOpen)
  })
}

test('mTLS: a client certificate from another CA is refused with UNABLE_TO_GET_ISSUER_CERT_LOCALLY', async (t) => {
  const { port, children, errors } = await mtlsServer(t, {})
  const r = await nodeClient(t, port, otherCaClient())
  t.truthy(r.error, 'the client sees an error')
  t.is(r.echoed, undefined)
  await until(() => errors.length > 0)
  t.is((errors[0] as NetloopError).code, 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY')
  await until(() => !children[0].isOpen)
})

test('requestCert with rejectUnauthorized: false accepts a client without a certificate, unauthorized', async (t) => {
  const { port, children, errors } = await mtlsServer(t, { rejectUnauthorized: false })
  const r = await nodeClient(t, port, {})
  t.is(r.echoed, 'ping')
  t.false(children[0].tls!.authorized)
  t.is(children[0].tls!.peerCertificate, undefined)
  const bad = await nodeClient(t, port, otherCaClient())
  t.is(bad.echoed, 'ping')
  t.false(children[1].tls!.authorized)
  t.is(children[1].tls!.authorizationError?.code, 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY')
  t.is(children[1].tls!.peerCertificate?.subject.CN, 'other-client')
  t.deepEqual(errors, [])
})


for (const [name, code] of [
  ['expired', 'CERT_HAS_EXPIRED'],
  ['wrong-host', 'ERR_TLS_CERT_ALTNAME_INVALID'],
  ['other-server', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'],
] as const) {
  test(`a netloop client refuses a server with ${name}.pem: connect() and exceptionCaught give ${code}`, async (t) => {
    const port = await nodeEchoServer(t, name)
    const loop = loopFor(t)
    const caught: unknown[] = []
    let ch: Channel | undefined
    const err = await t.throwsAsync(
      new Bootstrap()
        .group(loop)
        .handler((c) => {
          ch = c
          c.pipeline.addLast('tls', new SslHandler(clientContext(), { servername: 'localhost' })).addLast('app', { exceptionCaught: (_c, e) => void caught.push(e) })
        })
        .connect(port, '127.0.0.1'),
    )
    t.true(err instanceof NetloopError)
    t.is((err as NetloopError).code, code)
    await until(() => caught.length > 0)
    t.true(caught[0] instanceof NetloopError)
    t.is((caught[0] as NetloopError).code, code)
    await until(() => ch !== undefined && !ch.isOpen)
  })
}

test('a netloop client with rejectUnauthorized: false connects to an unknown-CA server and reports it unauthorized', async (t) => {
  const port = await nodeEchoServer(t, 'other-server')
  const loop = loopFor(t)
  const ch: Channel = await new Bootstrap()
    .group(loop)
    .handler((c) => c.pipeline.addLast('tls', new SslHandler(clientContext({ rejectUnauthorized: false }), { servername: 'localhost' })).addLast('app', {}))
    .connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  t.false(ch.tls!.authorized)
  t.is(ch.tls!.authorizationError?.code, 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY')
})

// The handshake's outcome reaches JS as a hub event (TLS_HANDSHAKE), not only through a JS
// handler behind the SslHandler, so connect() settles with none.
test('connect() resolves with an SslHandler as the only handler of the pipeline', async (t) => {
  const port = await nodeEchoServer(t, 'server')
  const loop = loopFor(t)
  let ch: Channel | undefined
  const connected = new Bootstrap()
    .group(loop)
    .handler((c) => {
      ch = c
      c.pipeline.addLast('tls', new SslHandler(clientContext(), { servername: 'localhost' }))
    })
    .connect(port, '127.0.0.1')
  t.teardown(() => ch?.close())
  const settled = await Promise.race([connected.then(() => 'connected'), new Promise((r) => setTimeout(() => r('pending'), 2000))])
  t.is(settled, 'connected')
})
