/**
 * `channel.tls`: what a TLS channel's handshake negotiated, read from the native session and
 * kept after the close (node:tls's `TLSSocket` getters, in one object).
 */
import { X509Certificate } from 'node:crypto';
import { NetloopError } from './errors';
/** What a completed handshake negotiated (node:tls's `TLSSocket` getters, in one object). */
export interface TlsInfo {
    /** `'TLSv1.2'` or `'TLSv1.3'` (`getProtocol()`). */
    protocol: string;
    /**
     * The cipher suite (`getCipher()`): `name` is OpenSSL's (`ECDHE-RSA-AES128-GCM-SHA256`),
     * `standardName` IANA's (`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`); TLS 1.3 suites have one.
     */
    cipher: {
        name: string;
        standardName: string;
        version: string;
    };
    /** The ALPN protocol agreed on, or false (`alpnProtocol`). */
    alpnProtocol: string | false;
    /** Server: the name the client asked for (SNI); client: the name verified. */
    servername: string | false;
    /** The peer's certificate verified (`authorized`). */
    authorized: boolean;
    /** Why not (`authorizationError`). */
    authorizationError: NetloopError | undefined;
    /** This handshake resumed a session (`isSessionReused()`). */
    resumed: boolean;
    /**
     * The key exchange (`getEphemeralKeyInfo()`): `{ type: 'ECDH', name: 'X25519', size: 253 }`,
     * names as OpenSSL's (`X25519`, `prime256v1`, `secp384r1`). On both ends (node:tls gives an
     * empty object on servers).
     */
    ephemeralKeyInfo: {
        type: 'ECDH';
        name: string;
        size: number;
    } | undefined;
    /** The peer's chain (DER, leaf first). */
    peerCertificateChain: Buffer[];
    /** The peer's leaf certificate, parsed (like `getPeerCertificate()`); undefined if none. */
    readonly peerCertificate: PeerCertificate | undefined;
    /** The peer's leaf certificate as node's `X509Certificate` (`getPeerX509Certificate()`). */
    readonly peerX509Certificate: X509Certificate | undefined;
    /**
     * Client: the DER OCSP response the server stapled to its certificate, as received (what
     * node:tls's `'OCSPResponse'` event gives with `requestOCSP`); undefined if it stapled
     * none. A netloop client always asks for one; checking it (e.g. with `openssl ocsp` or an
     * OCSP library, against the certificate and its issuer) is the application's.
     */
    ocspResponse: Buffer | undefined;
    /**
     * `length` bytes of keying material exported from the session under `label` (and
     * `context`), the same on both ends and known to no one else (node:tls's
     * `exportKeyingMaterial`; RFC 5705, RFC 8446 §7.5): what channel bindings such as
     * `tls-exporter` (RFC 9266) are made of. Throws `ERR_TLS_INVALID_STATE` once the channel
     * closed.
     */
    exportKeyingMaterial(length: number, label: string, context?: Buffer): Buffer;
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
    ca: boolean;
    subject: Record<string, string>;
    issuer: Record<string, string>;
    /** The subject alternative names (`'DNS:localhost, IP Address:127.0.0.1'`), if any. */
    subjectaltname?: string;
    valid_from: string;
    valid_to: string;
    serialNumber: string;
    /** SHA-1, SHA-256 and SHA-512 fingerprints, `:`-separated hex. */
    fingerprint: string;
    fingerprint256: string;
    fingerprint512: string;
    /** Extended key usage OIDs, if the certificate lists them. */
    ext_key_usage?: string[];
    /** Authority information access (`'OCSP - URI'`, `'CA Issuers - URI'`), if present. */
    infoAccess?: Record<string, string[]>;
    /** The public key's size in bits (RSA, EC). */
    bits?: number;
    /** RSA: the modulus, upper-case hex. */
    modulus?: string;
    /** RSA: the public exponent, `'0x10001'`. */
    exponent?: string;
    /** RSA: the SubjectPublicKeyInfo, DER; EC: the public point, uncompressed. */
    pubkey?: Buffer;
    /** EC: the curve's OpenSSL name (`'prime256v1'`). */
    asn1Curve?: string;
    /** EC: the curve's NIST name (`'P-256'`), for NIST curves. */
    nistCurve?: string;
    /** The certificate, DER (never over shared memory: node's type says so). */
    raw: Buffer<ArrayBuffer>;
}
