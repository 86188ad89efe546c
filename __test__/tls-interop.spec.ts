import test from 'ava'
import { spawn, execFile } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { type ChannelHandler, SslHandshakeCompletionEvent, type TlsInfo } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { certsDir, echo, opensslServer as sServer, pem, serverContext, withTls } from './tls-helpers'
import { echoServer, fetchOver, sClient } from './tls-interop-helpers'

for (const [flag, version] of [['-tls1_2', 'TLSv1.2'], ['-tls1_3', 'TLSv1.3']] as const) {
  test(`openssl s_client ${flag} negotiates ${version} with a netloop server and gets its data echoed`, async (t) => {
    const { port, sessions } = await echoServer(t)
    const out = await sClient(port, [flag, '-servername', 'localhost'], 'echo-me-please\n')
    t.regex(out, new RegExp(`New, ${version.replace('.', '\\.')}, Cipher`))
    t.regex(out, /Verify return code: 0 \(ok\)/)
    t.true(out.split('\n').includes('echo-me-please'), out)
    t.is(sessions[0].protocol, version)
  })
}

for (const suite of ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']) {
  test(`openssl s_client key updates (K: update requested, k: not requested) keep a TLSv1.3 ${suite} session echoing`, async (t) => {
    const { port, sessions } = await echoServer(t)
    const p = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', join(certsDir(), 'ca.pem'), '-tls1_3', '-ciphersuites', suite, '-servername', 'localhost'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let out = ''
    p.stdout.on('data', (d) => (out += String(d)))
    p.stderr.on('data', (d) => (out += String(d)))
    const exited = once(p, 'exit')
    const kill = setTimeout(() => p.kill('SIGKILL'), 20_000)
    const echoed = (line: string) => out.split('\n').includes(line)
    const updates = () => out.split('KEYUPDATE').length - 1
    try {
      p.stdin.write('before-update\n')
      await until(() => echoed('before-update'), 8000)
      // One command per write: s_client takes a line starting with k/K as its command only
      // when the line comes alone, and prints KEYUPDATE when it sent the update.
      for (const cmd of ['K', 'k', 'K']) {
        const seen = updates()
        p.stdin.write(`${cmd}\n`)
        await until(() => updates() > seen, 8000)
        p.stdin.write(`after-${cmd}-${seen}\n`)
        await until(() => echoed(`after-${cmd}-${seen}`), 8000)
      }
      p.stdin.end()
      await exited
    } finally {
      clearTimeout(kill)
    }
    t.is(updates(), 3, out)
    t.true(echoed('after-K-2'), out)
    t.is(sessions[0].protocol, 'TLSv1.3')
    t.is(sessions[0].cipher.standardName, suite)
    t.notRegex(out, /alert/i)
  })
}

test('openssl s_client -servername picks the certificate of the SNI host map', async (t) => {
  const { port, sessions } = await echoServer(t, {
    SNI: { 'example.org': { cert: pem('wrong-host.pem'), key: pem('wrong-host.key') } },
  })
  const other = await sClient(port, ['-servername', 'example.org'])
  t.regex(other, /subject=CN ?= ?example\.org/)
  const dflt = await sClient(port, ['-servername', 'localhost'])
  t.regex(dflt, /subject=CN ?= ?localhost/)
  t.is(sessions[0].servername, 'example.org')
  t.is(sessions[1].servername, 'localhost')
})

test('openssl s_client -alpn sees the protocol the netloop server chose', async (t) => {
  const { port, sessions } = await echoServer(t, { ALPNProtocols: ['http/1.1', 'h2'] })
  const out = await sClient(port, ['-servername', 'localhost', '-alpn', 'h2,http/1.1'])
  // The server's preference order wins (as node:tls and OpenSSL servers do).
  t.regex(out, /ALPN protocol: http\/1\.1/)
  t.is(sessions[0].alpnProtocol, 'http/1.1')
  const none = await sClient(port, ['-servername', 'localhost', '-alpn', 'h2'])
  t.regex(none, /ALPN protocol: h2/)
})

for (const [flag, version] of [['-tls1_2', 'TLSv1.2'], ['-tls1_3', 'TLSv1.3']] as const) {
  test(`a netloop client completes ${version} with openssl s_server -www, reads its page and sees ALPN`, async (t) => {
    const port = await sServer(t, [flag, '-www', '-alpn', 'h2,http/1.1'])
    const { ch, tls, body } = await fetchOver(t, port, 'GET / HTTP/1.0\r\n\r\n', ['http/1.1'])
    t.is(tls.protocol, version)
    t.is(tls.alpnProtocol, 'http/1.1')
    t.true(tls.authorized)
    await until(() => !ch.isOpen, 5000)
    t.regex(body(), /^HTTP\/1\.0 200 ok/)
    t.regex(body(), new RegExp(`Protocol\\s*: ${version.replace('.', '\\.')}`))
  })
}

function curl(args: string[]): Promise<{ stdout: string; code: number }> {
  return new Promise((resolve) => {
    execFile('curl', args, { timeout: 10_000 }, (err, stdout) => resolve({ stdout, code: err ? Number((err as { code?: number }).code ?? -1) : 0 }))
  })
}

test('curl --cacert fetches from a netloop TLS HTTP responder (HTTP/1.1, verify result 0)', async (t) => {
  const body = 'hello from netloop over tls\n'
  const response = Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`)
  let request = ''
  const responder: ChannelHandler = {
    channelRead(ctx, m: Buffer) {
      request += m.toString()
      if (request.includes('\r\n\r\n')) {
        ctx.writeAndFlush(response)
        ctx.close()
      }
    },
  }
  const loop = loopFor(t)
  const sessions: TlsInfo[] = []
  responder.userEventTriggered = (ctx, e) => void (e instanceof SslHandshakeCompletionEvent && e.isSuccess && sessions.push(ctx.channel.tls!))
  const { port } = await serve(t, loop, withTls(serverContext({ ALPNProtocols: ['http/1.1'] }), responder))
  const r = await curl(['-sS', '--cacert', join(certsDir(), 'ca.pem'), '-w', '\n%{http_version} %{ssl_verify_result} %{http_code}', `https://localhost:${port}/hello`])
  t.is(r.code, 0)
  t.is(r.stdout, `${body}\n1.1 0 200`)
  t.regex(request, /^GET \/hello HTTP\/1\.1\r\n/)
  t.is(sessions[0].alpnProtocol, 'http/1.1')
  t.is(sessions[0].servername, 'localhost')
})

test('curl refuses a netloop server whose certificate it cannot verify (no --cacert)', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, withTls(serverContext({}, 'other-server'), { ...echo, exceptionCaught: () => {} }))
  const r = await curl(['-sS', '--cacert', join(certsDir(), 'ca.pem'), `https://localhost:${port}/`])
  t.is(r.code, 60) // CURLE_PEER_FAILED_VERIFICATION
})
