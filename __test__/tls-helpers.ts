import { execFileSync } from 'node:child_process'
import { readFileSync, existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Channel, type ChannelHandler, SslContext, SslHandler, type SslContextOptions } from '../index'

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

/** A JS handler echoing what it reads, flushing per read batch. */
export const echo: ChannelHandler = {
  channelRead: (ctx, msg) => ctx.write(msg),
  channelReadComplete: (ctx) => ctx.flush(),
}
