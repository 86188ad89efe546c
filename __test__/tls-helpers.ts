import { execFileSync, spawn } from 'node:child_process'
import { readFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import * as net from 'node:net'
import * as tls from 'node:tls'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Channel, type ChannelHandler, SslContext, SslHandler, type SslContextOptions } from '../index'
import { once } from 'node:events'
import { until } from './helpers'

let dir: string | undefined

/** The test PKI of scripts/make-certs.sh, made once per test process. */
export function certsDir(): string {
  if (!dir || !existsSync(join(dir, 'ca.pem'))) {
    dir = mkdtempSync(join(tmpdir(), 'netloop-certs-'))
    execFileSync('bash', [join(__dirname, '..', 'scripts', 'make-certs.sh'), dir], { stdio: 'ignore' })
  }
  return dir
}

/** A file of the test PKI as a Buffer (`pem('server.pem')`). */
export function pem(name: string): Buffer {
  return readFileSync(join(certsDir(), name))
}

export function serverContext(extra: Partial<SslContextOptions> = {}, name = 'server'): SslContext {
  return SslContext.forServer({ cert: pem(`${name}.pem`), key: pem(`${name}.key`), ...extra })
}

export function clientContext(extra: Partial<SslContextOptions> = {}): SslContext {
  return SslContext.forClient({ ca: pem('ca.pem'), ...extra })
}

/** An initializer adding TLS with `ctx` first, then `app`. */
export function withTls(ctx: SslContext, app: ChannelHandler): (ch: Channel) => void {
  return (ch) => {
    ch.pipeline.addLast('tls', new SslHandler(ctx)).addLast('app', app)
  }
}

/** A node:tls client of 127.0.0.1:`port` naming and trusting the test PKI's localhost; resolves once secure. */
export function nodeTlsClient(port: number, opts: tls.ConnectionOptions = {}): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem'), ...opts }, () => resolve(s))
    s.once('error', reject)
  })
}

/**
 * A DER OCSP response saying `name`.pem is good, signed by the test CA (`openssl ocsp` as the
 * CA's responder, over an index that lists the certificate), made once per test PKI.
 */
export function ocspResponse(name = 'server'): Buffer {
  const d = certsDir()
  const out = join(d, `${name}.ocsp`)
  if (!existsSync(out)) {
    const x509 = (flag: string) => execFileSync('openssl', ['x509', '-in', join(d, `${name}.pem`), '-noout', flag, '-nameopt', 'compat'], { encoding: 'utf8' }).trim()
    const serial = x509('-serial').split('=')[1]
    const end = new Date(x509('-enddate').split('=')[1])
    const expiry = end.toISOString().replace(/^\d\d|[-:T]|\.\d+/g, '').slice(0, 12) + 'Z'
    const subject = x509('-subject').replace(/^subject=\s*/, '')
    writeFileSync(join(d, `${name}.index`), `V\t${expiry}\t\t${serial}\tunknown\t${subject}\n`)
    execFileSync('openssl', ['ocsp', '-index', join(d, `${name}.index`), '-rsigner', join(d, 'ca.pem'), '-rkey', join(d, 'ca.key'),
      '-CA', join(d, 'ca.pem'), '-issuer', join(d, 'ca.pem'), '-cert', join(d, `${name}.pem`), '-respout', out, '-ndays', '7'], { stdio: 'ignore' })
  }
  return readFileSync(out)
}

/** A JS handler echoing what it reads, flushing per read batch. */
export const echo: ChannelHandler = {
  channelRead: (ctx, msg) => ctx.write(msg),
  channelReadComplete: (ctx) => ctx.flush(),
}

/**
 * A client certificate (CN=other-client, clientAuth) signed by other-ca, made on first use in
 * the test PKI's directory: a certificate a server trusting only ca.pem must refuse.
 */
export function otherCaClient(): { cert: Buffer; key: Buffer } {
  const d = certsDir()
  if (!existsSync(join(d, 'other-client.pem'))) {
    const run = (args: string[]) => execFileSync('openssl', args, { cwd: d, stdio: 'ignore' })
    run(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'other-client.key'])
    run(['req', '-new', '-key', 'other-client.key', '-subj', '/CN=other-client', '-out', 'other-client.csr'])
    writeFileSync(join(d, 'other-client.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n')
    run(['x509', '-req', '-in', 'other-client.csr', '-CA', 'other-ca.pem', '-CAkey', 'other-ca.key', '-CAcreateserial',
      '-days', '3650', '-sha256', '-extfile', 'other-client.ext', '-out', 'other-client.pem'])
  }
  return { cert: pem('other-client.pem'), key: pem('other-client.key') }
}

/** The first flight of a node:tls client (its ClientHello record), captured from a plain TCP server. */
export async function captureClientHello(): Promise<Buffer> {
  const srv = net.createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  const port = (srv.address() as net.AddressInfo).port
  const got = new Promise<Buffer>((resolve) => srv.once('connection', (s) => s.once('data', (d: Buffer) => {
    resolve(d)
    s.destroy()
  })))
  const c = tls.connect({ port, host: '127.0.0.1', servername: 'localhost' })
  c.on('error', () => {})
  const hello = await got
  c.destroy()
  srv.close()
  return hello
}

/**
 * A server whose connections are served by a group of two worker loops running the fixture
 * `module` (in `__test__/fixtures`) with `workerData`; its port. Torn down with the test.
 */
export async function workerGroupServer(t: { teardown: (fn: () => unknown) => void }, module: string, workerData: unknown): Promise<number> {
  const { EventLoopGroup, ServerBootstrap, EventLoop } = await import('../index')
  const workers = new EventLoopGroup({ threads: 2, module: join(__dirname, 'fixtures', module), workerData })
  t.teardown(() => workers.shutdownGracefully(0, 2000))
  const boss = new EventLoop()
  t.teardown(() => boss.shutdownGracefully(0, 1000))
  const server = await new ServerBootstrap().group(boss, workers).bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  return server.localAddress!.port
}

/** A node:tls echo server with the test PKI's `name`.pem and .key; its port (closed at teardown). */
export async function nodeEchoServer(t: { teardown(fn: () => unknown): void }, name: string): Promise<number> {
  const server = tls.createServer({ cert: pem(`${name}.pem`), key: pem(`${name}.key`) }, (s) => s.pipe(s))
  server.on('tlsClientError', () => {})
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  return (server.address() as net.AddressInfo).port
}

/** `openssl s_server` with the test server certificate and `args` on a free port (killed at teardown); resolves with the port. */
export async function opensslServer(t: { teardown(fn: () => unknown): void }, args: string[]): Promise<number> {
  const d = certsDir()
  const p = spawn('openssl', ['s_server', '-accept', '127.0.0.1:0', '-cert', join(d, 'server.pem'), '-key', join(d, 'server.key'), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  t.teardown(() => void p.kill('SIGKILL'))
  let out = ''
  p.stdout.on('data', (x) => (out += String(x)))
  p.stderr.on('data', (x) => (out += String(x)))
  await until(() => /ACCEPT .*:\d+/.test(out), 5000)
  return Number(/ACCEPT .*:(\d+)/.exec(out)![1])
}
