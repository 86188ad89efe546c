import { NativeHandler } from './codecs';
import { type HAProxySsl } from './haproxy-tlv';
export { HAProxyTlvType, type HAProxySsl } from './haproxy-tlv';
/** The client connection's family and transport, by HAProxy's names. */
export type HAProxyProtocol = 'UNKNOWN' | 'TCP4' | 'TCP6' | 'UDP4' | 'UDP6' | 'UNIX_STREAM' | 'UNIX_DGRAM';
/** A version 2 extension (type-length-value), raw. */
export interface HAProxyTlv {
    /** `HAProxyTlvType`: `0x01` ALPN, `0x02` authority (the client's SNI), `0x20` SSL, ... */
    readonly type: number;
    readonly value: Buffer;
}
/** A decoded PROXY protocol header (Netty's `HAProxyMessage`). */
export declare class HAProxyMessage {
    /** The header's form: 1 (text) or 2 (binary). */
    readonly version: 1 | 2;
    /** `'PROXY'`: a client's connection relayed; `'LOCAL'`: the proxy's own (a health check), no addresses. */
    readonly command: 'PROXY' | 'LOCAL';
    readonly protocol: HAProxyProtocol;
    /** The client's IP address (or Unix socket path); undefined for `LOCAL` and `UNKNOWN`. */
    readonly sourceAddress: string | undefined;
    readonly sourcePort: number | undefined;
    /** The address the client connected to, on the proxy. */
    readonly destinationAddress: string | undefined;
    readonly destinationPort: number | undefined;
    /** Version 2 extensions, in order (empty for version 1). */
    readonly tlvs: readonly HAProxyTlv[];
    /** The value of the first TLV of `type`, if any (`HAProxyTlvType` names them). */
    tlv(type: number): Buffer | undefined;
    /** The application protocol the client negotiated with the proxy (ALPN), e.g. `'h2'`. */
    get alpn(): string | undefined;
    /** The host name the client asked the proxy for (TLS SNI or HTTP Host). */
    get authority(): string | undefined;
    /** The proxy's id of the connection (HAProxy's `unique-id-format`). */
    get uniqueId(): Buffer | undefined;
    /** The TLS the proxy terminated: version, cipher, the client certificate's CN and verdict. */
    get ssl(): HAProxySsl | undefined;
    /** The network namespace the connection came from. */
    get netns(): string | undefined;
    /** AWS (NLB with PrivateLink): the VPC endpoint the client came through. */
    get awsVpcEndpointId(): string | undefined;
    /** Azure Private Link: the link id of the private endpoint the client came through. */
    get azureLinkId(): number | undefined;
    /** Google Cloud Private Service Connect: the connection id. */
    get gcpPscConnectionId(): bigint | undefined;
    /**
     * A relayed TCP connection from `source` (the client) to `destination` (where it connected,
     * on the proxy): what a proxy tells its backend, e.g.
     * `HAProxyMessage.tcp(inbound.remoteAddress!, inbound.localAddress!)`. Both ends IPv4 or both
     * IPv6 (an IPv4-mapped IPv6 address counts as IPv6).
     */
    static tcp(source: {
        address: string;
        port: number;
    }, destination: {
        address: string;
        port: number;
    }, tlvs?: readonly HAProxyTlv[]): HAProxyMessage;
    /** A proxy's own connection (a health check): no addresses. */
    static local(): HAProxyMessage;
    /**
     * The header's bytes (Netty's `HAProxyMessageEncoder`), in version 2 (binary, the default) or
     * 1 (text: TCP without TLVs). Write them first on the connection to the backend. Encoded
     * natively; what a version cannot hold throws `ERR_ENCODER`. A `CRC32C` TLV (4 bytes, any
     * value) gets the header's checksum.
     */
    encode(version?: 1 | 2): Buffer;
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
    optional?: boolean;
}
/**
 * Reads the PROXY protocol header (version 1 or 2) at the start of each connection and fires
 * it as an `HAProxyMessage` user event (Netty's `HAProxyMessageDecoder`). Add it first, before
 * an `SslHandler`: the header precedes the TLS handshake. Runs natively.
 */
export declare class HAProxyMessageDecoder extends NativeHandler {
    #private;
    constructor(options?: HAProxyDecoderOptions);
}
