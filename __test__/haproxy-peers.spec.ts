// HAProxyMessageDecoder against real senders of the PROXY protocol: curl's
// --haproxy-protocol (to the native HTTP codec, strict and optional), and HAProxy itself in
// front of a netloop TLS server and terminating TLS with a client certificate (typed TLVs, the
// CRC32C checked).
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
import { HAProxyMessageDecoder, HAProxyTlvType, HttpResponse, HttpServerCodec, type HttpRequest, SslHandler } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { echo, pem, serverContext } from './tls-helpers'
import { raw } from './haproxy-helpers'

const run = promisify(execFile)

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
  let exited: number | null | undefined
  proxy.on('exit', (code) => (exited = code))
  t.teardown(() => proxy.kill('SIGKILL'))
  // Generous: on a machine loaded by other test files haproxy took over 10 s to listen.
  const deadline = Date.now() + 30_000
  for (;;) {
    if (exited !== undefined) {
      t.fail(`haproxy exited (${exited}) before it listened: ${stderr}`)
      return undefined
    }
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
