import test, { type ExecutionContext } from 'ava'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import * as tls from 'node:tls'
import { type ChannelHandler, NetloopError, SslContext, SslHandshakeCompletionEvent, type SslContextOptions, type TlsInfo } from '../index'
import { loopFor, serve, sleep, until } from './channel-helpers'
import { certsDir, echo, pem, serverContext, withTls, workerGroupServer } from './tls-helpers'

/** A server context for example.org (wrong-host.pem of the test PKI). */
function exampleOrg(extra: Partial<SslContextOptions> = {}): SslContext {
  return SslContext.forServer({ cert: pem('wrong-host.pem'), key: pem('wrong-host.key'), ...extra })
}

/** A netloop TLS echo server with `sni` as the SNICallback of a localhost context. */
async function sniServer(t: ExecutionContext, SNICallback: SslContextOptions['SNICallback'], extra: Partial<SslContextOptions> = {}) {
  const loop = loopFor(t)
  const sessions: TlsInfo[] = []
  const errors: unknown[] = []
  const failed: unknown[] = []
  const app: ChannelHandler = {
    ...echo,
    userEventTriggered: (ctx, e) => {
      if (e instanceof SslHandshakeCompletionEvent) {
        if (e.isSuccess) sessions.push(ctx.channel.tls!)
        else failed.push(e.cause)
      }
    },
    exceptionCaught: (_ctx, e) => void errors.push(e),
  }
  const s = await serve(t, loop, withTls(serverContext({ SNICallback, ...extra }), app))
  return { ...s, sessions, errors, failed }
}

/** A node:tls client; resolves with the socket once its handshake completed, rejects with its error. */
function connect(t: ExecutionContext, port: number, opts: tls.ConnectionOptions): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ port, host: '127.0.0.1', ca: pem('ca.pem'), ...opts }, () => resolve(s))
    s.once('error', reject)
    t.teardown(() => s.destroy())
  })
}

async function echoes(s: tls.TLSSocket, text: string): Promise<string> {
  s.write(text)
  const [d] = await once(s, 'data')
  return String(d)
}

test('a synchronous SNICallback picks the certificate and the ALPN of the name the client asked for', async (t) => {
  const asked: string[] = []
  const other = exampleOrg({ ALPNProtocols: ['x/1'] })
  const { port, sessions } = await sniServer(t, (name, cb) => {
    asked.push(name)
    cb(null, name === 'example.org' ? other : undefined)
  })
  const a = await connect(t, port, { servername: 'example.org', ALPNProtocols: ['x/1'] })
  t.true(a.authorized)
  t.is(a.getPeerCertificate().subject.CN, 'example.org')
  t.is(a.alpnProtocol, 'x/1', "the chosen context's ALPN")
  t.is(await echoes(a, 'over example.org'), 'over example.org')
  const b = await connect(t, port, { servername: 'localhost', ALPNProtocols: ['x/1'] })
  t.is(b.getPeerCertificate().subject.CN, 'localhost')
  t.is(b.alpnProtocol, false, 'the default context has no ALPN')
  t.deepEqual(asked, ['example.org', 'localhost'])
  await until(() => sessions.length === 2)
  t.is(sessions[0].servername, 'example.org')
  t.is(sessions[0].alpnProtocol, 'x/1')
  t.is(sessions[1].servername, 'localhost')
})

test("the chosen context's client-certificate verification applies (mTLS for one name only)", async (t) => {
  const strict = exampleOrg({ requestCert: true, ca: pem('ca.pem') })
  const { port, sessions, failed } = await sniServer(t, (name, cb) => cb(null, name === 'example.org' ? strict : undefined))
  const client = { cert: pem('client.pem'), key: pem('client.key') }
  const a = await connect(t, port, { servername: 'example.org', ...client })
  t.is(await echoes(a, 'with a certificate'), 'with a certificate')
  await until(() => sessions.length === 1)
  t.true(sessions[0].authorized)
  t.is(sessions[0].peerCertificate!.subject.CN, 'netloop-client')
  const b = await connect(t, port, { servername: 'localhost' })
  t.is(await echoes(b, 'no certificate needed'), 'no certificate needed')
  // Without a certificate for the strict name: the server refuses it (TLS 1.3 clients learn it
  // after their handshake completed, from the alert or the close).
  const c = tls.connect({ port, host: '127.0.0.1', ca: pem('ca.pem'), servername: 'example.org' })
  const clientError = new Promise<Error>((resolve) => c.on('error', resolve))
  t.teardown(() => c.destroy())
  t.is((await clientError as { code?: string }).code, 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED')
  await until(() => failed.length === 1)
  t.is((failed[0] as NetloopError).code, 'ERR_TLS_CERT_REQUIRED')
})

test('an asynchronous SNICallback answers each of several connections in flight with its own context', async (t) => {
  const other = exampleOrg()
  const dflt = serverContext()
  let calls = 0
  // Answers in the reverse order of the questions.
  const delays: Record<string, number> = { 'example.org': 150, localhost: 20 }
  const { port, sessions } = await sniServer(t, (name, cb) => {
    calls++
    setTimeout(() => cb(null, name === 'example.org' ? other : dflt), delays[name])
  })
  const names = ['example.org', 'localhost', 'example.org', 'localhost']
  const sockets = await Promise.all(names.map((servername) => connect(t, port, { servername })))
  t.deepEqual(
    sockets.map((s) => s.getPeerCertificate().subject.CN),
    names,
  )
  for (const [i, s] of sockets.entries()) t.is(await echoes(s, `msg ${i}`), `msg ${i}`)
  t.is(calls, 4, 'once per connection')
  await until(() => sessions.length === 4)
  t.deepEqual(sessions.map((s) => s.servername).sort(), [...names].sort())
})

test('a callback returning a Promise (one parameter) answers with what it resolves to', async (t) => {
  const other = exampleOrg()
  const { port, failed } = await sniServer(t, async (name: string) => {
    await sleep(10)
    if (name === 'nope.test') throw new Error('no certificate for nope.test')
    return name === 'example.org' ? other : undefined
  })
  const a = await connect(t, port, { servername: 'example.org' })
  t.is(a.getPeerCertificate().subject.CN, 'example.org')
  const b = await connect(t, port, { servername: 'localhost' })
  t.is(b.getPeerCertificate().subject.CN, 'localhost')
  const err = await t.throwsAsync(connect(t, port, { servername: 'nope.test' }))
  t.regex(String((err as { code?: string }).code), /UNRECOGNIZED_NAME/)
  await until(() => failed.length === 1)
  t.is((failed[0] as NetloopError).code, 'ERR_TLS_SNI_CALLBACK')
})

test('cb(err) refuses the name: the client sees unrecognized_name, exceptionCaught gets ERR_TLS_SNI_CALLBACK, other connections go on', async (t) => {
  const refusals: Error[] = []
  const { port, errors, failed } = await sniServer(t, (name, cb) => {
    if (name === 'localhost') cb(null)
    else
      setTimeout(() => {
        const refusal = new Error(`unknown host ${name}`)
        refusals.push(refusal)
        cb(refusal)
      }, 5)
  })
  const before = await connect(t, port, { servername: 'localhost' })
  const err = await t.throwsAsync(connect(t, port, { servername: 'nope.test' }))
  t.is((err as { code?: string }).code, 'ERR_SSL_TLSV1_UNRECOGNIZED_NAME')
  await until(() => errors.length === 1)
  const e = errors[0] as NetloopError
  t.true(e instanceof NetloopError)
  t.is(e.code, 'ERR_TLS_SNI_CALLBACK')
  t.regex(e.message, /unrecognized_name/)
  t.regex(e.message, /unknown host nope\.test/)
  t.is(e.cause, refusals[0], "the callback's own error is the cause")
  t.is((failed[0] as NetloopError).code, 'ERR_TLS_SNI_CALLBACK', 'the handshake event carries it too')
  t.is((failed[0] as NetloopError).cause, refusals[0])
  t.is(await echoes(before, 'still here'), 'still here')
  const after = await connect(t, port, { servername: 'localhost' })
  t.is(await echoes(after, 'and here'), 'and here')
})

test('a throwing callback fails the handshake with internal_error and ERR_TLS_SNI_CALLBACK; the server goes on', async (t) => {
  const thrown = new Error('secret store down')
  const { port, errors } = await sniServer(t, (name, cb) => {
    if (name === 'boom.test') throw thrown
    cb(null)
  })
  const err = await t.throwsAsync(connect(t, port, { servername: 'boom.test' }))
  t.is((err as { code?: string }).code, 'ERR_SSL_TLSV1_ALERT_INTERNAL_ERROR')
  await until(() => errors.length === 1)
  t.is((errors[0] as NetloopError).code, 'ERR_TLS_SNI_CALLBACK')
  t.regex((errors[0] as NetloopError).message, /internal_error.*secret store down/)
  t.is((errors[0] as NetloopError).cause, thrown)
  const ok = await connect(t, port, { servername: 'localhost' })
  t.is(await echoes(ok, 'fine'), 'fine')
})

test('an answer that is not a server SslContext fails the handshake with internal_error', async (t) => {
  const client = SslContext.forClient({})
  const { port, errors } = await sniServer(t, (name, cb) => cb(null, (name === 'a.test' ? client : { not: 'a context' }) as never))
  for (const servername of ['a.test', 'b.test']) {
    const err = await t.throwsAsync(connect(t, port, { servername }))
    t.is((err as { code?: string }).code, 'ERR_SSL_TLSV1_ALERT_INTERNAL_ERROR')
  }
  await until(() => errors.length === 2)
  t.true(errors.every((e) => (e as NetloopError).code === 'ERR_TLS_SNI_CALLBACK'))
})

test('cb(null, undefined) serves the default certificate', async (t) => {
  const { port, sessions } = await sniServer(t, (_name, cb) => cb(null, undefined))
  const s = await connect(t, port, { servername: 'example.org', checkServerIdentity: () => undefined })
  t.is(s.getPeerCertificate().subject.CN, 'localhost')
  await until(() => sessions.length === 1)
  t.is(sessions[0].servername, 'example.org')
})

test('a client sending no server name gets the default certificate without the callback being called (as node:tls)', async (t) => {
  let calls = 0
  const { port, sessions } = await sniServer(t, (_name, cb) => {
    calls++
    cb(null, exampleOrg())
  })
  // node:tls sends no SNI for an IP address host.
  const s = await connect(t, port, {})
  t.is(s.getPeerCertificate().subject.CN, 'localhost')
  await until(() => sessions.length === 1)
  t.is(sessions[0].servername, false)
  t.is(calls, 0)
  // node:tls's own server does the same: its SNICallback is not called without a name.
  let nodeCalls = 0
  const server = tls.createServer({ cert: pem('server.pem'), key: pem('server.key'), SNICallback: (_n, cb) => (nodeCalls++, cb(null)) }, (c) => c.end())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  await connect(t, (server.address() as { port: number }).port, {})
  t.is(nodeCalls, 0)
})

test('a callback that never answers is ended by the handshake timeout', async (t) => {
  // Two parameters: it answers through cb (which it never calls), not by its return value.
  const { port, errors } = await sniServer(t, (_name, _cb) => {}, { handshakeTimeout: 200 })
  const started = Date.now()
  await t.throwsAsync(connect(t, port, { servername: 'slow.test' }))
  await until(() => errors.length === 1)
  t.is((errors[0] as NetloopError).code, 'ERR_TLS_HANDSHAKE_TIMEOUT')
  t.true(Date.now() - started >= 150)
})

test('SNICallback must be a function of a server context, and does not cross to other threads', (t) => {
  const e = t.throws(() => serverContext({ SNICallback: 'nope' as never }))
  t.is((e as NetloopError).code, 'ERR_INVALID_ARG_TYPE')
  const c = t.throws(() => SslContext.forClient({ SNICallback: () => {} }))
  t.is((c as NetloopError).code, 'ERR_INVALID_ARG_VALUE')
  const ctx = serverContext({ SNICallback: (_n, cb) => cb(null) })
  // What a worker receives in workerData: the context's id.
  const shared = t.throws(() => new SslContext({ netloopSslContext: ctx.netloopSslContext }))
  t.is((shared as NetloopError).code, 'ERR_TLS_SNI_CALLBACK_NOT_SHAREABLE')
  t.notThrows(() => new SslContext({ netloopSslContext: serverContext().netloopSslContext }))
})

test('on a worker group, each worker makes its context with the SNICallback and answers on its own thread', async (t) => {
  const pems = (name: string) => ({ cert: String(pem(`${name}.pem`)), key: String(pem(`${name}.key`)) })
  const port = await workerGroupServer(t, 'tls-sni-module.ts', { dflt: pems('server'), other: pems('wrong-host') })
  const threads = new Set<string>()
  for (const servername of ['example.org', 'localhost', 'example.org', 'localhost']) {
    const s = await connect(t, port, { servername })
    t.is(s.getPeerCertificate().subject.CN, servername)
    const m = /^thread=(\d+) (\S+) hi$/.exec(await echoes(s, 'hi'))
    t.truthy(m)
    t.is(m![2], servername)
    threads.add(m![1])
    s.destroy()
  }
  t.is(threads.size, 2)
})

/** `openssl s_client` against `port` with `args`; its whole output once it exited. */
async function sClient(port: number, args: string[]): Promise<string> {
  const p = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', join(certsDir(), 'ca.pem'), ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  p.stdout.on('data', (d) => (out += String(d)))
  p.stderr.on('data', (d) => (out += String(d)))
  const exited = once(p, 'exit')
  const kill = setTimeout(() => p.kill('SIGKILL'), 10_000)
  p.stdin.end('Q\n')
  await exited
  clearTimeout(kill)
  return out
}

test('openssl s_client -servername gets the certificate the callback chose, or unrecognized_name', async (t) => {
  const other = exampleOrg()
  const { port } = await sniServer(t, (name, cb) => setTimeout(() => (name === 'refused.test' ? cb(new Error('no')) : cb(null, name === 'example.org' ? other : null)), 5))
  t.regex(await sClient(port, ['-servername', 'example.org']), /subject=CN ?= ?example\.org/)
  t.regex(await sClient(port, ['-servername', 'localhost', '-tls1_2']), /subject=CN ?= ?localhost/)
  t.regex(await sClient(port, ['-servername', 'refused.test']), /unrecognized name|alert number 112/i)
})
