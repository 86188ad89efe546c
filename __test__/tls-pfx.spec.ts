// node:tls's `pfx`: PKCS#12 files written by `openssl pkcs12 -export` (scripts/make-certs.sh),
// served to node:tls clients, presented as a client certificate to a node:tls server, in SNI
// entries, and refused where node:tls refuses them, with the same verdict as node:tls.
import test from 'ava'
import * as tls from 'node:tls'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type * as net from 'node:net'
import { X509Certificate } from 'node:crypto'
import { Bootstrap, type Channel, NetloopError, SslContext, SslHandler } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { certsDir, echo, nodeTlsClient, pem, withTls } from './tls-helpers'
import { nodeClient } from './tls-options-helpers'

/** A netloop TLS echo server made from `ctx`; its port. */
async function pfxServer(t: Parameters<Parameters<typeof test>[1]>[0], ctx: SslContext): Promise<{ port: number; children: Channel[] }> {
  return serve(t, loopFor(t), withTls(ctx, echo))
}

/** Echoes `msg` through `s` and resolves with the reply. */
async function roundTrip(s: tls.TLSSocket, msg: string): Promise<string> {
  s.write(msg)
  const [d] = await once(s, 'data')
  return String(d)
}

test('a server made from OpenSSL 3\'s default file serves its chain to node:tls clients', async (t) => {
  const ctx = SslContext.forServer({ pfx: pem('server.pfx'), passphrase: 'netloop' })
  const { port, children } = await pfxServer(t, ctx)
  const s = await nodeTlsClient(port)
  t.teardown(() => s.destroy())
  t.true(s.authorized)
  t.is(await roundTrip(s, 'ping'), 'ping')
  // The file's CA completes the chain: the client sees the leaf, issued by the test CA.
  const cert = s.getPeerCertificate(true)
  t.is(cert.subject.CN, 'localhost')
  t.is(cert.issuerCertificate?.subject.CN, 'netloop test CA')
  t.is(children[0].tls!.protocol, 'TLSv1.3')
})

test('the older 3DES file, given as { buf, passphrase }, serves as node:tls reads it', async (t) => {
  const ctx = SslContext.forServer({ pfx: [{ buf: pem('server-3des.pfx'), passphrase: 'netloop' }] })
  const { port } = await pfxServer(t, ctx)
  const s = await nodeTlsClient(port)
  t.teardown(() => s.destroy())
  t.true(s.authorized)
  t.is(await roundTrip(s, 'pong'), 'pong')
})

test('a netloop client presents its pfx certificate to a node:tls server that requires one', async (t) => {
  let peer: tls.PeerCertificate | undefined
  const server = tls.createServer({ cert: pem('server.pem'), key: pem('server.key'), ca: pem('ca.pem'), requestCert: true, rejectUnauthorized: true }, (s) => {
    peer = s.getPeerCertificate()
    s.pipe(s)
  })
  server.on('tlsClientError', () => {})
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const loop = loopFor(t)
  // client.pfx has an empty passphrase: none is needed.
  const ctx = SslContext.forClient({ ca: pem('ca.pem'), pfx: pem('client.pfx') })
  const ch: Channel = await new Bootstrap()
    .group(loop)
    .handler((c) => c.pipeline.addLast('tls', new SslHandler(ctx, { servername: 'localhost' })).addLast('app', {}))
    .connect((server.address() as net.AddressInfo).port, '127.0.0.1')
  t.teardown(() => ch.close())
  t.true(ch.tls!.authorized)
  // In TLS 1.3 the server judges the client's certificate after the client is done.
  await until(() => peer !== undefined)
  t.is(peer!.subject.CN, 'netloop-client')
})

test('an SNI entry may be a pfx with its own passphrase', async (t) => {
  const ctx = SslContext.forServer({
    cert: pem('other-server.pem'),
    key: pem('other-server.key'),
    SNI: { 'pfx.localhost': { pfx: pem('server.pfx'), passphrase: 'netloop' } },
  })
  const { port } = await pfxServer(t, ctx)
  // The pfx's certificate names localhost, so the client checks that name while asking for the entry's.
  const s = await nodeTlsClient(port, { servername: 'pfx.localhost', checkServerIdentity: (_host, cert) => tls.checkServerIdentity('localhost', cert) })
  t.teardown(() => s.destroy())
  t.true(s.authorized)
  t.is(s.getPeerCertificate().issuer.CN, 'netloop test CA')
})

test('netloop and node:tls give the same verdict on each file and passphrase', (t) => {
  const cases: Array<[file: string, passphrase: string | undefined]> = [
    ['server.pfx', 'netloop'],
    ['server.pfx', 'wrong'],
    ['server.pfx', undefined],
    ['server-3des.pfx', 'netloop'],
    ['server-3des.pfx', 'wrong'],
    ['client.pfx', undefined],
    ['client.pfx', ''],
  ]
  // RC2 files exist only where OpenSSL's legacy provider made them (make-certs.sh).
  if (existsSync(join(certsDir(), 'server-rc2.pfx'))) cases.push(['server-rc2.pfx', 'netloop'])
  for (const [file, passphrase] of cases) {
    const opts = { pfx: pem(file), ...(passphrase === undefined ? {} : { passphrase }) }
    let nodeOk = true
    try {
      tls.createSecureContext(opts)
    } catch {
      nodeOk = false
    }
    let ours: unknown
    try {
      SslContext.forServer(opts)
    } catch (e) {
      ours = e
    }
    t.is(ours === undefined, nodeOk, `${file} with ${passphrase === undefined ? 'no passphrase' : `'${passphrase}'`}: node:tls ${nodeOk ? 'accepts' : 'refuses'}, netloop ${ours === undefined ? 'accepts' : `refuses (${String(ours)})`}`)
    if (ours !== undefined) {
      t.true(ours instanceof NetloopError)
      t.is((ours as NetloopError).code, 'ERR_TLS_INVALID_CONTEXT')
      t.regex((ours as Error).message, /pfx: /)
    }
  }
})

test('the reasons of refusals: a wrong passphrase, RC2, a file that is not PKCS#12', (t) => {
  t.throws(() => SslContext.forServer({ pfx: pem('server.pfx'), passphrase: 'wrong' }), { code: 'ERR_TLS_INVALID_CONTEXT', message: /wrong passphrase/ })
  t.throws(() => SslContext.forServer({ pfx: pem('server.pem') }), { code: 'ERR_TLS_INVALID_CONTEXT', message: /not a PKCS#12/ })
  if (existsSync(join(certsDir(), 'server-rc2.pfx'))) {
    t.throws(() => SslContext.forServer({ pfx: pem('server-rc2.pfx'), passphrase: 'netloop' }), { code: 'ERR_TLS_INVALID_CONTEXT', message: /RC2 or RC4.*openssl pkcs12/ })
  }
})

test('a pfx array (one file per key type): each client gets the certificate whose signature it can verify, as from node:tls', async (t) => {
  const fp = (name: string) => new X509Certificate(pem(`${name}.pem`)).fingerprint256
  // Each file with its own passphrase, or the context's.
  const files = { pfx: [pem('server.pfx'), { buf: pem('server-rsa.pfx'), passphrase: 'netloop-rsa' }], passphrase: 'netloop' }
  const ours = (await pfxServer(t, SslContext.forServer(files))).port
  const node = tls.createServer(files, (s) => s.pipe(s))
  node.listen(0, '127.0.0.1')
  await once(node, 'listening')
  t.teardown(() => node.close())
  const theirs = (node.address() as { port: number }).port
  const served = async (port: number, sigalgs?: string) => {
    const { socket, error } = await nodeClient(t, port, sigalgs ? { sigalgs } : {})
    t.is(error, undefined)
    return socket.getPeerCertificate().fingerprint256
  }
  for (const [sigalgs, want] of [
    ['ecdsa_secp256r1_sha256', 'server'],
    ['rsa_pss_rsae_sha256:rsa_pkcs1_sha256', 'server-rsa'],
    [undefined, 'server'],
  ] as const) {
    t.is(await served(ours, sigalgs), fp(want), `netloop, ${sigalgs ?? 'any'}`)
    t.is(await served(theirs, sigalgs), fp(want), `node:tls, ${sigalgs ?? 'any'}`)
  }
  // A wrong passphrase in any file names that file.
  t.throws(() => SslContext.forServer({ ...files, pfx: [pem('server.pfx'), pem('server-rsa.pfx')] }), { code: 'ERR_TLS_INVALID_CONTEXT', message: /pfx\[1\]: .*wrong passphrase/ })
})

test('pfx option checks: its forms, a server\'s array only, not with cert and key', (t) => {
  t.throws(() => SslContext.forServer({ pfx: 'a path' as never }), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => SslContext.forServer({ pfx: [{ buf: pem('server.pfx'), passphrase: 7 as never }] }), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => SslContext.forServer({ pfx: [] }), { code: 'ERR_INVALID_ARG_VALUE', message: /at least one PKCS#12 file/ })
  t.throws(() => SslContext.forClient({ pfx: [pem('client.pfx'), pem('client.pfx')] }), { code: 'ERR_INVALID_ARG_VALUE', message: /client presents one certificate/ })
  t.throws(() => SslContext.forServer({ pfx: [pem('server.pfx'), pem('server-3des.pfx')], passphrase: 'netloop', cert: pem('server.pem'), key: pem('server.key') }), {
    code: 'ERR_TLS_INVALID_CONTEXT',
    message: /either pfx or cert and key/,
  })
  t.throws(() => SslContext.forServer({ pfx: pem('server.pfx'), passphrase: 'netloop', cert: pem('server.pem'), key: pem('server.key') }), {
    code: 'ERR_TLS_INVALID_CONTEXT',
    message: /either pfx or cert and key/,
  })
  t.throws(() => SslContext.forServer({ cert: pem('server.pem'), key: pem('server.key'), SNI: { 'a.localhost': {} as never } }), {
    code: 'ERR_TLS_INVALID_CONTEXT',
    message: /SNI\['a.localhost'\]: give cert and key, or pfx/,
  })
})

test('reload() may switch a context from PEM to a pfx', async (t) => {
  const ctx = SslContext.forServer({ cert: pem('other-server.pem'), key: pem('other-server.key') })
  const { port } = await pfxServer(t, ctx)
  ctx.reload({ pfx: pem('server.pfx'), passphrase: 'netloop' })
  const s = await nodeTlsClient(port)
  t.teardown(() => s.destroy())
  t.true(s.authorized)
  t.is(s.getPeerCertificate().issuer.CN, 'netloop test CA')
})
