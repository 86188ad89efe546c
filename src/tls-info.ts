/**
 * `channel.tls`: what a TLS channel's handshake negotiated, read from the native session and
 * kept after the close (node:tls's `TLSSocket` getters, in one object).
 */
import { X509Certificate } from 'node:crypto'
import type { Channel } from './channel'
import { NetloopError, checkInteger, fromNative, invalidArgType } from './errors'

/** What a completed handshake negotiated (node:tls's `TLSSocket` getters, in one object). */
export interface TlsInfo {
  /** `'TLSv1.2'` or `'TLSv1.3'` (`getProtocol()`). */
  protocol: string
  /**
   * The cipher suite (`getCipher()`): `name` is OpenSSL's (`ECDHE-RSA-AES128-GCM-SHA256`),
   * `standardName` IANA's (`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`); TLS 1.3 suites have one.
   */
  cipher: { name: string; standardName: string; version: string }
  /** The ALPN protocol agreed on, or false (`alpnProtocol`). */
  alpnProtocol: string | false
  /** Server: the name the client asked for (SNI); client: the name verified. */
  servername: string | false
  /** The peer's certificate verified (`authorized`). */
  authorized: boolean
  /** Why not (`authorizationError`). */
  authorizationError: NetloopError | undefined
  /** This handshake resumed a session (`isSessionReused()`). */
  resumed: boolean
  /**
   * The key exchange (`getEphemeralKeyInfo()`): `{ type: 'ECDH', name: 'X25519', size: 253 }`,
   * names as OpenSSL's (`X25519`, `prime256v1`, `secp384r1`). On both ends (node:tls gives an
   * empty object on servers).
   */
  ephemeralKeyInfo: { type: 'ECDH'; name: string; size: number } | undefined
  /** The peer's chain (DER, leaf first). */
  peerCertificateChain: Buffer[]
  /** The peer's leaf certificate, parsed (like `getPeerCertificate()`); undefined if none. */
  readonly peerCertificate: PeerCertificate | undefined
  /** The peer's leaf certificate as node's `X509Certificate` (`getPeerX509Certificate()`). */
  readonly peerX509Certificate: X509Certificate | undefined
  /**
   * Client: the DER OCSP response the server stapled to its certificate, as received (what
   * node:tls's `'OCSPResponse'` event gives with `requestOCSP`); undefined if it stapled
   * none. A netloop client always asks for one; checking it (e.g. with `openssl ocsp` or an
   * OCSP library, against the certificate and its issuer) is the application's.
   */
  ocspResponse: Buffer | undefined
  /**
   * `length` bytes of keying material exported from the session under `label` (and
   * `context`), the same on both ends and known to no one else (node:tls's
   * `exportKeyingMaterial`; RFC 5705, RFC 8446 §7.5): what channel bindings such as
   * `tls-exporter` (RFC 9266) are made of. Throws `ERR_TLS_INVALID_STATE` once the channel
   * closed.
   */
  exportKeyingMaterial(length: number, label: string, context?: Buffer): Buffer
}

/**
 * The peer's certificate as node:tls's `getPeerCertificate()` describes it, field for field:
 * node's own `tls.checkServerIdentity(host, cert)` takes it as is, and the key's fields are
 * filled per key type as node:tls fills them (RSA: `bits`, `modulus`, `exponent`, `pubkey`
 * as SubjectPublicKeyInfo DER; EC: `bits`, `pubkey` as the uncompressed point, `asn1Curve`,
 * `nistCurve`; other keys: none), so pinning by `pubkey` works the same.
 */
export interface PeerCertificate {
  /** True for a CA certificate. */
  ca: boolean
  subject: Record<string, string>
  issuer: Record<string, string>
  /** The subject alternative names (`'DNS:localhost, IP Address:127.0.0.1'`), if any. */
  subjectaltname?: string
  valid_from: string
  valid_to: string
  serialNumber: string
  /** SHA-1, SHA-256 and SHA-512 fingerprints, `:`-separated hex. */
  fingerprint: string
  fingerprint256: string
  fingerprint512: string
  /** Extended key usage OIDs, if the certificate lists them. */
  ext_key_usage?: string[]
  /** Authority information access (`'OCSP - URI'`, `'CA Issuers - URI'`), if present. */
  infoAccess?: Record<string, string[]>
  /** The public key's size in bits (RSA, EC). */
  bits?: number
  /** RSA: the modulus, upper-case hex. */
  modulus?: string
  /** RSA: the public exponent, `'0x10001'`. */
  exponent?: string
  /** RSA: the SubjectPublicKeyInfo, DER; EC: the public point, uncompressed. */
  pubkey?: Buffer
  /** EC: the curve's OpenSSL name (`'prime256v1'`). */
  asn1Curve?: string
  /** EC: the curve's NIST name (`'P-256'`), for NIST curves. */
  nistCurve?: string
  /** The certificate, DER (never over shared memory: node's type says so). */
  raw: Buffer<ArrayBuffer>
}

function names(dn: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of dn.split('\n')) {
    const i = line.indexOf('=')
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1)
  }
  return out
}

/** Authority information access lines (`OCSP - URI:http://...`) by method, as node:tls splits them. */
function infoAccess(text: string | undefined): Record<string, string[]> | undefined {
  if (!text) return undefined
  const out: Record<string, string[]> = Object.create(null)
  for (const line of text.split('\n')) {
    const i = line.indexOf(':')
    if (i <= 0) continue
    let value = line.slice(i + 1)
    if (value.startsWith('"')) value = JSON.parse(value) as string // node:tls's escaping of odd names
    ;(out[line.slice(0, i)] ??= []).push(value)
  }
  return out
}

const CURVE_BITS: Record<string, number> = { prime256v1: 256, secp384r1: 384, secp521r1: 521, secp256k1: 256 }
const NIST_NAMES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' }

/** The key's fields of `getPeerCertificate()`, per key type as node:tls fills them. */
function keyFields(x: X509Certificate): Partial<PeerCertificate> {
  const key = x.publicKey
  const details = key.asymmetricKeyDetails ?? {}
  if (key.asymmetricKeyType === 'rsa') {
    const jwk = key.export({ format: 'jwk' })
    return {
      bits: details.modulusLength,
      modulus: Buffer.from(jwk.n ?? '', 'base64url').toString('hex').toUpperCase().replace(/^0+(?=.)/, ''),
      exponent: `0x${(details.publicExponent ?? 0n).toString(16)}`,
      pubkey: key.export({ type: 'spki', format: 'der' }),
    }
  }
  if (key.asymmetricKeyType === 'ec') {
    const jwk = key.export({ format: 'jwk' })
    const curve = details.namedCurve ?? ''
    const xy = [jwk.x, jwk.y].map((c) => Buffer.from(c ?? '', 'base64url'))
    return {
      bits: CURVE_BITS[curve] ?? xy[0].length * 8,
      pubkey: Buffer.concat([Buffer.from([4]), xy[0], xy[1]]),
      asn1Curve: curve,
      ...(NIST_NAMES[curve] ? { nistCurve: NIST_NAMES[curve] } : {}),
    }
  }
  return {}
}

/**
 * From Node 24 `getPeerCertificate()` has every field, in this order, those a certificate lacks
 * set to `undefined` (an EC key's `modulus` and `exponent`, a certificate without authority
 * information access's `infoAccess`); before, it left them out. peerCertificate follows the
 * Node it runs on, so that a deep comparison with node:tls's object holds on every line.
 */
const EVERY_FIELD: ReadonlyArray<keyof PeerCertificate> | undefined =
  Number(process.versions.node.split('.')[0]) >= 24
    ? ['subject', 'issuer', 'subjectaltname', 'infoAccess', 'ca', 'modulus', 'exponent', 'pubkey', 'bits', 'valid_from',
        'valid_to', 'fingerprint', 'fingerprint256', 'fingerprint512', 'ext_key_usage', 'serialNumber', 'raw', 'asn1Curve', 'nistCurve']
    : undefined

function peerCertificate(raw: Buffer): PeerCertificate {
  const fields = certificateFields(raw)
  if (!EVERY_FIELD) return fields
  const out: Record<string, unknown> = {}
  for (const key of EVERY_FIELD) out[key] = fields[key]
  return out as unknown as PeerCertificate
}

function certificateFields(raw: Buffer): PeerCertificate {
  const x = new X509Certificate(raw)
  const access = infoAccess(x.infoAccess)
  return {
    ...keyFields(x),
    ...(access ? { infoAccess: access } : {}),
    ca: x.ca,
    subject: names(x.subject),
    issuer: names(x.issuer),
    ...(x.subjectAltName !== undefined ? { subjectaltname: x.subjectAltName } : {}),
    valid_from: x.validFrom,
    valid_to: x.validTo,
    serialNumber: x.serialNumber,
    fingerprint: x.fingerprint,
    fingerprint256: x.fingerprint256,
    fingerprint512: x.fingerprint512,
    ...(x.keyUsage ? { ext_key_usage: x.keyUsage } : {}),
    raw: raw as Buffer<ArrayBuffer>,
  }
}

/** @internal `channel.tls`. The last session read is kept in `ch._tlsInfo` (read at the latest
 * when the channel closes): `channel.tls` stays readable after the close, as node:tls's getters
 * do on a closed socket. */
export function tlsInfo(ch: Channel): TlsInfo | undefined {
  if (!ch._known) return ch._tlsInfo
  let s: ReturnType<typeof ch._hub.native.tlsSession>
  try {
    ch._hub.sync()
    s = ch._hub.native.tlsSession(ch.id)
  } catch {
    return ch._tlsInfo
  }
  if (!s) return ch._tlsInfo
  const info = toInfo(ch, s)
  ch._tlsInfo = info
  return info
}

/** node:tls's `exportKeyingMaterial` for channel `ch`, its arguments checked as node:tls checks them. */
function exportKeyingMaterial(ch: Channel, length: number, label: string, context?: Buffer): Buffer {
  checkInteger('length', length, 1, 8160)
  if (typeof label !== 'string') throw invalidArgType('label', 'string', label)
  if (context !== undefined && !Buffer.isBuffer(context)) throw invalidArgType('context', 'Buffer', context)
  if (!ch._known || !ch.isOpen) throw new NetloopError('ERR_TLS_INVALID_STATE', `exportKeyingMaterial: channel ${ch.id} is closed`)
  try {
    return ch._hub.native.tlsExportKeyingMaterial(ch.id, length, label, context)
  } catch (e) {
    throw fromNative(e)
  }
}

function toInfo(ch: Channel, s: NonNullable<ReturnType<Channel['_hub']['native']['tlsSession']>>): TlsInfo {
  let parsed: PeerCertificate | undefined | null = null
  let x509: X509Certificate | undefined | null = null
  return {
    protocol: s.protocol,
    cipher: { name: s.cipherName, standardName: s.cipher, version: s.protocol },
    alpnProtocol: s.alpnProtocol ?? false,
    servername: s.servername ?? false,
    authorized: s.authorized,
    authorizationError: s.authorizationErrorCode ? new NetloopError(s.authorizationErrorCode, s.authorizationError ?? '') : undefined,
    resumed: s.resumed,
    ephemeralKeyInfo: s.keyExchangeName ? { type: 'ECDH', name: s.keyExchangeName, size: s.keyExchangeBits ?? 0 } : undefined,
    peerCertificateChain: s.peerCertificates,
    ocspResponse: s.ocspResponse ?? undefined,
    exportKeyingMaterial: (length, label, context) => exportKeyingMaterial(ch, length, label, context),
    get peerCertificate() {
      if (parsed === null) parsed = s.peerCertificates.length > 0 ? peerCertificate(s.peerCertificates[0]) : undefined
      return parsed
    },
    get peerX509Certificate() {
      if (x509 === null) x509 = s.peerCertificates.length > 0 ? new X509Certificate(s.peerCertificates[0]) : undefined
      return x509
    },
  }
}
