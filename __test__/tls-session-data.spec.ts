// What an established session gives out, against openssl and node:tls on the other end: the
// OCSP response a server staples (read by openssl s_client, and by a netloop client) and
// exportKeyingMaterial (equal on both ends).
import test from 'ava'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import * as tls from 'node:tls'
import { join } from 'node:path'
import { until } from './channel-helpers'
import { certsDir, ocspResponse, opensslServer as sServer, pem } from './tls-helpers'
import { echoServer, fetchOver, sClient } from './tls-interop-helpers'

for (const [flag, version] of [['-tls1_2', 'TLSv1.2'], ['-tls1_3', 'TLSv1.3']] as const) {
  test(`openssl s_client ${flag} -status gets the OCSP response the server staples (${version})`, async (t) => {
    const staple = ocspResponse()
    const { port } = await echoServer(t, { ocspResponse: staple })
    const out = await sClient(port, [flag, '-servername', 'localhost', '-status'])
    t.regex(out, /OCSP Response Status: successful/, out)
    t.regex(out, /Cert Status: good/)
    t.true(out.split('\n').includes('ping-netloop'))
    const plain = await echoServer(t)
    t.regex(await sClient(plain.port, [flag, '-servername', 'localhost', '-status']), /OCSP response: no response sent/)
  })
}

for (const [flag, version] of [['-tls1_2', 'TLSv1.2'], ['-tls1_3', 'TLSv1.3']] as const) {
  test(`a netloop client reads the OCSP response openssl s_server -status_file staples (${version}); none without`, async (t) => {
    const staple = ocspResponse()
    const port = await sServer(t, [flag, '-www', '-status_file', join(certsDir(), 'server.ocsp')])
    const { tls } = await fetchOver(t, port, 'GET / HTTP/1.0\r\n\r\n')
    t.is(tls.protocol, version)
    t.deepEqual(tls.ocspResponse, staple)
    const plainPort = await sServer(t, [flag, '-www'])
    t.is((await fetchOver(t, plainPort, 'GET / HTTP/1.0\r\n\r\n')).tls.ocspResponse, undefined)
  })
}

test('a netloop client reads the OCSP response a node:tls server staples from its OCSPRequest event', async (t) => {
  const staple = ocspResponse()
  const server = tls.createServer({ cert: pem('server.pem'), key: pem('server.key') }, (s) => s.pipe(s))
  server.on('OCSPRequest', (_cert: Buffer, _issuer: Buffer, done: (err: Error | null, response?: Buffer) => void) => done(null, staple))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const { tls: info } = await fetchOver(t, (server.address() as AddressInfo).port, 'ping')
  t.deepEqual(info.ocspResponse, staple)
})

for (const [version, suite, own] of [
  ['TLSv1.3', 'TLS_AES_128_GCM_SHA256', false],
  ['TLSv1.3', 'TLS_AES_256_GCM_SHA384', false],
  ['TLSv1.3', 'TLS_AES_128_GCM_SHA256', true],
  ['TLSv1.3', 'TLS_AES_256_GCM_SHA384', true],
  ['TLSv1.2', undefined, false],
] as const) {
  const layer = own ? ', experimental own record layer' : ''
  test(`exportKeyingMaterial: a netloop server and a node:tls client export the same bytes (${version}${suite ? ` ${suite}` : ''}${layer})`, async (t) => {
    const { port, children } = await echoServer(t, version === 'TLSv1.2' ? { maxVersion: 'TLSv1.2' } : { ciphers: suite, experimentalOwnRecords: own })
    const s = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem') })
    t.teardown(() => s.destroy())
    await once(s, 'secureConnect')
    s.write('ping')
    await once(s, 'data')
    const ch = children[0]
    t.is(ch.tls!.protocol, version)
    for (const context of [undefined, Buffer.from('context'), Buffer.alloc(0)]) {
      const theirs = s.exportKeyingMaterial(64, 'EXPERIMENTAL-netloop', context)
      t.deepEqual(ch.tls!.exportKeyingMaterial(64, 'EXPERIMENTAL-netloop', context), theirs, `context ${String(context)}`)
    }
    t.notDeepEqual(ch.tls!.exportKeyingMaterial(32, 'EXPERIMENTAL-a'), ch.tls!.exportKeyingMaterial(32, 'EXPERIMENTAL-b'))
  })
}

test('exportKeyingMaterial: a netloop client and a node:tls server export the same bytes; closed channels and bad arguments throw', async (t) => {
  let serverSide: tls.TLSSocket | undefined
  const server = tls.createServer({ cert: pem('server.pem'), key: pem('server.key') }, (sock) => {
    serverSide = sock
    sock.pipe(sock)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const { ch, tls: info } = await fetchOver(t, (server.address() as AddressInfo).port, 'ping')
  await until(() => serverSide !== undefined)
  t.deepEqual(info.exportKeyingMaterial(48, 'EXPERIMENTAL-netloop', Buffer.from([1, 2, 3])), serverSide!.exportKeyingMaterial(48, 'EXPERIMENTAL-netloop', Buffer.from([1, 2, 3])))
  t.throws(() => info.exportKeyingMaterial(0, 'x'), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => info.exportKeyingMaterial(16, 7 as never), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => info.exportKeyingMaterial(16, 'x', 'ctx' as never), { code: 'ERR_INVALID_ARG_TYPE' })
  await ch.close()
  t.throws(() => info.exportKeyingMaterial(16, 'EXPERIMENTAL-netloop'), { code: 'ERR_TLS_INVALID_STATE' })
})
