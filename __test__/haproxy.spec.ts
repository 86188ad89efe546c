// HAProxyMessageDecoder: servers behind a proxy or load balancer that sends the PROXY
// protocol header learn who the client is, in front of TLS and the native HTTP codec.
import test, { type ExecutionContext } from 'ava'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, writeFileSync } from 'node:fs'
import * as net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tls from 'node:tls'
import { promisify } from 'node:util'
import { has } from './example-helpers'
import { type Channel, HAProxyMessage, HAProxyMessageDecoder, HAProxyTlvType, HttpResponse, HttpServerCodec, type HttpRequest, SslHandler } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { echo, pem, serverContext } from './tls-helpers'

const run = promisify(execFile)

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

/** A raw TCP connection to `port` that has written `first`. */
async function raw(port: number, first: Buffer | string): Promise<net.Socket> {
  const s = net.connect(port, '127.0.0.1')
  await once(s, 'connect')
  s.write(first)
  return s
}

test('curl --haproxy-protocol: the native HTTP codec behind the decoder answers with the client the proxy names', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline
      .addLast('proxy', new HAProxyMessageDecoder())
      .addLast('http', new HttpServerCodec())
      .addLast('app', {
        channelRead: (ctx, req: HttpRequest) => {
          const m = ctx.channel.haproxy!
          ctx.writeAndFlush(new HttpResponse(200, {}, `${req.url} from ${m.protocol} ${m.sourceAddress}:${m.sourcePort} to ${m.destinationPort}\n`))
        },
      })
  })
  const { stdout } = await run('curl', ['-s', '--haproxy-protocol', `http://127.0.0.1:${port}/who`])
  const m = /^\/who from TCP4 127\.0\.0\.1:(\d+) to (\d+)\n$/.exec(stdout)
  t.truthy(m, stdout)
  t.is(Number(m![2]), port)
})

test('optional: one port serves curl through the PROXY protocol and curl directly; a broken header is still refused', async (t) => {
  const loop = loopFor(t)
  const errors: unknown[] = []
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline
      .addLast('proxy', new HAProxyMessageDecoder({ optional: true }))
      .addLast('http', new HttpServerCodec())
      .addLast('app', {
        channelRead: (ctx, req: HttpRequest) => {
          const m = ctx.channel.haproxy
          ctx.writeAndFlush(new HttpResponse(200, {}, `${req.url} ${m ? `via proxy for ${m.sourceAddress}` : `direct from ${ctx.channel.remoteAddress!.address}`}\n`))
        },
        exceptionCaught: (_ctx, e) => void errors.push(e),
      })
  })
  t.is((await run('curl', ['-s', '--haproxy-protocol', `http://127.0.0.1:${port}/a`])).stdout, '/a via proxy for 127.0.0.1\n')
  t.is((await run('curl', ['-s', `http://127.0.0.1:${port}/b`])).stdout, '/b direct from 127.0.0.1\n')
  const s = await raw(port, 'PROXY TCP4 not-an-address\r\nGET / HTTP/1.1\r\n\r\n')
  t.teardown(() => s.destroy())
  await until(() => errors.length > 0)
  t.is((errors[0] as { code?: string }).code, 'ERR_HAPROXY_PROTOCOL')
  t.throws(() => new HAProxyMessageDecoder({ optional: 'yes' as never }), { code: 'ERR_INVALID_ARG_TYPE' })
})

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

/** A free TCP port on 127.0.0.1 (free when this returns). */
async function freePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1')
  await once(s, 'listening')
  const port = (s.address() as net.AddressInfo).port
  s.close()
  await once(s, 'close')
  return port
}

/**
 * HAProxy in TCP mode with a frontend of `bind` lines (`%FRONT%`: its port) and a backend of
 * `server` lines, killed at teardown; resolves with the frontend's port once it listens
 * (undefined after failing the test).
 */
async function startHaproxy(t: ExecutionContext, bind: string[], server: string[]): Promise<number | undefined> {
  const front = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'netloop-haproxy-'))
  const cfg = join(dir, 'haproxy.cfg')
  writeFileSync(
    cfg,
    ['global', '  maxconn 64', 'defaults', '  mode tcp', '  timeout connect 5s', '  timeout client 30s', '  timeout server 30s',
      'frontend fe', ...bind.map((l) => l.replace('%FRONT%', String(front))), '  default_backend be', 'backend be', ...server, ''].join('\n'),
  )
  const proxy = spawn('haproxy', ['-f', cfg, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  proxy.stderr!.on('data', (d) => (stderr += d))
  t.teardown(() => proxy.kill('SIGKILL'))
  const deadline = Date.now() + 10_000
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(front, '127.0.0.1', () => (s.destroy(), resolve(true)))
      s.on('error', () => resolve(false))
    })
    if (up) return front
    if (Date.now() > deadline) {
      t.fail(`haproxy did not listen: ${stderr}`)
      return undefined
    }
    await new Promise((r) => setTimeout(r, 20))
  }
}

test('HAProxy (send-proxy-v2) in front of a netloop TLS server: the server sees the TLS client HAProxy relayed', async (t) => {
  if (!has(t, 'haproxy')) return
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline
      .addLast('proxy', new HAProxyMessageDecoder())
      .addLast('tls', new SslHandler(serverContext()))
      .addLast('app', {
        channelRead: (ctx, _m: Buffer) => {
          const m = ctx.channel.haproxy!
          ctx.writeAndFlush(`${m.version} ${m.protocol} ${m.sourceAddress} ${m.sourcePort} ${m.destinationPort}`)
        },
        exceptionCaught: () => {}, // the readiness probes' connections, reset
      })
  })
  const front = await startHaproxy(t, [`  bind 127.0.0.1:%FRONT%`], [`  server netloop 127.0.0.1:${port} send-proxy-v2`])
  if (front === undefined) return
  for (let i = 0; i < 2; i++) {
    const s = tls.connect({ port: front, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem') })
    t.teardown(() => s.destroy())
    await once(s, 'secureConnect')
    s.write('who')
    const [data] = await once(s, 'data')
    t.is(String(data), `2 TCP4 127.0.0.1 ${s.localPort} ${front}`)
    s.destroy()
  }
})

test('HAProxy terminating TLS (proxy-v2-options ssl, cert-cn, authority, crc32c): the server reads the client\'s TLS, certificate and host, CRC checked', async (t) => {
  if (!has(t, 'haproxy')) return
  const loop = loopFor(t)
  const { port, children } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('proxy', new HAProxyMessageDecoder()).addLast('app', { ...echo, exceptionCaught: () => {} })
  })
  const dir = mkdtempSync(join(tmpdir(), 'netloop-haproxy-tls-'))
  const crt = join(dir, 'server-with-key.pem')
  writeFileSync(crt, Buffer.concat([pem('server.pem'), pem('server.key')]))
  writeFileSync(join(dir, 'ca.pem'), pem('ca.pem'))
  const front = await startHaproxy(
    t,
    [`  bind 127.0.0.1:%FRONT% ssl crt ${crt} ca-file ${join(dir, 'ca.pem')} verify optional alpn h2,http/1.1`],
    [`  server netloop 127.0.0.1:${port} send-proxy-v2 proxy-v2-options ssl,cert-cn,ssl-cipher,authority,crc32c`],
  )
  if (front === undefined) return
  const s = tls.connect({ port: front, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem'), cert: pem('client.pem'), key: pem('client.key'), ALPNProtocols: ['h2'] })
  t.teardown(() => s.destroy())
  await once(s, 'secureConnect')
  s.write('hello')
  const [data] = await once(s, 'data')
  t.is(String(data), 'hello')
  // The readiness probe's connection came first (no TLS); the client's is the one with TLS.
  await until(() => children.some((c) => c.haproxy?.ssl?.tls === true))
  const m = children.map((c) => c.haproxy!).find((h) => h.ssl?.tls)!
  t.is(m.sourcePort, s.localPort)
  t.is(m.authority, 'localhost')
  t.is(m.alpn, 'h2')
  t.true(m.tlv(HAProxyTlvType.CRC32C) !== undefined, 'HAProxy sent a CRC32C, and the decoder accepted it')
  t.like(m.ssl, { tls: true, verifiedCertificate: true, verify: 0, cn: 'netloop-client', version: 'TLSv1.3' })
  t.regex(m.ssl!.cipher!, /^TLS_AES_/)
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
