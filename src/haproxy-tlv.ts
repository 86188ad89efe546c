/**
 * What a PROXY protocol version 2 header's TLVs say, by the specification's types and the
 * cloud load balancers' own (crates/codec/src/haproxy/tlv.rs reads the same for Rust users):
 * the views `HAProxyMessage` gives over its raw `tlvs`. A value that breaks its type's format
 * reads as absent, and only the first TLV of a type counts.
 */

/** TLV types: the specification's (section 2.2) and the cloud load balancers'. */
export const HAProxyTlvType = {
  /** The application protocol the client negotiated (ALPN). */
  ALPN: 0x01,
  /** The host name the client asked for (TLS SNI or HTTP Host). */
  AUTHORITY: 0x02,
  /** The header's CRC32C: checked by the decoder, filled in by `encode()`. */
  CRC32C: 0x03,
  NOOP: 0x04,
  /** An opaque id of the connection. */
  UNIQUE_ID: 0x05,
  /** The TLS the proxy terminated. */
  SSL: 0x20,
  SSL_VERSION: 0x21,
  SSL_CN: 0x22,
  SSL_CIPHER: 0x23,
  SSL_SIG_ALG: 0x24,
  SSL_KEY_ALG: 0x25,
  /** The network namespace. */
  NETNS: 0x30,
  /** Google Cloud Private Service Connect: the connection id. */
  GCP: 0xe0,
  /** AWS (NLB, PrivateLink): subtype 0x01, the VPC endpoint id. */
  AWS: 0xea,
  /** Azure Private Link: subtype 0x01, the link id. */
  AZURE: 0xee,
} as const

/** The TLS a proxy terminated in front of this server (the SSL TLV). */
export interface HAProxySsl {
  /** The client flags: 0x01 TLS, 0x02 a certificate on this connection, 0x04 in this session. */
  readonly client: number
  /** The proxy's verification of the client certificate: 0 when it verified. */
  readonly verify: number
  /** True if the client connected over TLS. */
  readonly tls: boolean
  /** True if the client presented a certificate on this connection and the proxy verified it. */
  readonly verifiedCertificate: boolean
  /** The TLS version, e.g. `'TLSv1.3'`. */
  readonly version: string | undefined
  /** The client certificate's subject CN. */
  readonly cn: string | undefined
  readonly cipher: string | undefined
  /** The client certificate's signature and key algorithms. */
  readonly sigAlg: string | undefined
  readonly keyAlg: string | undefined
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** `v` as UTF-8 text, or undefined if it is absent or not UTF-8. */
export function tlvText(v: Buffer | undefined): string | undefined {
  if (v === undefined) return undefined
  try {
    return utf8.decode(v)
  } catch {
    return undefined
  }
}

/** The (type, value) entries of `b`; undefined if one is cut short. */
function entries(b: Buffer): Array<[number, Buffer]> | undefined {
  const out: Array<[number, Buffer]> = []
  let at = 0
  while (at < b.length) {
    if (at + 3 > b.length) return undefined
    const len = b.readUInt16BE(at + 1)
    if (at + 3 + len > b.length) return undefined
    out.push([b[at], b.subarray(at + 3, at + 3 + len)])
    at += 3 + len
  }
  return out
}

/** Reads an SSL TLV's value; undefined if it breaks the format. */
export function parseSsl(v: Buffer | undefined): HAProxySsl | undefined {
  if (v === undefined || v.length < 5) return undefined
  const subs = entries(v.subarray(5))
  if (subs === undefined) return undefined
  const sub = (type: number) => {
    const found = subs.find(([t]) => t === type)
    return found === undefined ? undefined : found[1].toString('utf8')
  }
  const client = v[0]
  const verify = v.readUInt32BE(1)
  return {
    client,
    verify,
    tls: (client & 0x01) !== 0,
    verifiedCertificate: (client & 0x02) !== 0 && verify === 0,
    version: sub(HAProxyTlvType.SSL_VERSION),
    cn: sub(HAProxyTlvType.SSL_CN),
    cipher: sub(HAProxyTlvType.SSL_CIPHER),
    sigAlg: sub(HAProxyTlvType.SSL_SIG_ALG),
    keyAlg: sub(HAProxyTlvType.SSL_KEY_ALG),
  }
}

/** AWS: the VPC endpoint id of an AWS TLV (subtype 0x01). */
export function awsVpcEndpointId(v: Buffer | undefined): string | undefined {
  return v !== undefined && v.length > 1 && v[0] === 0x01 ? tlvText(v.subarray(1)) : undefined
}

/** Azure: the link id of an Azure TLV (subtype 0x01, little-endian). */
export function azureLinkId(v: Buffer | undefined): number | undefined {
  return v !== undefined && v.length === 5 && v[0] === 0x01 ? v.readUInt32LE(1) : undefined
}

/** Google Cloud: the Private Service Connect connection id (8 bytes, big-endian). */
export function gcpPscConnectionId(v: Buffer | undefined): bigint | undefined {
  return v !== undefined && v.length === 8 ? v.readBigUInt64BE(0) : undefined
}
