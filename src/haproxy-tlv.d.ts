/**
 * What a PROXY protocol version 2 header's TLVs say, by the specification's types and the
 * cloud load balancers' own (crates/codec/src/haproxy/tlv.rs reads the same for Rust users):
 * the views `HAProxyMessage` gives over its raw `tlvs`. A value that breaks its type's format
 * reads as absent, and only the first TLV of a type counts.
 */
/** TLV types: the specification's (section 2.2) and the cloud load balancers'. */
export declare const HAProxyTlvType: {
    /** The application protocol the client negotiated (ALPN). */
    readonly ALPN: 1;
    /** The host name the client asked for (TLS SNI or HTTP Host). */
    readonly AUTHORITY: 2;
    /** The header's CRC32C: checked by the decoder, filled in by `encode()`. */
    readonly CRC32C: 3;
    readonly NOOP: 4;
    /** An opaque id of the connection. */
    readonly UNIQUE_ID: 5;
    /** The TLS the proxy terminated. */
    readonly SSL: 32;
    readonly SSL_VERSION: 33;
    readonly SSL_CN: 34;
    readonly SSL_CIPHER: 35;
    readonly SSL_SIG_ALG: 36;
    readonly SSL_KEY_ALG: 37;
    /** The network namespace. */
    readonly NETNS: 48;
    /** Google Cloud Private Service Connect: the connection id. */
    readonly GCP: 224;
    /** AWS (NLB, PrivateLink): subtype 0x01, the VPC endpoint id. */
    readonly AWS: 234;
    /** Azure Private Link: subtype 0x01, the link id. */
    readonly AZURE: 238;
};
/** The TLS a proxy terminated in front of this server (the SSL TLV). */
export interface HAProxySsl {
    /** The client flags: 0x01 TLS, 0x02 a certificate on this connection, 0x04 in this session. */
    readonly client: number;
    /** The proxy's verification of the client certificate: 0 when it verified. */
    readonly verify: number;
    /** True if the client connected over TLS. */
    readonly tls: boolean;
    /** True if the client presented a certificate on this connection and the proxy verified it. */
    readonly verifiedCertificate: boolean;
    /** The TLS version, e.g. `'TLSv1.3'`. */
    readonly version: string | undefined;
    /** The client certificate's subject CN. */
    readonly cn: string | undefined;
    readonly cipher: string | undefined;
    /** The client certificate's signature and key algorithms. */
    readonly sigAlg: string | undefined;
    readonly keyAlg: string | undefined;
}
/** `v` as UTF-8 text, or undefined if it is absent or not UTF-8. */
export declare function tlvText(v: Buffer | undefined): string | undefined;
/** Reads an SSL TLV's value; undefined if it breaks the format. */
export declare function parseSsl(v: Buffer | undefined): HAProxySsl | undefined;
/** AWS: the VPC endpoint id of an AWS TLV (subtype 0x01). */
export declare function awsVpcEndpointId(v: Buffer | undefined): string | undefined;
/** Azure: the link id of an Azure TLV (subtype 0x01, little-endian). */
export declare function azureLinkId(v: Buffer | undefined): number | undefined;
/** Google Cloud: the Private Service Connect connection id (8 bytes, big-endian). */
export declare function gcpPscConnectionId(v: Buffer | undefined): bigint | undefined;
