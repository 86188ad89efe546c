import test from 'ava'
import { join } from 'node:path'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import https from 'node:https'
import { promisify } from 'node:util'
import { has, interrupt, root, run, startExample, statsOf } from './example-helpers'
import { certsDir } from './tls-helpers'

const ca = () => join(certsDir(), 'ca.pem')
const tlsArgs = () => ['--tls', '--cert', join(certsDir(), 'server.pem'), '--key', join(certsDir(), 'server.key')]

test.serial('resp-server --tls: redis-cli and redis-benchmark talk to it over TLS', async (t) => {
  if (!has(t, 'redis-cli') || !has(t, 'redis-benchmark')) return
  const ex = await startExample(t, 'resp-server', tlsArgs())
  const cli = (...args: string[]) => run('redis-cli', ['--tls', '--cacert', ca(), '-h', 'localhost', '-p', String(ex.port), ...args])
  t.is((await cli('set', 'greeting', 'hello over tls')).stdout.trim(), 'OK')
  t.is((await cli('get', 'greeting')).stdout.trim(), 'hello over tls')
  const bench = await run('redis-benchmark', ['--tls', '--cacert', ca(), '-h', 'localhost', '-p', String(ex.port), '-t', 'set,get', '-n', '5000', '-c', '10', '-P', '8', '-q'])
  t.regex(bench.stdout, /SET: [\d.]+ requests per second/)
  t.regex(bench.stdout, /GET: [\d.]+ requests per second/)
  // A client that does not trust the CA is refused, and the server goes on.
  const untrusted = await run('redis-cli', ['--tls', '--cacert', join(certsDir(), 'other-ca.pem'), '-h', 'localhost', '-p', String(ex.port), 'ping']).catch((e) => e)
  t.notRegex(String(untrusted.stdout ?? ''), /PONG/)
  t.is((await cli('ping')).stdout.trim(), 'PONG')
})

test.serial('http-hello --tls: curl verifies it with the test CA and negotiates http/1.1 by ALPN', async (t) => {
  if (!has(t, 'curl')) return
  const ex = await startExample(t, 'http-hello', tlsArgs())
  const url = `https://localhost:${ex.port}/`
  const { stdout, stderr } = await run('curl', ['-sv', '--cacert', ca(), url, `${url}again`])
  t.is(stdout, 'Hello, World!Hello, World!')
  t.regex(stderr, /ALPN[^\n]*http\/1\.1/)
  t.regex(stderr, /SSL certificate verify ok/)
  t.regex(stderr, /Re-using existing connection/)
  if (!has(t, 'wrk')) return
  const w = await run('wrk', ['-t1', '-c8', '-d1s', url])
  t.regex(w.stdout, /Requests\/sec/)
  t.notRegex(w.stdout, /Non-2xx|Socket errors/)
})

test.serial('echo --tls with the TLS echo client: lines come back over a verified session', async (t) => {
  const ex = await startExample(t, 'echo', tlsArgs())
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join('examples', 'tls-echo-client.ts'), '--port', String(ex.port), '--ca', ca(), 'one', 'two'], { cwd: root, timeout: 30_000 })
  t.regex(stdout, /connected: TLSv1\.3 \S+, server localhost \(authorized: true\)/)
  t.regex(stdout, /one\ntwo\n$/)
})

test.serial('echo --tls --pfx: a PKCS#12 file with its passphrase from PFX_PASSPHRASE serves the TLS echo client', async (t) => {
  const ex = await startExample(t, 'echo', ['--tls', '--pfx', join(certsDir(), 'server.pfx')], { PFX_PASSPHRASE: 'netloop' })
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join('examples', 'tls-echo-client.ts'), '--port', String(ex.port), '--ca', ca(), 'pfx'], { cwd: root, timeout: 30_000 })
  t.regex(stdout, /connected: TLSv1\.3 \S+, server localhost \(authorized: true\)/)
  t.regex(stdout, /pfx\n$/)
})

test.serial('http-hello --tls --threads 2: every worker serves verified TLS from the main thread\'s context', async (t) => {
  const ex = await startExample(t, 'http-hello', [...tlsArgs(), '--threads', '2', '--stats'])
  t.regex(ex.stdout(), /listening on 127\.0\.0\.1:\d+ \(TLS, 2 worker threads\)/)
  const get = () =>
    new Promise<{ body: string; alpn: string | false; authorized: boolean }>((resolve, reject) => {
      const req = https.get({ host: 'localhost', port: ex.port, path: '/', ca: readFileSync(ca()), agent: false, ALPNProtocols: ['http/1.1'] }, (res) => {
        const socket = res.socket as import('node:tls').TLSSocket
        let body = ''
        res.setEncoding('utf8').on('data', (c: string) => (body += c))
        res.on('end', () => resolve({ body, alpn: socket.alpnProtocol, authorized: socket.authorized }))
      })
      req.on('error', reject)
    })
  // Four connections, handed to the two workers in turn: each handshakes and answers.
  for (let i = 0; i < 4; i++) {
    const r = await get()
    t.is(r.body, 'Hello, World!')
    t.true(r.authorized)
    t.is(r.alpn, 'http/1.1')
  }
  t.is(await interrupt(ex), 0)
  const stats = statsOf(ex)
  t.is(stats.length, 2)
  // The native codec hands JS requests, not bytes (bytesIn/bytesOut stay 0): each worker's share
  // shows as channel events delivered to JS and ops (responses) JS wrote.
  for (const m of stats) t.true(m.events > 0 && m.ops > 0, JSON.stringify(m))
  t.is(ex.stderr(), '')
})

test.serial('http-hello --tls --threads 2: SIGHUP reloads the certificate files, and both workers serve the new one', async (t) => {
  const { copyFileSync, mkdtempSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const tls = await import('node:tls')
  const { X509Certificate } = await import('node:crypto')
  const dir = mkdtempSync(join(tmpdir(), 'netloop-rotate-'))
  const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')]
  const install = (name: string) => (copyFileSync(join(certsDir(), `${name}.pem`), cert), copyFileSync(join(certsDir(), `${name}.key`), key))
  install('server')
  const ex = await startExample(t, 'http-hello', ['--tls', '--cert', cert, '--key', key, '--threads', '2'])
  const served = () =>
    new Promise<string>((resolve, reject) => {
      const s = tls.connect({ port: ex.port, host: '127.0.0.1', servername: 'localhost', ca: readFileSync(ca()) }, () => {
        resolve(s.getPeerCertificate().fingerprint256)
        s.destroy()
      })
      s.on('error', reject)
    })
  const fingerprint = (name: string) => new X509Certificate(readFileSync(join(certsDir(), `${name}.pem`))).fingerprint256
  t.is(await served(), fingerprint('server'))
  install('server-rsa')
  ex.proc.kill('SIGHUP')
  const deadline = Date.now() + 10_000
  while (!/tls: reloaded/.test(ex.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  t.regex(ex.stderr(), /tls: reloaded/)
  for (let i = 0; i < 4; i++) t.is(await served(), fingerprint('server-rsa'), `connection ${i}`)
  // A broken file is refused, logged, and the running certificate stays.
  copyFileSync(join(certsDir(), 'client.key'), key)
  ex.proc.kill('SIGHUP')
  while (!/reload failed/.test(ex.stderr()) && Date.now() < deadline + 10_000) await new Promise((r) => setTimeout(r, 20))
  t.regex(ex.stderr(), /tls: reload failed, serving the previous certificate/)
  t.is(await served(), fingerprint('server-rsa'))
})

test.serial('http-hello --proxy-protocol --tls: curl --haproxy-protocol is served over TLS, a client without the header is refused', async (t) => {
  if (!has(t, 'curl')) return
  const ex = await startExample(t, 'http-hello', [...tlsArgs(), '--proxy-protocol'])
  t.regex(ex.stdout(), /PROXY protocol, TLS/)
  const url = `https://localhost:${ex.port}/`
  const { stdout } = await run('curl', ['-s', '--haproxy-protocol', '--cacert', ca(), url])
  t.is(stdout, 'Hello, World!')
  const direct = await run('curl', ['-s', '--cacert', ca(), url]).catch((e: { code?: number }) => e)
  t.not((direct as { code?: number }).code ?? 0, 0, 'a TLS ClientHello without a PROXY header is refused')
})
