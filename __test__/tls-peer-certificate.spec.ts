import test, { type ExecutionContext } from 'ava'
import { execFileSync } from 'node:child_process'
import { createHash, X509Certificate } from 'node:crypto'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tls from 'node:tls'
import { Bootstrap, SslHandler, type TlsInfo } from '../index'
import { loopFor } from './channel-helpers'
import { clientContext, pem } from './tls-helpers'

/** A node:tls server with `cert`/`key` and `extra`; its port. */
async function nodeServer(t: ExecutionContext, cert: Buffer, key: Buffer, extra: tls.TlsOptions = {}): Promise<number> {
  const server = tls.createServer({ cert, key, ...extra }, (s) => s.end())
  server.on('tlsClientError', () => {})
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  return (server.address() as AddressInfo).port
}

/** What a node:tls client sees of the server at `port`. */
async function nodeView(port: number, opts: tls.ConnectionOptions = {}) {
  const s = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false, ...opts })
  await once(s, 'secureConnect')
  const view = { cert: s.getPeerCertificate(), cipher: s.getCipher(), x509: s.getPeerX509Certificate() }
  s.destroy()
  return view
}

/** What a netloop client sees of the server at `port`. */
async function netloopView(t: ExecutionContext, port: number, extra: Parameters<typeof clientContext>[0] = {}): Promise<TlsInfo> {
  const handler = new SslHandler(clientContext({ rejectUnauthorized: false, ...extra }), { servername: 'localhost' })
  const ch = await new Bootstrap().group(loopFor(t)).handler((c) => c.pipeline.addLast('tls', handler)).connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  return handler.handshakeFuture()
}

/** A self-signed P-384 certificate with authority information access, made with openssl. */
function withInfoAccess(): { cert: Buffer; key: Buffer } {
  const d = mkdtempSync(join(tmpdir(), 'netloop-aia-'))
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384', '-nodes', '-days', '30',
      '-subj', '/CN=localhost/O=netloop tests', '-keyout', join(d, 'k.pem'), '-out', join(d, 'c.pem'),
      '-addext', 'authorityInfoAccess=OCSP;URI:http://ocsp.example.test/,caIssuers;URI:http://ca.example.test/ca.der,OCSP;URI:http://ocsp2.example.test/'],
    { stdio: 'ignore' })
    return { cert: readFileSync(join(d, 'c.pem')), key: readFileSync(join(d, 'k.pem')) }
  } finally {
    rmSync(d, { recursive: true, force: true })
  }
}

test('peerCertificate is node:tls getPeerCertificate() field for field: ECDSA, RSA, Ed25519 and P-384 with AIA', async (t) => {
  const aia = withInfoAccess()
  const servers: Array<[string, Buffer, Buffer]> = [
    ['ECDSA P-256', pem('server.pem'), pem('server.key')],
    ['RSA-2048', pem('server-rsa.pem'), pem('server-rsa.key')],
    ['Ed25519', pem('server-ed25519.pem'), pem('server-ed25519.key')],
    ['P-384 with AIA', aia.cert, aia.key],
  ]
  for (const [name, cert, key] of servers) {
    const port = await nodeServer(t, cert, key)
    const theirs = (await nodeView(port)).cert
    const ours = (await netloopView(t, port)).peerCertificate!
    t.deepEqual({ ...ours }, { ...theirs } as unknown as typeof ours, name)
  }
  const port = await nodeServer(t, aia.cert, aia.key)
  const info = (await netloopView(t, port)).peerCertificate!.infoAccess
  t.deepEqual({ ...info }, { 'OCSP - URI': ['http://ocsp.example.test/', 'http://ocsp2.example.test/'], 'CA Issuers - URI': ['http://ca.example.test/ca.der'] })
})

test("node's pinning example works on peerCertificate.pubkey, and peerX509Certificate is node's X509Certificate", async (t) => {
  const pin = (c: { pubkey?: Buffer }) => createHash('sha256').update(c.pubkey!).digest('base64')
  for (const name of ['server', 'server-rsa']) {
    const port = await nodeServer(t, pem(`${name}.pem`), pem(`${name}.key`))
    const theirs = await nodeView(port)
    const ours = await netloopView(t, port)
    t.is(pin(ours.peerCertificate!), pin(theirs.cert), name)
    t.true(ours.peerX509Certificate instanceof X509Certificate)
    t.is(ours.peerX509Certificate!.fingerprint256, theirs.x509!.fingerprint256)
    t.true(ours.peerX509Certificate!.checkIssued(new X509Certificate(pem('ca.pem'))))
  }
})

test("cipher.name is OpenSSL's and standardName IANA's, as getCipher() gives them, on TLS 1.2 and 1.3", async (t) => {
  const port = await nodeServer(t, pem('server-rsa.pem'), pem('server-rsa.key'))
  for (const maxVersion of ['TLSv1.2', 'TLSv1.3'] as const) {
    const theirs = (await nodeView(port, { maxVersion })).cipher
    const ours = (await netloopView(t, port, { maxVersion })).cipher
    t.deepEqual({ name: ours.name, standardName: ours.standardName, version: ours.version }, { name: theirs.name, standardName: theirs.standardName, version: theirs.version }, maxVersion)
  }
})
