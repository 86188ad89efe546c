// SslContext.reload: certificates rotated in place (node:tls's server.setSecureContext), for the
// handshakes that start afterwards, on every thread sharing the context.
import test from 'ava'
import { X509Certificate } from 'node:crypto'
import { once } from 'node:events'
import { Bootstrap, NetloopError, SslContext, SslHandler } from '../index'
import { loopFor, serve } from './channel-helpers'
import { clientContext, echo, nodeTlsClient, pem, serverContext, withTls, workerGroupServer } from './tls-helpers'

/** Echoes; the resets and refused handshakes these tests cause are expected. */
const quietEcho = { ...echo, exceptionCaught: () => {} }

const fingerprint = (name: string) => new X509Certificate(pem(name)).fingerprint256

/** The fingerprint of the certificate a new node:tls client gets from `port`, after an echo through it. */
async function servedCertificate(port: number): Promise<string> {
  const s = await nodeTlsClient(port)
  try {
    s.write('x')
    await once(s, 'data')
    return s.getPeerCertificate().fingerprint256
  } finally {
    s.destroy()
  }
}

test('reload rotates the certificate for new handshakes while an established connection goes on', async (t) => {
  const loop = loopFor(t)
  const ctx = serverContext()
  const { port } = await serve(t, loop, withTls(ctx, quietEcho))
  const before = await nodeTlsClient(port)
  t.teardown(() => before.destroy())
  t.is(before.getPeerCertificate().fingerprint256, fingerprint('server.pem'))

  ctx.reload({ cert: pem('server-rsa.pem'), key: pem('server-rsa.key') })
  t.is(await servedCertificate(port), fingerprint('server-rsa.pem'))
  t.true(ctx.isServer)

  before.write('still here')
  const [data] = await once(before, 'data')
  t.is(String(data), 'still here', 'the connection made before the reload keeps its session')
})

test('a reload that fails throws and leaves the context as it was', async (t) => {
  const loop = loopFor(t)
  const ctx = serverContext()
  const { port } = await serve(t, loop, withTls(ctx, quietEcho))
  t.throws(() => ctx.reload({ cert: 'garbage', key: pem('server.key') }), { instanceOf: NetloopError, code: 'ERR_TLS_INVALID_CONTEXT' })
  t.throws(() => ctx.reload({ cert: pem('server.pem'), key: pem('client.key') }), { code: 'ERR_TLS_INVALID_CONTEXT', message: /does not match/ })
  t.throws(() => ctx.reload({ isServer: false }), { code: 'ERR_INVALID_ARG_VALUE', message: /server context cannot be reloaded as a client/ })
  t.throws(() => ctx.reload({ cert: pem('server.pem'), key: pem('server.key'), SNICallback: () => undefined }), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: /SNICallback/,
  })
  t.throws(() => ctx.reload(null as never), { code: 'ERR_INVALID_ARG_TYPE' })
  t.is(await servedCertificate(port), fingerprint('server.pem'))
})

test('a reload on the main thread reaches the worker threads that share the context', async (t) => {
  const ctx = serverContext()
  const port = await workerGroupServer(t, 'tls-echo-module.ts', { tls: ctx })
  for (let i = 0; i < 2; i++) t.is(await servedCertificate(port), fingerprint('server.pem'))
  ctx.reload({ cert: pem('server-ed25519.pem'), key: pem('server-ed25519.key') })
  const threads = new Set<string>()
  for (let i = 0; i < 4; i++) {
    const s = await nodeTlsClient(port)
    s.write('hi')
    const [data] = await once(s, 'data')
    threads.add(/^thread=(\d+)/.exec(String(data))![1])
    t.is(s.getPeerCertificate().fingerprint256, fingerprint('server-ed25519.pem'))
    s.destroy()
  }
  t.is(threads.size, 2, 'both workers served the new certificate')
})

test('reloading a client context changes whom it trusts', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, withTls(serverContext(), quietEcho))
  const client = clientContext()
  const connect = () =>
    new Bootstrap()
      .group(loop)
      .handler((c) => void c.pipeline.addLast('tls', new SslHandler(client)).addLast('app', { exceptionCaught: () => {} }))
      .connect(port, 'localhost')
  const ch = await connect()
  t.true(ch.tls!.authorized)
  client.reload({ ca: pem('other-ca.pem') })
  const err = await t.throwsAsync(connect())
  t.true(err instanceof NetloopError)
  t.is((err as NetloopError).code, 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY')
  await ch.writeAndFlush(Buffer.from('ok'), ch.newPromise())
  t.true(ch.isOpen, 'the connection verified before the reload stays')
  await ch.close()
})

test('a context with an SNICallback reloads with a new callback', async (t) => {
  const loop = loopFor(t)
  const asked: string[] = []
  const ctx = SslContext.forServer({ cert: pem('server.pem'), key: pem('server.key'), SNICallback: (name) => void asked.push(`first ${name}`) })
  const { port } = await serve(t, loop, withTls(ctx, quietEcho))
  t.is(await servedCertificate(port), fingerprint('server.pem'))
  const rsa = serverContext({}, 'server-rsa')
  ctx.reload({ cert: pem('server.pem'), key: pem('server.key'), SNICallback: (name) => (asked.push(`second ${name}`), rsa) })
  t.is(await servedCertificate(port), fingerprint('server-rsa.pem'))
  t.deepEqual(asked, ['first localhost', 'second localhost'])
  t.throws(() => ctx.reload({ cert: pem('server.pem'), key: pem('server.key') }), { code: 'ERR_INVALID_ARG_VALUE', message: /SNICallback/ })
})

test('reloads racing 120 handshakes on two worker threads: every handshake completes with one of the two certificates', async (t) => {
  const ctx = serverContext()
  const port = await workerGroupServer(t, 'tls-echo-module.ts', { tls: ctx })
  const ecdsa = fingerprint('server.pem')
  const rsa = fingerprint('server-rsa.pem')
  let flips = 0
  const flipping = setInterval(() => {
    flips++
    ctx.reload(flips % 2 ? { cert: pem('server-rsa.pem'), key: pem('server-rsa.key') } : { cert: pem('server.pem'), key: pem('server.key') })
  }, 2)
  t.teardown(() => clearInterval(flipping))
  const seen = await Promise.all(Array.from({ length: 120 }, () => servedCertificate(port)))
  clearInterval(flipping)
  t.true(flips > 5, `reloaded ${flips} times while the clients connected`)
  t.true(seen.every((f) => f === ecdsa || f === rsa))
  t.true(seen.includes(ecdsa) && seen.includes(rsa), 'both certificates were served')
})
