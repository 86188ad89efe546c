/**
 * `channel.tls`: what a TLS channel's handshake negotiated, read from the native session and
 * kept after the close (node:tls's `TLSSocket` getters, in one object).
 */
import { X509Certificate } from 'node:crypto'
import type { Channel } from './channel'
import { NetloopError } from './errors'

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
  /** The peer's chain (DER, leaf first). */
  peerCertificateChain: Buffer[]
  /** The peer's leaf certificate, parsed (like `getPeerCertificate()`); undefined if none. */
  readonly peerCertificate: PeerCertificate | undefined
}

/** The fields of node:tls's `getPeerCertificate()` that users read most. */
export interface PeerCertificate {
  subject: Record<string, string>
  issuer: Record<string, string>
  subjectaltname: string | undefined
  valid_from: string
  valid_to: string
  serialNumber: string
  fingerprint256: string
  raw: Buffer
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
    subject: names(x.subject),
    issuer: names(x.issuer),
    subjectaltname: x.subjectAltName,
    valid_from: x.validFrom,
    valid_to: x.validTo,
    serialNumber: x.serialNumber,
    fingerprint256: x.fingerprint256,
    raw,
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
  const info = toInfo(s)
  sessions.set(ch, info)
  return info
}

function toInfo(s: NonNullable<ReturnType<Channel['_hub']['native']['tlsSession']>>): TlsInfo {
  let parsed: PeerCertificate | undefined | null = null
  return {
    protocol: s.protocol,
    cipher: { name: s.cipher, standardName: s.cipher, version: s.protocol },
    alpnProtocol: s.alpnProtocol ?? false,
    servername: s.servername ?? false,
    authorized: s.authorized,
    authorizationError: s.authorizationErrorCode ? new NetloopError(s.authorizationErrorCode, s.authorizationError ?? '') : undefined,
    resumed: s.resumed,
    peerCertificateChain: s.peerCertificates,
    get peerCertificate() {
      if (parsed === null) parsed = s.peerCertificates.length > 0 ? peerCertificate(s.peerCertificates[0]) : undefined
      return parsed
    },
  }
}
