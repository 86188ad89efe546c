/**
 * The PROXY protocol (HAProxy's, versions 1 and 2): `HAProxyMessageDecoder`, a native handler
 * added first in a pipeline behind a proxy or load balancer that sends the header, and
 * `HAProxyMessage`, what it says about the client (Netty's `codec-haproxy`).
 *
 * ```ts
 * new ServerBootstrap().group(loop).childHandler((ch) => {
 *   ch.pipeline.addLast('proxy', new HAProxyMessageDecoder()).addLast('tls', new SslHandler(tls)).addLast('app', app)
 * })
 * // in a handler: ctx.channel.haproxy?.sourceAddress is the client's address
 * ```
 *
 * Ground rules: the message arrives once per channel, as a user event every handler after the
 * decoder sees (Netty passes it as a read), and is readable as `channel.haproxy` from then on,
 * after the close too (read from the native decoder on first use and kept). A stream that
 * does not start with a valid header fails with `ERR_HAPROXY_PROTOCOL` through
 * `exceptionCaught`, and the channel closes.
 */
import { isIP } from 'node:net'
import { native } from './binding'
import type { Channel } from './channel'
import { NativeHandler } from './codecs'
import { NetloopError, checkInteger, fromNative, invalidArg, invalidArgType } from './errors'
import { NativeHandlerKind } from './protocol'
import { HAProxyTlvType, type HAProxySsl, awsVpcEndpointId, azureLinkId, gcpPscConnectionId, parseSsl, tlvText } from './haproxy-tlv'

export { HAProxyTlvType, type HAProxySsl } from './haproxy-tlv'

/** The client connection's family and transport, by HAProxy's names. */
export type HAProxyProtocol = 'UNKNOWN' | 'TCP4' | 'TCP6' | 'UDP4' | 'UDP6' | 'UNIX_STREAM' | 'UNIX_DGRAM'

/** A version 2 extension (type-length-value), raw. */
export interface HAProxyTlv {
  /** `HAProxyTlvType`: `0x01` ALPN, `0x02` authority (the client's SNI), `0x20` SSL, ... */
  readonly type: number
  readonly value: Buffer
}

/** A decoded PROXY protocol header (Netty's `HAProxyMessage`). */
export class HAProxyMessage {
  /** @internal */
  constructor(
    /** The header's form: 1 (text) or 2 (binary). */
    readonly version: 1 | 2,
    /** `'PROXY'`: a client's connection relayed; `'LOCAL'`: the proxy's own (a health check), no addresses. */
    readonly command: 'PROXY' | 'LOCAL',
    readonly protocol: HAProxyProtocol,
    /** The client's IP address (or Unix socket path); undefined for `LOCAL` and `UNKNOWN`. */
    readonly sourceAddress: string | undefined,
    readonly sourcePort: number | undefined,
    /** The address the client connected to, on the proxy. */
    readonly destinationAddress: string | undefined,
    readonly destinationPort: number | undefined,
    /** Version 2 extensions, in order (empty for version 1). */
    readonly tlvs: readonly HAProxyTlv[],
  ) {}

  /** The value of the first TLV of `type`, if any (`HAProxyTlvType` names them). */
  tlv(type: number): Buffer | undefined {
    return this.tlvs.find((t) => t.type === type)?.value
  }

  /** The application protocol the client negotiated with the proxy (ALPN), e.g. `'h2'`. */
  get alpn(): string | undefined {
    return tlvText(this.tlv(HAProxyTlvType.ALPN))
  }

  /** The host name the client asked the proxy for (TLS SNI or HTTP Host). */
  get authority(): string | undefined {
    return tlvText(this.tlv(HAProxyTlvType.AUTHORITY))
  }

  /** The proxy's id of the connection (HAProxy's `unique-id-format`). */
  get uniqueId(): Buffer | undefined {
    return this.tlv(HAProxyTlvType.UNIQUE_ID)
  }

  /** The TLS the proxy terminated: version, cipher, the client certificate's CN and verdict. */
  get ssl(): HAProxySsl | undefined {
    return parseSsl(this.tlv(HAProxyTlvType.SSL))
  }

  /** The network namespace the connection came from. */
  get netns(): string | undefined {
    return tlvText(this.tlv(HAProxyTlvType.NETNS))
  }

  /** AWS (NLB with PrivateLink): the VPC endpoint the client came through. */
  get awsVpcEndpointId(): string | undefined {
    return awsVpcEndpointId(this.tlv(HAProxyTlvType.AWS))
  }

  /** Azure Private Link: the link id of the private endpoint the client came through. */
  get azureLinkId(): number | undefined {
    return azureLinkId(this.tlv(HAProxyTlvType.AZURE))
  }

  /** Google Cloud Private Service Connect: the connection id. */
  get gcpPscConnectionId(): bigint | undefined {
    return gcpPscConnectionId(this.tlv(HAProxyTlvType.GCP))
  }

  /**
   * A relayed TCP connection from `source` (the client) to `destination` (where it connected,
   * on the proxy): what a proxy tells its backend, e.g.
   * `HAProxyMessage.tcp(inbound.remoteAddress!, inbound.localAddress!)`. Both ends IPv4 or both
   * IPv6 (an IPv4-mapped IPv6 address counts as IPv6).
   */
  static tcp(source: { address: string; port: number }, destination: { address: string; port: number }, tlvs: readonly HAProxyTlv[] = []): HAProxyMessage {
    const family = (name: string, a: { address: string; port: number }) => {
      if (a === null || typeof a !== 'object') throw invalidArgType(name, 'object', a)
      checkInteger(`${name}.port`, a.port, 0, 65535)
      const f = isIP(a.address)
      if (f === 0) throw invalidArg(`The property '${name}.address' must be an IP address. Received ${String(a.address)}`)
      return f
    }
    const f = family('source', source)
    if (family('destination', destination) !== f) throw invalidArg('source and destination must both be IPv4 or both IPv6')
    return new HAProxyMessage(2, 'PROXY', f === 4 ? 'TCP4' : 'TCP6', source.address, source.port, destination.address, destination.port, checkTlvs(tlvs))
  }

  /** A proxy's own connection (a health check): no addresses. */
  static local(): HAProxyMessage {
    return new HAProxyMessage(2, 'LOCAL', 'UNKNOWN', undefined, undefined, undefined, undefined, [])
  }

  /**
   * The header's bytes (Netty's `HAProxyMessageEncoder`), in version 2 (binary, the default) or
   * 1 (text: TCP without TLVs). Write them first on the connection to the backend. Encoded
   * natively; what a version cannot hold throws `ERR_ENCODER`. A `CRC32C` TLV (4 bytes, any
   * value) gets the header's checksum.
   */
  encode(version: 1 | 2 = 2): Buffer {
    if (version !== 1 && version !== 2) throw invalidArg(`The argument 'version' must be 1 or 2. Received ${String(version)}`)
    if (this.command === 'PROXY' && this.protocol !== 'TCP4' && this.protocol !== 'TCP6') {
      throw new NetloopError('ERR_ENCODER', `cannot encode message: only TCP connections are encoded here, not ${this.protocol}`)
    }
    try {
      return native.encodeHaproxyHeader({
        version,
        local: this.command === 'LOCAL',
        sourceAddress: this.sourceAddress,
        sourcePort: this.sourcePort,
        destinationAddress: this.destinationAddress,
        destinationPort: this.destinationPort,
        tlvs: this.tlvs.map((t) => ({ kind: t.type, value: t.value })),
      })
    } catch (e) {
      throw e instanceof NetloopError ? e : fromNative(e)
    }
  }
}

function checkTlvs(tlvs: readonly HAProxyTlv[]): readonly HAProxyTlv[] {
  if (!Array.isArray(tlvs)) throw invalidArgType('tlvs', 'an array', tlvs)
  for (const t of tlvs) {
    if (t === null || typeof t !== 'object') throw invalidArgType('tlvs[i]', 'object', t)
    checkInteger('tlvs[i].type', t.type, 0, 255)
    if (!Buffer.isBuffer(t.value)) throw invalidArgType('tlvs[i].value', 'Buffer', t.value)
  }
  return tlvs.map((t) => ({ type: t.type, value: t.value }))
}

/** Options of `HAProxyMessageDecoder`. */
export interface HAProxyDecoderOptions {
  /**
   * Let streams without a header through (default false: they fail with
   * `ERR_HAPROXY_PROTOCOL`): for a port that both the proxy and direct clients reach. A stream
   * whose first bytes cannot start a header (decided within 12 bytes) passes through whole,
   * with no event and `channel.haproxy` undefined; one that starts a header is held to it.
   * Suits protocols where the client speaks first (HTTP, TLS, RESP).
   */
  optional?: boolean
}

/**
 * Reads the PROXY protocol header (version 1 or 2) at the start of each connection and fires
 * it as an `HAProxyMessage` user event (Netty's `HAProxyMessageDecoder`). Add it first, before
 * an `SslHandler`: the header precedes the TLS handshake. Runs natively.
 */
export class HAProxyMessageDecoder extends NativeHandler {
  #channel: Channel | undefined

  constructor(options: HAProxyDecoderOptions = {}) {
    if (options === null || typeof options !== 'object') throw invalidArgType('options', 'object', options)
    if (options.optional !== undefined && typeof options.optional !== 'boolean') throw invalidArgType('options.optional', 'boolean', options.optional)
    super(NativeHandlerKind.HAProxy, [options.optional ? 1 : 0])
  }

  /** @internal */
  override _attach(ch: Channel): void {
    this.#channel = ch
  }

  /** @internal Keeps the message for `channel.haproxy` (read while the native side has it). */
  override _onClosed(): void {
    if (this.#channel) haproxyOf(this.#channel)
  }
}

const optionalNumber = (s: string): number | undefined => (s === '' ? undefined : Number(s))

/** @internal `channel.haproxy`: kept (in `ch._haproxy`), or asked of the native decoder (and kept once there). */
export function haproxyOf(ch: Channel): HAProxyMessage | undefined {
  const kept = ch._haproxy
  if (kept || !ch._known) return kept
  let s: string[] | null | undefined
  try {
    ch._hub.sync()
    s = ch._hub.native.haproxyMessage(ch.id)
  } catch {
    return undefined
  }
  return s ? haproxyMessage(s, 0, ch) : undefined
}

/** @internal The message of a `UserEventKind.HAProxy` record: its strings from `at` (crates/wire/src/haproxy_wire.rs). */
export function haproxyMessage(strings: string[], at: number, ch: Channel | undefined): HAProxyMessage {
  const s = (i: number) => strings[at + i] ?? ''
  const tlvs = s(7) === '' ? [] : s(7).split(',').map((t) => {
    const i = t.indexOf(':')
    return { type: Number(t.slice(0, i)), value: Buffer.from(t.slice(i + 1), 'hex') }
  })
  const m = new HAProxyMessage(
    s(0) === '1' ? 1 : 2,
    s(1) === 'LOCAL' ? 'LOCAL' : 'PROXY',
    s(2) as HAProxyProtocol,
    s(3) === '' ? undefined : s(3),
    optionalNumber(s(4)),
    s(5) === '' ? undefined : s(5),
    optionalNumber(s(6)),
    tlvs,
  )
  if (ch) ch._haproxy = m
  return m
}
