import test, { type ExecutionContext } from 'ava'
import { spawn, execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import * as tls from 'node:tls'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Bootstrap, type Channel, type ChannelHandler, SslContext, SslHandler, SslHandshakeCompletionEvent, type TlsInfo } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { certsDir, clientContext, echo, ocspResponse, opensslServer as sServer, pem, serverContext, withTls } from './tls-helpers'

/**
 * Runs `openssl s_client` against `port`, writes `input`, waits until the output shows it echoed
 * back (or the client exits), then ends its input so it says goodbye. Returns what it printed.
 */
async function sClient(port: number, args: string[], input = 'ping-netloop\n'): Promise<string> {
  const p = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', join(certsDir(), 'ca.pem'), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let out = ''
  p.stdout.on('data', (d) => (out += String(d)))
  p.stderr.on('data', (d) => (out += String(d)))
  const exited = once(p, 'exit')
  const kill = setTimeout(() => p.kill('SIGKILL'), 10_000)
  try {
    p.stdin.write(input)
    const echoed = input.trim()
    await Promise.race([until(() => out.includes('---\n' + echoed) || out.includes(echoed + '\n'), 8000), exited])
    p.stdin.end()
    await exited
  } finally {
    clearTimeout(kill)
  }
  return out
}

/**
 * A netloop TLS echo server; `sessions` gets each child's `channel.tls` when its handshake
 * completes (read then: it is not readable once the channel closed).
 */
async function echoServer(t: ExecutionContext, extra: Parameters<typeof serverContext>[0] = {}) {
  const loop = loopFor(t)
  const sessions: TlsInfo[] = []
  const app: ChannelHandler = { ...echo, userEventTriggered: (ctx, e) => void (e instanceof SslHandshakeCompletionEvent && e.isSuccess && sessions.push(ctx.channel.tls!)) }
  const s = await serve(t, loop, withTls(serverContext(extra), app))
  return { ...s, sessions }
}

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
  test(`openssl s_client ${flag} -sess_out then -sess_in resumes the session (Reused)`, async (t) => {
    const { port, sessions } = await echoServer(t)
    const sess = join(mkdtempSync(join(tmpdir(), 'netloop-sess-')), 'session.pem')
    const first = await sClient(port, [flag, '-servername', 'localhost', '-sess_out', sess])
    t.regex(first, new RegExp(`New, ${version.replace('.', '\\.')}`))
    const second = await sClient(port, [flag, '-servername', 'localhost', '-sess_in', sess])
    t.regex(second, new RegExp(`Reused, ${version.replace('.', '\\.')}`), second)
    t.true(second.split('\n').includes('ping-netloop'))
    t.false(sessions[0].resumed)
    await until(() => sessions.length === 2)
    t.true(sessions[1].resumed)
  })
}

test('openssl s_client: sessions resume until sessionTimeout, then get a full handshake (TLS 1.2 ids, TLS 1.3 tickets)', async (t) => {
  const { port } = await echoServer(t, { sessionTimeout: 1 })
  const dir = mkdtempSync(join(tmpdir(), 'netloop-sess-'))
  const flags = [['-tls1_2', 'TLSv1\\.2'], ['-tls1_3', 'TLSv1\\.3']] as const
  for (const [flag, v] of flags) {
    const sess = join(dir, `${flag}.pem`)
    t.regex(await sClient(port, [flag, '-servername', 'localhost', '-sess_out', sess]), new RegExp(`New, ${v}`))
    t.regex(await sClient(port, [flag, '-servername', 'localhost', '-sess_in', sess]), new RegExp(`Reused, ${v}`), `${flag}: in time`)
  }
  // The issue time has whole seconds: a little over two of them.
  await new Promise((r) => setTimeout(r, 2100))
  for (const [flag, v] of flags) {
    const late = await sClient(port, [flag, '-servername', 'localhost', '-sess_in', join(dir, `${flag}.pem`)])
    t.regex(late, new RegExp(`New, ${v}`), `${flag}: expired`)
    t.true(late.split('\n').includes('ping-netloop'))
  }
  t.throws(() => SslContext.forServer({ cert: pem('server.pem'), key: pem('server.key'), sessionTimeout: 0 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => SslContext.forServer({ cert: pem('server.pem'), key: pem('server.key'), sessionTimeout: 1.5 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => SslContext.forClient({ sessionTimeout: 60 }), { code: 'ERR_INVALID_ARG_VALUE' })
})

for (const [flag, version] of [['-tls1_2', 'TLSv1.2'], ['-tls1_3', 'TLSv1.3']] as const) {
  test(`openssl s_client ${flag}: a session of one server resumes on another given the same ticketKeys, not on one with other keys`, async (t) => {
    const keys = randomBytes(48)
    // Tickets only: no session cache that a server could resume from on its own.
    const a = await echoServer(t, { ticketKeys: keys, sessionCacheSize: 0 })
    const b = await echoServer(t, { ticketKeys: Buffer.from(keys), sessionCacheSize: 0 })
    const c = await echoServer(t, { ticketKeys: randomBytes(48), sessionCacheSize: 0 })
    const sess = join(mkdtempSync(join(tmpdir(), 'netloop-sess-')), 'session.pem')
    const v = version.replace('.', '\\.')
    const first = await sClient(a.port, [flag, '-servername', 'localhost', '-sess_out', sess])
    t.regex(first, new RegExp(`New, ${v}`))
    const onB = await sClient(b.port, [flag, '-servername', 'localhost', '-sess_in', sess])
    t.regex(onB, new RegExp(`Reused, ${v}`), onB)
    t.true(onB.split('\n').includes('ping-netloop'))
    await until(() => b.sessions.length === 1)
    t.true(b.sessions[0].resumed)
    const onC = await sClient(c.port, [flag, '-servername', 'localhost', '-sess_in', sess])
    t.regex(onC, new RegExp(`New, ${v}`), 'other keys: a full handshake, no error')
    t.true(onC.split('\n').includes('ping-netloop'))
  })
}

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

/** A netloop client that sends `request` after the handshake and collects until the peer closes. */
async function fetchOver(t: ExecutionContext, port: number, request: string, alpn?: string[]): Promise<{ ch: Channel; tls: TlsInfo; body: () => string }> {
  const loop = loopFor(t)
  const got: Buffer[] = []
  const app: ChannelHandler = { channelRead: (_c, m: Buffer) => void got.push(Buffer.from(m)) }
  const ctx = clientContext(alpn ? { ALPNProtocols: alpn } : {})
  const ch: Channel = await new Bootstrap()
    .group(loop)
    .handler((c) => c.pipeline.addLast('tls', new SslHandler(ctx, { servername: 'localhost' })).addLast('app', app))
    .connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  const tls = ch.tls!
  await ch.writeAndFlush(Buffer.from(request), ch.newPromise())
  return { ch, tls, body: () => Buffer.concat(got).toString() }
}

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
  const { tls: info } = await fetchOver(t, (server.address() as import('node:net').AddressInfo).port, 'ping')
  t.deepEqual(info.ocspResponse, staple)
})

for (const [version, suite] of [['TLSv1.3', 'TLS_AES_128_GCM_SHA256'], ['TLSv1.3', 'TLS_AES_256_GCM_SHA384'], ['TLSv1.2', undefined]] as const) {
  test(`exportKeyingMaterial: a netloop server and a node:tls client export the same bytes (${version}${suite ? ` ${suite}` : ''})`, async (t) => {
    const { port, children } = await echoServer(t, version === 'TLSv1.2' ? { maxVersion: 'TLSv1.2' } : { ciphers: suite })
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
  const { ch, tls: info } = await fetchOver(t, (server.address() as import('node:net').AddressInfo).port, 'ping')
  await until(() => serverSide !== undefined)
  t.deepEqual(info.exportKeyingMaterial(48, 'EXPERIMENTAL-netloop', Buffer.from([1, 2, 3])), serverSide!.exportKeyingMaterial(48, 'EXPERIMENTAL-netloop', Buffer.from([1, 2, 3])))
  t.throws(() => info.exportKeyingMaterial(0, 'x'), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => info.exportKeyingMaterial(16, 7 as never), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => info.exportKeyingMaterial(16, 'x', 'ctx' as never), { code: 'ERR_INVALID_ARG_TYPE' })
  await ch.close()
  t.throws(() => info.exportKeyingMaterial(16, 'EXPERIMENTAL-netloop'), { code: 'ERR_TLS_INVALID_STATE' })
})

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
