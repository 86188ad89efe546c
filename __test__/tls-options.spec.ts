// node:tls's options beyond the basics, against node:tls and openssl as peers: `ciphers` and
// `honorCipherOrder`, `ecdhCurve`, `crl`, and a key log (`keyLogFile`) that matches the peer's.
import test, { type ExecutionContext } from 'ava'
import * as tls from 'node:tls'
import { once } from 'node:events'
import { execFileSync } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Bootstrap, type Channel, type ChannelHandler, NetloopError, SslContext, SslHandler, type SslContextOptions } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { clientContext, nodeEchoServer, pem, serverContext } from './tls-helpers'
import { netloopServer, nodeClient } from './tls-options-helpers'

type T = ExecutionContext

test('ciphers: the server picks the first of its suites the client offers, and both report it', async (t) => {
  const { port, children } = await netloopServer(t, { ciphers: 'TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384' })
  const { socket, error } = await nodeClient(t, port, {})
  t.is(error, undefined)
  t.is(socket.getCipher().standardName, 'TLS_CHACHA20_POLY1305_SHA256')
  t.is(children[0].tls!.cipher.standardName, 'TLS_CHACHA20_POLY1305_SHA256')
})

test('ciphers: TLS 1.2 suites by OpenSSL name', async (t) => {
  const { port } = await netloopServer(t, { ciphers: 'ECDHE-ECDSA-AES256-GCM-SHA384', maxVersion: 'TLSv1.2' })
  const { socket, error } = await nodeClient(t, port, {})
  t.is(error, undefined)
  t.is(socket.getCipher().name, 'ECDHE-ECDSA-AES256-GCM-SHA384')
  t.is(socket.getProtocol(), 'TLSv1.2')
})

test('honorCipherOrder: false follows the client; the default follows the server', async (t) => {
  const clientOrder = { ciphers: 'TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256' }
  const a = await netloopServer(t, {})
  t.is((await nodeClient(t, a.port, clientOrder)).socket.getCipher().standardName, 'TLS_AES_128_GCM_SHA256')
  const b = await netloopServer(t, { honorCipherOrder: false })
  t.is((await nodeClient(t, b.port, clientOrder)).socket.getCipher().standardName, 'TLS_AES_256_GCM_SHA384')
})

test('ciphers: no suite in common fails the handshake on both sides with a code', async (t) => {
  const { port, errors, children } = await netloopServer(t, { ciphers: 'TLS_AES_256_GCM_SHA384' })
  const { error } = await nodeClient(t, port, { ciphers: 'TLS_AES_128_GCM_SHA256' })
  t.truthy(error)
  await until(() => errors.length > 0)
  t.is((errors[0] as NetloopError).code, 'ERR_TLS_NO_COMMON_PARAMETERS')
  await until(() => !children[0].isOpen)
})

test('ecdhCurve: the key exchange uses the group asked for (node:tls reports it)', async (t) => {
  const { port } = await netloopServer(t, { ecdhCurve: 'P-384' })
  for (const maxVersion of ['TLSv1.2', 'TLSv1.3'] as const) {
    const { socket, error } = await nodeClient(t, port, { maxVersion })
    t.is(error, undefined, maxVersion)
    t.is(socket.getEphemeralKeyInfo().name, 'secp384r1', maxVersion)
  }
})

test('bad ciphers, ecdhCurve, crl and keyLogFile throw NetloopErrors naming the option', (t) => {
  const bad: Array<[Partial<SslContextOptions>, string, RegExp]> = [
    [{ ciphers: 'HIGH:!aNULL' }, 'ERR_TLS_INVALID_CONTEXT', /ciphers: unknown or unsupported cipher suite "HIGH".*ECDHE-RSA-AES128-GCM-SHA256/],
    [{ ciphers: 5 as never }, 'ERR_INVALID_ARG_TYPE', /ciphers/],
    [{ ecdhCurve: 'P-521' }, 'ERR_TLS_INVALID_CONTEXT', /ecdhCurve: unknown or unsupported group "P-521"/],
    [{ crl: pem('crl.pem') }, 'ERR_TLS_INVALID_CONTEXT', /crl: .*requestCert/],
    [{ requestCert: true, crl: 'not pem' }, 'ERR_TLS_INVALID_CONTEXT', /crl: no revocation list/],
    [{ keyLogFile: '/nonexistent-dir/keys.log' }, 'ERR_TLS_INVALID_CONTEXT', /keyLogFile: cannot open/],
  ]
  for (const [extra, code, message] of bad) {
    const e = t.throws(() => serverContext(extra), { instanceOf: NetloopError }, JSON.stringify(extra))
    t.is((e as NetloopError).code, code)
    t.regex(e!.message, message)
  }
})

test('crl: a server refuses a revoked client certificate with CERT_REVOKED and accepts a good one', async (t) => {
  const { port, errors, children } = await netloopServer(t, { requestCert: true, ca: pem('ca.pem'), crl: pem('crl.pem') })
  const good = await nodeClient(t, port, { cert: pem('client.pem'), key: pem('client.key') })
  t.is(good.error, undefined)
  t.true(children[0].tls!.authorized)
  const revoked = await nodeClient(t, port, { cert: pem('revoked-client.pem'), key: pem('revoked-client.key') })
  t.truthy(revoked.error, 'the revoked client sees an error')
  await until(() => errors.length > 0)
  t.is((errors[0] as NetloopError).code, 'CERT_REVOKED')
})


async function netloopConnect(t: T, port: number, ctx: SslContext): Promise<Channel> {
  let ch: Channel | undefined
  t.teardown(() => ch?.close())
  return new Bootstrap()
    .group(loopFor(t))
    .handler((c) => {
      ch = c
      c.pipeline.addLast('tls', new SslHandler(ctx, { servername: 'localhost' })).addLast('app', { exceptionCaught: () => {} })
    })
    .connect(port, '127.0.0.1')
}

test('crl: a netloop client refuses a revoked server (CERT_REVOKED) and accepts a good one', async (t) => {
  const ctx = clientContext({ crl: pem('crl.pem') })
  const good = await netloopConnect(t, await nodeEchoServer(t, 'server'), ctx)
  t.true(good.tls!.authorized)
  const err = await t.throwsAsync(netloopConnect(t, await nodeEchoServer(t, 'revoked-server'), ctx))
  t.true(err instanceof NetloopError)
  t.is((err as NetloopError).code, 'CERT_REVOKED')
  // node:tls with the same list agrees.
  const port = await nodeEchoServer(t, 'revoked-server')
  const nodeErr = await new Promise<Error>((resolve) => {
    const s = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem'), crl: pem('crl.pem') })
    s.once('error', resolve)
  })
  t.is((nodeErr as NodeJS.ErrnoException).code, 'CERT_REVOKED')
})

test('keyLogFile: the server logs the same secrets node:tls reports in its keylog events', async (t) => {
  const file = join(mkdtempSync(join(tmpdir(), 'netloop-keylog-')), 'keys.log')
  const { port } = await netloopServer(t, { keyLogFile: file })
  const lines: string[] = []
  for (const maxVersion of ['TLSv1.3', 'TLSv1.2'] as const) {
    const socket = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem'), maxVersion })
    t.teardown(() => socket.destroy())
    socket.on('keylog', (line: Buffer) => lines.push(String(line).trim()))
    await once(socket, 'secureConnect')
    socket.write('ping')
    await once(socket, 'data')
  }
  const logged = readFileSync(file, 'utf8').trim().split('\n')
  t.true(lines.length >= 6, `${lines.length} keylog lines from node:tls`)
  t.true(lines.some((l) => l.startsWith('CLIENT_RANDOM ')), 'TLS 1.2 line')
  t.deepEqual([...logged].sort(), [...lines].sort())
})

for (const [curve, name, size, version] of [
  ['X25519', 'X25519', 253, 'TLSv1.3'],
  ['P-256', 'prime256v1', 256, 'TLSv1.3'],
  ['P-384', 'secp384r1', 384, 'TLSv1.2'],
] as const) {
  test(`ephemeralKeyInfo: the server and a node:tls client name the same key exchange (${curve}, ${version})`, async (t) => {
    const { port, children } = await netloopServer(t, { ecdhCurve: curve, maxVersion: version })
    const { socket, error } = await nodeClient(t, port, {})
    t.is(error, undefined)
    t.deepEqual(socket.getEphemeralKeyInfo(), { type: 'ECDH', name, size })
    t.deepEqual(children[0].tls!.ephemeralKeyInfo, { type: 'ECDH', name, size })
  })
}

test('passphrase: an encrypted PKCS#8 key made by openssl serves node:tls clients; a wrong or missing passphrase throws', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'netloop-enc-'))
  const encrypted = join(dir, 'server-enc.key')
  const legacy = join(dir, 'server-legacy.key')
  const keyFile = join(dir, 'server.key')
  writeFileSync(keyFile, pem('server.key'))
  execFileSync('openssl', ['pkcs8', '-topk8', '-v2', 'aes-256-cbc', '-in', keyFile, '-passout', 'pass:s3cret', '-out', encrypted])
  execFileSync('openssl', ['ec', '-in', keyFile, '-aes256', '-passout', 'pass:s3cret', '-out', legacy], { stdio: 'ignore' })
  const { port } = await netloopServer(t, { key: readFileSync(encrypted), passphrase: 's3cret' })
  const { error } = await nodeClient(t, port, {})
  t.is(error, undefined)
  const wrong = t.throws(() => serverContext({ key: readFileSync(encrypted), passphrase: 'guess' }), { instanceOf: NetloopError })
  t.regex(wrong!.message, /cannot decrypt the private key/)
  const missing = t.throws(() => serverContext({ key: readFileSync(encrypted) }), { instanceOf: NetloopError })
  t.regex(missing!.message, /encrypted: pass its passphrase/)
  const old = t.throws(() => serverContext({ key: readFileSync(legacy), passphrase: 's3cret' }), { instanceOf: NetloopError })
  t.regex(old!.message, /openssl pkcs8 -topk8/)
  t.throws(() => serverContext({ passphrase: 5 as never }), { code: 'ERR_INVALID_ARG_TYPE' })
})

test('passphrase per SNI entry: each encrypted key opens with its own, the others with the context\'s', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'netloop-enc-sni-'))
  const encrypt = (name: string, pass: string) => {
    const plain = join(dir, `${name}.key`)
    writeFileSync(plain, pem(`${name}.key`))
    execFileSync('openssl', ['pkcs8', '-topk8', '-v2', 'aes-256-cbc', '-in', plain, '-passout', `pass:${pass}`, '-out', join(dir, `${name}-enc.key`)])
    return readFileSync(join(dir, `${name}-enc.key`))
  }
  const ctx: Partial<SslContextOptions> = {
    key: encrypt('server', 'context-pass'),
    passphrase: 'context-pass',
    SNI: {
      'example.org': { cert: pem('wrong-host.pem'), key: encrypt('wrong-host', 'entry-pass'), passphrase: 'entry-pass' },
      'other.localhost': { cert: pem('other-server.pem'), key: encrypt('other-server', 'context-pass') },
    },
  }
  const { port } = await netloopServer(t, ctx)
  const { socket, error } = await nodeClient(t, port, { servername: 'example.org', checkServerIdentity: () => undefined })
  t.is(error, undefined)
  t.is(socket.getPeerCertificate().subject.CN, 'example.org')
  const other = await nodeClient(t, port, { servername: 'other.localhost', ca: pem('other-ca.pem'), checkServerIdentity: () => undefined })
  t.is(other.error, undefined)
  t.is(other.socket.getPeerCertificate().issuer.CN, 'another test CA')
  const wrong = t.throws(() => serverContext({ ...ctx, SNI: { 'example.org': { cert: pem('wrong-host.pem'), key: encrypt('wrong-host', 'entry-pass'), passphrase: 'guess' } } }), { instanceOf: NetloopError })
  t.regex(wrong!.message, /SNI\['example.org'\]: cannot decrypt the private key/)
})

test('ticketKeys: 48 bytes, on server contexts with tickets, checked with Node-style errors', (t) => {
  t.throws(() => serverContext({ ticketKeys: Buffer.alloc(32) }), { code: 'ERR_INVALID_ARG_VALUE', message: /exactly 48 bytes/ })
  t.throws(() => serverContext({ ticketKeys: 'x'.repeat(48) as never }), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => clientContext({ ticketKeys: Buffer.alloc(48) }), { code: 'ERR_INVALID_ARG_VALUE', message: /server contexts/ })
  t.throws(() => serverContext({ ticketKeys: Buffer.alloc(48), sessionTickets: false }), { code: 'ERR_TLS_INVALID_CONTEXT', message: /sessionTickets/ })
  t.notThrows(() => serverContext({ ticketKeys: Buffer.alloc(48, 1) }))
})

test('ocspResponse: a non-empty Buffer, on server contexts (and SNI entries)', (t) => {
  t.throws(() => serverContext({ ocspResponse: 'x' as never }), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => serverContext({ ocspResponse: Buffer.alloc(0) }), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => clientContext({ ocspResponse: Buffer.alloc(8) }), { code: 'ERR_INVALID_ARG_VALUE', message: /server contexts/ })
  t.throws(() => serverContext({ SNI: { 'a.example': { cert: pem('server.pem'), key: pem('server.key'), ocspResponse: 5 as never } } }), { code: 'ERR_INVALID_ARG_TYPE' })
})

test('experimentalOwnRecords is a boolean option of server contexts, off by default', async (t) => {
  t.throws(() => serverContext({ experimentalOwnRecords: 'yes' as never }), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => clientContext({ experimentalOwnRecords: true }), { code: 'ERR_INVALID_ARG_VALUE' })
  // Both layers serve node:tls clients alike.
  for (const own of [undefined, false, true]) {
    const s = await netloopServer(t, own === undefined ? {} : { experimentalOwnRecords: own })
    const { socket, error } = await nodeClient(t, s.port, {})
    t.is(error, undefined)
    t.is(socket.getProtocol(), 'TLSv1.3')
    t.deepEqual(s.errors, [])
  }
})
