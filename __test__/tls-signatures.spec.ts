// Which certificate and signatures a context uses, and which versions: `cert`/`key` arrays
// (several key types), `sigalgs`, `secureProtocol` and `secureOptions`, against node:tls peers.
import test from 'ava'
import { X509Certificate } from 'node:crypto'
import { once } from 'node:events'
import * as tls from 'node:tls'
import { Bootstrap, type NetloopError, SslContext, SslHandler, type SslContextOptions } from '../index'
import { loopFor } from './channel-helpers'
import { clientContext, pem, serverContext } from './tls-helpers'
import { netloopServer, nodeClient } from './tls-options-helpers'

test('cert and key arrays (one chain per key): each client gets the certificate whose signature it can verify, as from node:tls', async (t) => {
  const fp = (name: string) => new X509Certificate(pem(`${name}.pem`)).fingerprint256
  // The chains in another order than their keys: each key finds its own.
  const both = { cert: [pem('server-rsa.pem'), pem('server.pem')], key: [pem('server.key'), pem('server-rsa.key')] }
  const ours = await netloopServer(t, both)
  const node = tls.createServer(both, (s) => s.pipe(s))
  node.listen(0, '127.0.0.1')
  await once(node, 'listening')
  t.teardown(() => node.close())
  const theirs = (node.address() as { port: number }).port
  const served = async (port: number, sigalgs?: string) => (await nodeClient(t, port, sigalgs ? { sigalgs } : {})).socket.getPeerCertificate().fingerprint256
  for (const [sigalgs, want] of [
    ['ecdsa_secp256r1_sha256', 'server'],
    ['rsa_pss_rsae_sha256:rsa_pkcs1_sha256', 'server-rsa'],
  ] as const) {
    t.is(await served(ours.port, sigalgs), fp(want), `netloop, ${sigalgs}`)
    t.is(await served(theirs, sigalgs), fp(want), `node:tls, ${sigalgs}`)
  }
  t.is(await served(ours.port), fp('server'), 'a client that takes both gets the first key given (ECDSA)')
  const rsaFirst = await netloopServer(t, { cert: both.cert, key: [pem('server-rsa.key'), pem('server.key')] })
  t.is(await served(rsaFirst.port), fp('server-rsa'))
})

test('cert and key arrays: a key without its chain, a chain without its key, a client context, each throw', (t) => {
  const e1 = t.throws(() => serverContext({ cert: [pem('server.pem')], key: [pem('server.key'), pem('server-rsa.key')] }))
  t.regex((e1 as NetloopError).message, /key\[1\] matches none of the cert chains/)
  const e2 = t.throws(() => serverContext({ cert: [pem('server.pem'), pem('server-rsa.pem')], key: [pem('server.key')] }))
  t.regex((e2 as NetloopError).message, /cert\[1\] matches none of the keys/)
  const e3 = t.throws(() => SslContext.forClient({ cert: [pem('client.pem')], key: [pem('client.key')] }))
  t.is((e3 as NetloopError).code, 'ERR_INVALID_ARG_VALUE')
  t.notThrows(() => serverContext({ cert: [pem('server.pem')], key: [{ pem: pem('server.key') }] }))
})

test('secureProtocol and secureOptions narrow the versions as in node:tls; the OpenSSL engines are refused, not ignored', async (t) => {
  const { constants } = await import('node:crypto')
  const negotiated = async (extra: Partial<SslContextOptions>) => {
    const { port } = await netloopServer(t, extra)
    return (await nodeClient(t, port, {})).socket.getProtocol()
  }
  t.is(await negotiated({ secureProtocol: 'TLSv1_2_method' }), 'TLSv1.2')
  t.is(await negotiated({ secureProtocol: 'TLSv1_2_server_method' }), 'TLSv1.2')
  t.is(await negotiated({ secureProtocol: 'TLS_method' }), 'TLSv1.3')
  t.is(await negotiated({ secureOptions: constants.SSL_OP_NO_TLSv1_3 | constants.SSL_OP_NO_SSLv3 }), 'TLSv1.2')
  const old = await netloopServer(t, { secureOptions: constants.SSL_OP_NO_TLSv1_2 })
  t.is((await nodeClient(t, old.port, { maxVersion: 'TLSv1.2' })).error?.code as string | undefined, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION')
  const code = (f: () => unknown) => (t.throws(f) as NetloopError).code
  t.is(code(() => serverContext({ secureProtocol: 'TLSv1_method' })), 'ERR_TLS_INVALID_PROTOCOL_METHOD')
  t.is(code(() => serverContext({ secureProtocol: 'TLSv1_2_method', minVersion: 'TLSv1.2' })), 'ERR_TLS_PROTOCOL_VERSION_CONFLICT')
  t.is(code(() => serverContext({ secureOptions: constants.SSL_OP_NO_TLSv1_2 | constants.SSL_OP_NO_TLSv1_3 })), 'ERR_INVALID_ARG_VALUE')
  for (const name of ['privateKeyEngine', 'privateKeyIdentifier', 'clientCertEngine']) {
    t.is(code(() => serverContext({ [name]: 'x' } as Partial<SslContextOptions>)), 'ERR_TLS_OPTION_NOT_SUPPORTED', name)
  }
})

test('sigalgs narrows what a server signs with and what a client accepts, with node:tls as the peer', async (t) => {
  const fp = (name: string) => new X509Certificate(pem(`${name}.pem`)).fingerprint256
  const both = { cert: [pem('server.pem'), pem('server-rsa.pem')], key: [pem('server.key'), pem('server-rsa.key')] }
  // A server that signs with RSA-PSS only serves its RSA certificate even to clients that take ECDSA.
  const rsaOnly = await netloopServer(t, { ...both, sigalgs: 'rsa_pss_rsae_sha256' })
  t.is((await nodeClient(t, rsaOnly.port, {})).socket.getPeerCertificate().fingerprint256, fp('server-rsa'))
  // An ECDSA-only server that may sign with RSA-PSS only has nothing to offer.
  const none = await netloopServer(t, { sigalgs: 'RSA-PSS+SHA256' })
  t.truthy((await nodeClient(t, none.port, {})).error)
  // A netloop client that accepts ECDSA only: an RSA server fails, an ECDSA one works.
  const connect = async (name: string) => {
    const server = tls.createServer({ cert: pem(`${name}.pem`), key: pem(`${name}.key`) }, (s) => s.pipe(s))
    server.on('tlsClientError', () => {})
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    t.teardown(() => server.close())
    const port = (server.address() as { port: number }).port
    const ctx = clientContext({ sigalgs: 'ecdsa_secp256r1_sha256' })
    return new Bootstrap().group(loopFor(t)).handler((c) => void c.pipeline.addLast('tls', new SslHandler(ctx, { servername: 'localhost' })).addLast('quiet', { exceptionCaught: () => {} })).connect(port, '127.0.0.1').then(
      (ch) => {
        t.teardown(() => ch.close())
        return 'ok'
      },
      (e: NetloopError) => e.code,
    )
  }
  t.is(await connect('server'), 'ok')
  t.not(await connect('server-rsa'), 'ok')
  const bad = t.throws(() => serverContext({ sigalgs: 'ecdsa_sha1' }))
  t.is((bad as NetloopError).code, 'ERR_TLS_INVALID_CONTEXT')
  t.regex((bad as NetloopError).message, /ecdsa_sha1.*known: ecdsa_secp256r1_sha256/)
})
