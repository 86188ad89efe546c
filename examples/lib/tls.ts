// `--tls` for the example servers: TLS in front of the example's own pipeline.
//
//   --tls             serve TLS with certs/server.pem and certs/server.key (make them, and the
//                     test CA certs/ca.pem that clients trust, with `npm run certs`)
//   --cert F --key F  another certificate chain and key (PEM)
//
// The context is parsed once; every connection gets its own SslHandler, added first, so the
// example's decoders and handlers behind it read and write plaintext unchanged.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Channel, SslContext, SslHandler } from '../../index'
import { arg } from './server'

/** The directory `npm run certs` writes to. */
export const CERTS_DIR = join(__dirname, '..', '..', 'certs')

/** The server context `--tls` asks for, or undefined without `--tls`. */
export function tlsContextArg(alpn?: string[]): SslContext | undefined {
  if (!process.argv.includes('--tls')) return undefined
  const cert = arg('--cert') ?? join(CERTS_DIR, 'server.pem')
  const key = arg('--key') ?? join(CERTS_DIR, 'server.key')
  if (!existsSync(cert) || !existsSync(key)) {
    throw new Error(`--tls: ${cert} or ${key} is missing; run \`npm run certs\` (or pass --cert and --key)`)
  }
  return SslContext.forServer({ cert: readFileSync(cert), key: readFileSync(key), ALPNProtocols: alpn })
}

/** `init` with an SslHandler of `ctx` first (or `init` itself without a context). */
export function withTls(ctx: SslContext | undefined, init: (ch: Channel) => void): (ch: Channel) => void {
  if (!ctx) return init
  return (ch) => {
    ch.pipeline.addFirst('tls', new SslHandler(ctx))
    init(ch)
  }
}
