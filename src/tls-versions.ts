/**
 * node:tls's version options beside `minVersion`/`maxVersion` (`secureProtocol`, the version
 * bits of `secureOptions`), and the node:tls options netloop refuses rather than ignores.
 */
import { NetloopError, checkInteger, invalidArg, invalidArgType } from './errors'
import type { SslContextOptions } from './tls-options'

/** node:tls options netloop cannot honour: refused rather than ignored (a hardening option ignored in silence is worse than an error). */
const REFUSED: Record<string, string> = {
  privateKeyEngine: 'OpenSSL engines do not exist in rustls; give the key (`key`, `pfx`)',
  privateKeyIdentifier: 'OpenSSL engines do not exist in rustls; give the key (`key`, `pfx`)',
  clientCertEngine: 'OpenSSL engines do not exist in rustls; give the client certificate (`cert`, `key`)',
}

const METHODS: Record<string, [string | undefined, string | undefined]> = {
  TLS_method: [undefined, undefined],
  SSLv23_method: [undefined, undefined],
  TLSv1_2_method: ['TLSv1.2', 'TLSv1.2'],
  TLSv1_3_method: ['TLSv1.3', 'TLSv1.3'],
}

/** @internal `minVersion`/`maxVersion` after node:tls's `secureProtocol` and `secureOptions`. */
export function versionRange(o: SslContextOptions): [string | undefined, string | undefined] {
  let range: [string | undefined, string | undefined] = [o.minVersion, o.maxVersion]
  if (o.secureProtocol !== undefined) {
    if (typeof o.secureProtocol !== 'string') throw invalidArgType('secureProtocol', 'string', o.secureProtocol)
    const method = METHODS[o.secureProtocol.replace(/_(server|client)_method$/, '_method')]
    if (!method) {
      throw new NetloopError('ERR_TLS_INVALID_PROTOCOL_METHOD', `Invalid protocol method ${JSON.stringify(o.secureProtocol)}: netloop speaks TLS 1.2 and 1.3 (TLSv1_2_method, TLSv1_3_method, TLS_method)`)
    }
    const given = o.minVersion ?? o.maxVersion
    if (given !== undefined) throw new NetloopError('ERR_TLS_PROTOCOL_VERSION_CONFLICT', `TLS protocol version ${given} conflicts with secureProtocol ${o.secureProtocol}`)
    range = method
  }
  if (o.secureOptions !== undefined) {
    const n = checkInteger('secureOptions', o.secureOptions, 0, Number.MAX_SAFE_INTEGER)
    const noTls12 = Math.floor(n / SSL_OP_NO_TLSv1_2) % 2 === 1
    const noTls13 = Math.floor(n / SSL_OP_NO_TLSv1_3) % 2 === 1
    if (noTls12 && noTls13) throw invalidArg('secureOptions disables both TLS 1.2 and TLS 1.3: no version is left')
    if (noTls12) range = ['TLSv1.3', range[1]]
    if (noTls13) range = [range[0], 'TLSv1.2']
  }
  return range
}
const SSL_OP_NO_TLSv1_2 = 0x08000000
const SSL_OP_NO_TLSv1_3 = 0x20000000

/** @internal Throws for a node:tls option netloop cannot honour. */
export function refuseUnsupported(o: SslContextOptions): void {
  for (const [name, why] of Object.entries(REFUSED)) {
    if ((o as Record<string, unknown>)[name] !== undefined) throw new NetloopError('ERR_TLS_OPTION_NOT_SUPPORTED', `${name}: ${why}`)
  }
}
