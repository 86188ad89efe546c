import { NetloopError } from './errors';
/** What a completed handshake negotiated (node:tls's `TLSSocket` getters, in one object). */
export interface TlsInfo {
    /** `'TLSv1.2'` or `'TLSv1.3'` (`getProtocol()`). */
    protocol: string;
    /** The cipher suite (`getCipher()`). */
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
    /** The peer's chain (DER, leaf first). */
    peerCertificateChain: Buffer[];
    /** The peer's leaf certificate, parsed (like `getPeerCertificate()`); undefined if none. */
    readonly peerCertificate: PeerCertificate | undefined;
}
/** The fields of node:tls's `getPeerCertificate()` that users read most. */
export interface PeerCertificate {
    subject: Record<string, string>;
    issuer: Record<string, string>;
    subjectaltname: string | undefined;
    valid_from: string;
    valid_to: string;
    serialNumber: string;
    fingerprint256: string;
    raw: Buffer;
}
