/**
 * What a TLS context serves and presents: certificate chains and keys, as PEM (one, or node:tls's
 * `key` and `cert` arrays), as PKCS#12 files (`pfx`: one, or a server's array), and per host name
 * (`SNI` entries). The checks throw `NetloopError`s with Node's codes; the native side pairs
 * keys with chains and opens the files (crates/node/src/tls.rs).
 */
import { NetloopError, invalidArg, invalidArgType } from './errors'

export type Pem = string | Buffer | Array<string | Buffer>

/** A certificate chain and key for one host name: PEM `cert` and `key`, or a PKCS#12 `pfx`. */
export type SslIdentity = PemIdentity | PfxIdentity

/** A certificate chain and key (PEM) for one host name. */
export interface PemIdentity {
  cert: Pem
  key: string | Buffer
  /** The passphrase of `key` if it is encrypted (default: the context's `passphrase`). */
  passphrase?: string
  /** A DER OCSP response for `cert`, stapled for clients that ask (see `ocspResponse`). */
  ocspResponse?: Buffer
}

/** A certificate chain and key in a PKCS#12 file, for one host name. */
export interface PfxIdentity {
  /** The PKCS#12 file (see the context's `pfx`). */
  pfx: Buffer
  /** Its passphrase (default: the context's `passphrase`). */
  passphrase?: string
  /** A DER OCSP response for its certificate, stapled for clients that ask. */
  ocspResponse?: Buffer
}

/** A PKCS#12 file with its own passphrase (node:tls's `pfx` entries). */
export interface PfxObject {
  buf: Buffer
  passphrase?: string
}

/** PEM text (a string, a Buffer, or an array of either) as one Buffer, entries on lines of their own. */
export function pem(name: string, v: Pem | undefined): Buffer | undefined {
  if (v === undefined) return undefined
  const parts = Array.isArray(v) ? v : [v]
  const bufs = parts.map((p) => {
    if (typeof p === 'string') return Buffer.from(p)
    if (Buffer.isBuffer(p)) return p
    throw invalidArgType(name, 'string, Buffer or an array of them', p)
  })
  return Buffer.concat(bufs.flatMap((b) => [b, Buffer.from('\n')]))
}

/** One of node:tls's `key` array with a passphrase of its own. */
export interface KeyObjectPem {
  pem: string | Buffer
  passphrase?: string
}

/** node:tls's `key` array and `cert` array: the keys, and one chain per key (`undefined`: one key). */
export function keysAndChains(key: string | Buffer | Array<string | Buffer | KeyObjectPem> | undefined, cert: Pem | undefined, isServer: boolean) {
  if (!Array.isArray(key)) return undefined
  if (!isServer) throw invalidArg('a key array is an option of server contexts (isServer: true): a client presents one certificate')
  const keys = key.map((k, i) => {
    const name = `key[${i}]`
    if (typeof k === 'string' || Buffer.isBuffer(k)) return { pem: pem(name, k)! }
    if (k === null || typeof k !== 'object') throw invalidArgType(name, 'string, Buffer or { pem, passphrase }', k)
    if (k.passphrase !== undefined && typeof k.passphrase !== 'string') throw invalidArgType(`${name}.passphrase`, 'string', k.passphrase)
    return { pem: pem(`${name}.pem`, k.pem)!, passphrase: k.passphrase }
  })
  const certs = (Array.isArray(cert) ? cert : cert === undefined ? [] : [cert]).map((c, i) => pem(`cert[${i}]`, c)!)
  return { keys, certs }
}

/** The native side's `SNI` entries: each host name with its PEM chain and key or its PKCS#12 file. */
export function sniIdentities(entries: Record<string, SslIdentity> | undefined) {
  if (entries === undefined) return undefined
  return Object.entries(entries).map(([hostname, id]) => {
    const name = `SNI['${hostname}']`
    if (id === null || typeof id !== 'object') throw invalidArgType(name, 'object', id)
    const p = id as Partial<PemIdentity & PfxIdentity>
    if (p.passphrase !== undefined && typeof p.passphrase !== 'string') throw invalidArgType(`${name}.passphrase`, 'string', p.passphrase)
    return {
      hostname,
      cert: pem(`${name}.cert`, p.cert),
      key: pem(`${name}.key`, p.key),
      pfx: p.pfx === undefined ? undefined : der(`${name}.pfx`, p.pfx),
      passphrase: p.passphrase,
      ocspResponse: der(`${name}.ocspResponse`, p.ocspResponse),
    }
  })
}

/** The PKCS#12 files of `pfx` (node:tls's forms: a Buffer, `{ buf, passphrase }`, an array of either). */
export function pfxFiles(v: Buffer | PfxObject | Array<Buffer | PfxObject> | undefined, isServer: boolean): PfxObject[] | undefined {
  if (v === undefined) return undefined
  const all = Array.isArray(v) ? v : [v]
  if (all.length === 0) throw new NetloopError('ERR_INVALID_ARG_VALUE', "The property 'options.pfx' must hold at least one PKCS#12 file. Received []")
  if (all.length > 1 && !isServer) throw invalidArg('a pfx array is an option of server contexts (isServer: true): a client presents one certificate')
  return all.map((one, i) => {
    const name = all.length > 1 ? `pfx[${i}]` : 'pfx'
    if (Buffer.isBuffer(one)) return { buf: der(name, one)! }
    if (one === null || typeof one !== 'object') throw invalidArgType(name, 'Buffer or { buf, passphrase }', one)
    if (one.passphrase !== undefined && typeof one.passphrase !== 'string') throw invalidArgType(`${name}.passphrase`, 'string', one.passphrase)
    return { buf: der(`${name}.buf`, one.buf)!, passphrase: one.passphrase }
  })
}

export function der(name: string, v: unknown): Buffer | undefined {
  if (v === undefined) return undefined
  if (!Buffer.isBuffer(v) || v.length === 0) throw invalidArgType(name, 'a non-empty Buffer (DER)', v)
  return v
}
