// HAProxyMessageDecoder: servers behind a proxy or load balancer that sends the PROXY
// protocol header learn who the client is, in front of TLS; refusals, LOCAL health checks,
// typed TLVs, and HAProxyMessage's encoder. Real senders (curl, HAProxy): haproxy-peers.spec.ts.
import test from 'ava'
import { once } from 'node:events'
import * as tls from 'node:tls'
import { type Channel, HAProxyMessage, HAProxyMessageDecoder, HAProxyTlvType, SslHandler } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { echo, pem, serverContext } from './tls-helpers'
import { raw } from './haproxy-helpers'

/** A version 2 PROXY header for TCP over IPv4, with TLVs. */
function v2Header(src: [string, number], dst: [string, number], tlvs: Array<[number, Buffer]> = []): Buffer {
  const ip = (a: string) => Buffer.from(a.split('.').map(Number))
  const port = (p: number) => Buffer.from([p >> 8, p & 0xff])
  const body = Buffer.concat([
    ip(src[0]),
    ip(dst[0]),
    port(src[1]),
    port(dst[1]),
    ...tlvs.map(([type, value]) => Buffer.concat([Buffer.from([type, value.length >> 8, value.length & 0xff]), value])),
  ])
  const head = Buffer.from('\r\n\r\n\0\r\nQUIT\n', 'latin1')
  return Buffer.concat([head, Buffer.from([0x21, 0x11, body.length >> 8, body.length & 0xff]), body])
}

test('a version 2 header with TLVs in front of TLS: the handshake, the echo and the message all come through', async (t) => {
  const loop = loopFor(t)
  const events: unknown[] = []
  const { port, children } = await serve(t, loop, (ch) => {
    ch.pipeline
      .addLast('proxy', new HAProxyMessageDecoder())
      .addLast('tls', new SslHandler(serverContext()))
      .addLast('app', { ...echo, userEventTriggered: (_ctx, e) => void events.push(e) })
  })
  const socket = await raw(port, v2Header(['203.0.113.7', 4242], ['192.0.2.1', 443], [[0x02, Buffer.from('example.org')], [0xe0, Buffer.from([0, 1, 255])]]))
  const s = tls.connect({ socket, servername: 'localhost', ca: pem('ca.pem') })
  t.teardown(() => s.destroy())
  await once(s, 'secureConnect')
  s.write('over tls')
  const [data] = await once(s, 'data')
  t.is(String(data), 'over tls')
  const m = events.find((e) => e instanceof HAProxyMessage) as HAProxyMessage
  t.truthy(m, 'the decoder fired the message to the JS handler behind the SslHandler')
  t.like(m, { version: 2, command: 'PROXY', protocol: 'TCP4', sourceAddress: '203.0.113.7', sourcePort: 4242, destinationAddress: '192.0.2.1', destinationPort: 443 })
  t.is(String(m.tlv(0x02)), 'example.org')
  t.deepEqual([...m.tlv(0xe0)!], [0, 1, 255])
  t.is(children[0].haproxy, m)
})

test('a connection without a header fails with ERR_HAPROXY_PROTOCOL and closes; the next one is served', async (t) => {
  const loop = loopFor(t)
  const errors: string[] = []
  const reads: string[] = []
  const { port, children } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('proxy', new HAProxyMessageDecoder()).addLast('app', {
      channelRead: (ctx, m: Buffer) => {
        reads.push(String(m))
        ctx.writeAndFlush(m)
      },
      exceptionCaught: (_ctx, e) => void errors.push((e as { code: string }).code),
    })
  })
  const direct = await raw(port, 'GET / HTTP/1.1\r\n\r\n')
  await once(direct, 'close')
  t.deepEqual(errors, ['ERR_HAPROXY_PROTOCOL'])
  t.deepEqual(reads, [], 'nothing of the refused stream reached the handler')

  const proxied = await raw(port, 'PROXY TCP6 2001:db8::7 2001:db8::1 40000 80\r\nping')
  const [data] = await once(proxied, 'data')
  t.is(String(data), 'ping')
  proxied.destroy()
  await until(() => !children[1].isOpen)
  // Never read while open: the decoder's message was kept at the close.
  t.like(children[1].haproxy, { version: 1, protocol: 'TCP6', sourceAddress: '2001:db8::7', sourcePort: 40000, destinationPort: 80 })
  t.is(children[0].haproxy, undefined)
})

test("a proxy's LOCAL health check carries no client; channel.haproxy says so", async (t) => {
  const loop = loopFor(t)
  let ch: Channel | undefined
  const { port } = await serve(t, loop, (c) => {
    ch = c
    c.pipeline.addLast('proxy', new HAProxyMessageDecoder()).addLast('app', {})
  })
  const local = Buffer.concat([Buffer.from('\r\n\r\n\0\r\nQUIT\n', 'latin1'), Buffer.from([0x20, 0x00, 0, 0])])
  const s = await raw(port, local)
  t.teardown(() => s.destroy())
  await until(() => ch?.haproxy !== undefined)
  t.like(ch!.haproxy, { version: 2, command: 'LOCAL', protocol: 'UNKNOWN', sourceAddress: undefined, sourcePort: undefined })
  t.deepEqual(ch!.haproxy!.tlvs, [])
})

test('typed TLVs round trip through encode() and the decoder; a header that does not match its CRC32C is refused', async (t) => {
  const loop = loopFor(t)
  const errors: unknown[] = []
  const { port, children } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('proxy', new HAProxyMessageDecoder()).addLast('app', { exceptionCaught: (_c, e) => void errors.push(e) })
  })
  const sub = (type: number, text: string) => {
    const v = Buffer.from(text)
    return Buffer.concat([Buffer.from([type, v.length >> 8, v.length & 0xff]), v])
  }
  const ssl = Buffer.concat([Buffer.from([0x01 | 0x02, 0, 0, 0, 0]), sub(HAProxyTlvType.SSL_VERSION, 'TLSv1.2'), sub(HAProxyTlvType.SSL_CN, 'alice')])
  const azure = Buffer.from([0x01, 0x78, 0x56, 0x34, 0x12])
  const gcp = Buffer.alloc(8)
  gcp.writeBigUInt64BE(0x0102030405060708n)
  const tlvs = [
    { type: HAProxyTlvType.AUTHORITY, value: Buffer.from('api.example.com') },
    { type: HAProxyTlvType.ALPN, value: Buffer.from('http/1.1') },
    { type: HAProxyTlvType.UNIQUE_ID, value: Buffer.from([9, 8, 7]) },
    { type: HAProxyTlvType.SSL, value: ssl },
    { type: HAProxyTlvType.AWS, value: Buffer.from('\x01vpce-0123456789abcdef0', 'latin1') },
    { type: HAProxyTlvType.AZURE, value: azure },
    { type: HAProxyTlvType.GCP, value: gcp },
    { type: HAProxyTlvType.CRC32C, value: Buffer.alloc(4) },
  ]
  const header = HAProxyMessage.tcp({ address: '203.0.113.5', port: 4000 }, { address: '192.0.2.1', port: 443 }, tlvs).encode()
  t.notDeepEqual(header.subarray(-4), Buffer.alloc(4), 'encode() filled in the CRC32C')
  const s = await raw(port, header)
  t.teardown(() => s.destroy())
  await until(() => children[0]?.haproxy !== undefined)
  const m = children[0].haproxy!
  t.is(m.authority, 'api.example.com')
  t.is(m.alpn, 'http/1.1')
  t.deepEqual(m.uniqueId, Buffer.from([9, 8, 7]))
  t.like(m.ssl, { tls: true, verifiedCertificate: true, version: 'TLSv1.2', cn: 'alice', cipher: undefined })
  t.is(m.awsVpcEndpointId, 'vpce-0123456789abcdef0')
  t.is(m.azureLinkId, 0x12345678)
  t.is(m.gcpPscConnectionId, 0x0102030405060708n)
  t.is(m.netns, undefined)
  // One byte of the authority changed after the checksum was computed.
  const tampered = Buffer.from(header)
  tampered[16 + 12 + 3] ^= 0x20
  const bad = await raw(port, tampered)
  t.teardown(() => bad.destroy())
  await until(() => errors.length > 0)
  t.is((errors[0] as { code?: string }).code, 'ERR_HAPROXY_PROTOCOL')
  t.regex(String((errors[0] as Error).message), /CRC32C/)
})

test('HAProxyMessage.tcp(...).encode() writes headers that the decoder reads back, in both versions', async (t) => {
  const loop = loopFor(t)
  const { port, children } = await serve(t, loop, (ch) => void ch.pipeline.addLast('proxy', new HAProxyMessageDecoder()).addLast('app', {}))
  const sent = [
    HAProxyMessage.tcp({ address: '198.51.100.9', port: 51000 }, { address: '192.0.2.1', port: 443 }, [{ type: 0x02, value: Buffer.from('example.org') }]).encode(),
    HAProxyMessage.tcp({ address: '2001:db8::9', port: 1 }, { address: '2001:db8::1', port: 80 }).encode(1),
    HAProxyMessage.local().encode(),
  ]
  t.is(String(sent[1]), 'PROXY TCP6 2001:db8::9 2001:db8::1 1 80\r\n')
  for (const header of sent) {
    const s = await raw(port, header)
    t.teardown(() => s.destroy())
  }
  await until(() => children.length === 3 && children.every((c) => c.haproxy !== undefined))
  const got = children.map((c) => c.haproxy!).sort((a, b) => a.version - b.version || a.command.localeCompare(b.command))
  t.like(got[0], { version: 1, protocol: 'TCP6', sourceAddress: '2001:db8::9', sourcePort: 1, destinationPort: 80 })
  t.like(got[1], { version: 2, command: 'LOCAL', sourceAddress: undefined })
  t.like(got[2], { version: 2, command: 'PROXY', protocol: 'TCP4', sourceAddress: '198.51.100.9', sourcePort: 51000, destinationAddress: '192.0.2.1', destinationPort: 443 })
  t.is(String(got[2].tlv(0x02)), 'example.org')
})

test('HAProxyMessage.tcp and encode check their arguments', (t) => {
  const v4 = { address: '10.0.0.1', port: 1 }
  t.throws(() => HAProxyMessage.tcp(v4, { address: '::1', port: 2 }), { code: 'ERR_INVALID_ARG_VALUE', message: /both be IPv4 or both IPv6/ })
  t.throws(() => HAProxyMessage.tcp({ address: 'localhost', port: 1 }, v4), { code: 'ERR_INVALID_ARG_VALUE', message: /IP address/ })
  t.throws(() => HAProxyMessage.tcp({ address: '10.0.0.2', port: 70000 }, v4), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => HAProxyMessage.tcp(v4, v4, [{ type: 300, value: Buffer.alloc(1) }]), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => HAProxyMessage.tcp(v4, v4, [{ type: 1, value: Buffer.alloc(1) }]).encode(1), { code: 'ERR_ENCODER', message: /no TLVs/ })
  t.throws(() => HAProxyMessage.tcp(v4, v4, [{ type: 1, value: Buffer.alloc(70_000) }]).encode(), { code: 'ERR_ENCODER' })
  t.throws(() => HAProxyMessage.tcp(v4, v4).encode(3 as never), { code: 'ERR_INVALID_ARG_VALUE' })
})
