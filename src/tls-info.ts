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
  /** The cipher suite (`getCipher()`). */
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
 * The peer's certificate as node:tls's `getPeerCertificate()` describes it: every field its
 * `PeerCertificate` type requires, so node's own `tls.checkServerIdentity(host, cert)` takes
 * it as is. (Not given: `infoAccess`, and the key's `bits`/`modulus`/`pubkey`, which node:tls
 * fills per key type.)
 */
export interface PeerCertificate {
  /** True for a CA certificate. */
  ca: boolean
  subject: Record<string, string>
  issuer: Record<string, string>
  subjectaltname: string | undefined
  valid_from: string
  valid_to: string
  serialNumber: string
  /** SHA-1, SHA-256 and SHA-512 fingerprints, `:`-separated hex. */
  fingerprint: string
  fingerprint256: string
  fingerprint512: string
  /** Extended key usage OIDs, if the certificate lists them. */
  ext_key_usage?: string[]
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

function peerCertificate(raw: Buffer): PeerCertificate {
  const x = new X509Certificate(raw)
  return {
    ca: x.ca,
    subject: names(x.subject),
    issuer: names(x.issuer),
    subjectaltname: x.subjectAltName,
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

/** The last session read of each channel (read at the latest when it closes): `channel.tls`
 * stays readable after the close, as node:tls's getters do on a closed socket. Nothing is kept
 * per idle connection. */
const sessions = new WeakMap<Channel, TlsInfo>()

/** @internal `channel.tls`. */
export function tlsInfo(ch: Channel): TlsInfo | undefined {
  if (!ch._known) return sessions.get(ch)
  let s: ReturnType<typeof ch._hub.native.tlsSession>
  try {
    ch._hub.sync()
    s = ch._hub.native.tlsSession(ch.id)
  } catch {
    return sessions.get(ch)
  }
  if (!s) return sessions.get(ch)
  const info = toInfo(ch, s)
  sessions.set(ch, info)
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
  return {
    protocol: s.protocol,
    cipher: { name: s.cipher, standardName: s.cipher, version: s.protocol },
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
  }
}
