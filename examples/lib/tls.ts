// `--tls` for the example servers: TLS in front of the example's own pipeline.
//
//   --tls             serve TLS with certs/server.pem and certs/server.key (make them, and the
//                     test CA certs/ca.pem that clients trust, with `npm run certs`)
//   --cert F --key F  another certificate chain and key (PEM)
//   --pfx F           a PKCS#12 file instead (its passphrase in the environment variable
//                     PFX_PASSPHRASE, none if unset); `npm run certs` writes certs/server.pfx,
//                     whose passphrase is `netloop`
//
// SIGHUP reads the certificate and key files again and reloads the context in place
// (`SslContext#reload`): renewed certificates are served without a restart, by the worker
// threads too; connections already open keep theirs. A reload that fails is logged and
// changes nothing.
//
// The context is parsed once; every connection gets its own SslHandler, added first, so the
// example's decoders and handlers behind it read and write plaintext unchanged. With
// `--threads N` the main thread's context crosses to the workers by id (`workerData.tls`) and
// each worker's `childHandler` adds the SslHandler itself (`addWorkerTls`): nothing is parsed
// again on the workers.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isMainThread, workerData } from 'node:worker_threads'
import { type Channel, type SharedSslContext, SslContext, SslHandler } from 'netloop'
import { arg } from './server'

/** The directory `npm run certs` writes to. */
export const CERTS_DIR = join(__dirname, '..', '..', 'certs')

/** The server context `--tls` asks for, or undefined without `--tls`. */
export function tlsContextArg(alpn?: string[]): SslContext | undefined {
  if (!process.argv.includes('--tls')) return undefined
  const pfx = arg('--pfx')
  const cert = pfx ?? arg('--cert') ?? join(CERTS_DIR, 'server.pem')
  const key = arg('--key') ?? join(CERTS_DIR, 'server.key')
  if (!existsSync(cert) || (pfx === undefined && !existsSync(key))) {
    throw new Error(`--tls: ${cert} or ${key} is missing; run \`npm run certs\` (or pass --cert and --key, or --pfx)`)
  }
  const options = () =>
    pfx !== undefined
      ? { pfx: readFileSync(pfx), passphrase: process.env.PFX_PASSPHRASE, ALPNProtocols: alpn }
      : { cert: readFileSync(cert), key: readFileSync(key), ALPNProtocols: alpn }
  const ctx = SslContext.forServer(options())
  process.on('SIGHUP', () => {
    try {
      ctx.reload(options())
      console.error(`tls: reloaded ${cert}`)
    } catch (e) {
      console.error(`tls: reload failed, serving the previous certificate: ${(e as Error).message}`)
    }
  })
  return ctx
}

/** `init` with an SslHandler of `ctx` first (or `init` itself without a context). */
export function withTls(ctx: SslContext | undefined, init: (ch: Channel) => void): (ch: Channel) => void {
  if (!ctx) return init
  return (ch) => {
    ch.pipeline.addFirst('tls', new SslHandler(ctx))
    init(ch)
  }
}

/** Contexts whose workers use them by id: kept alive for the life of the process. */
const sharedWithWorkers: SslContext[] = []

/** What the workers get as `workerData.tls`: the context, crossing as its id (none without one). */
export function tlsForWorkers(ctx: SslContext | undefined): SharedSslContext | undefined {
  if (!ctx) return undefined
  sharedWithWorkers.push(ctx)
  return { netloopSslContext: ctx.netloopSslContext }
}

let workerContext: SslContext | undefined

/**
 * On a worker thread of a `--tls --threads N` run: adds an SslHandler first, from the context the
 * main thread passed in `workerData.tls`. Does nothing on the main thread (runExample adds it
 * there) or without `--tls`. Every handler module's `childHandler` calls it first.
 */
export function addWorkerTls(ch: Channel): void {
  if (isMainThread) return
  const shared = (workerData as { tls?: SharedSslContext } | undefined)?.tls
  if (!shared) return
  workerContext ??= new SslContext(shared)
  ch.pipeline.addFirst('tls', new SslHandler(workerContext))
}
