import { type SNICallback } from './tls-sni';
import { type ALPNCallback } from './tls-alpn';
import type { PeerCertificate } from './tls-info';
import { type KeyObjectPem, type Pem, type PfxObject, type SslIdentity } from './tls-identity';
/** node:tls's option names where they exist; Netty's defaults where they differ. */
export interface SslContextOptions {
    /** A server context (node:tls's `isServer`; default false: a client context). */
    isServer?: boolean;
    /**
     * PEM certificate chain, leaf first (a server's default certificate, or a client's for
     * mTLS). With a `key` array: one chain per key, as node:tls's `cert` array.
     */
    cert?: Pem;
    /**
     * PEM private key of `cert` (RSA, ECDSA or Ed25519; PKCS#8, PKCS#1 or SEC1), or an
     * encrypted PKCS#8 key (`ENCRYPTED PRIVATE KEY`) with `passphrase`. Server: an array of
     * keys of different types (node:tls's form, each a PEM or `{ pem, passphrase }`), each
     * paired with the chain of `cert` it matches: a client gets the first whose signature it
     * can verify (an ECDSA certificate first, an RSA one for older clients).
     */
    key?: string | Buffer | Array<string | Buffer | KeyObjectPem>;
    /**
     * The passphrase of encrypted private keys (`key`, the `pfx`, and the keys of `SNI` entries
     * that have none of their own), as node:tls's. OpenSSL's legacy encrypted PEM
     * (`Proc-Type: 4,ENCRYPTED`) is refused with the `openssl pkcs8 -topk8` command that
     * converts it.
     */
    passphrase?: string;
    /**
     * A PKCS#12 file (`.pfx`, `.p12`) holding the certificate chain and its private key, in
     * place of `cert` and `key`, opened with `passphrase` (or its own, as `{ buf, passphrase }`).
     * Read as node:tls reads it on OpenSSL 3: PBES2 (OpenSSL 3's and Java's default) and
     * 3DES files, with their MAC checked; RC2 files are refused with the command that converts
     * them. Server: an array of files of different key types (node:tls's form), each with
     * the context's `passphrase` or its own: a client gets the first whose signature it can
     * verify, as with a `key` array. The file's other CA certificates complete the chain but
     * are not trusted (node:tls also trusts them): trust is `ca`'s.
     */
    pfx?: Buffer | PfxObject | Array<Buffer | PfxObject>;
    /** Trusted CA certificates (PEM). Replaces the bundled Mozilla roots, as in node:tls. */
    ca?: Pem;
    /**
     * Server: a DER OCSP response for `cert` (from its CA's responder, e.g. `openssl ocsp
     * -respout`), stapled to the handshake of clients that ask for one (`status_request`, as
     * browsers do), so they need not ask the CA. node:tls staples through its `'OCSPRequest'`
     * event; here it is part of the context: refresh it before it expires with `reload()`.
     */
    ocspResponse?: Buffer;
    /** Also trust the operating system's roots (client). */
    useSystemCA?: boolean;
    /** Server: certificates by host name (`'*.example.com'` matches one label); others get `cert`. */
    SNI?: Record<string, SslIdentity>;
    /**
     * Server: chooses the context of each connection whose client names a server (node:tls's
     * `SNICallback`, asynchronous allowed); see the guide's TLS section. Such a context cannot be
     * shared with worker threads (make it in the worker's module).
     */
    SNICallback?: SNICallback;
    /** Server: ask clients for a certificate (mTLS). */
    requestCert?: boolean;
    /**
     * Fail the handshake on a certificate that does not verify (default true). A server with
     * `requestCert` and `rejectUnauthorized: false` accepts any client and reports `authorized`.
     */
    rejectUnauthorized?: boolean;
    /** ALPN protocols in order of preference. */
    ALPNProtocols?: string[];
    /**
     * Server: chooses the ALPN protocol of each connection among those its client offers
     * (node:tls's `ALPNCallback`); excludes `ALPNProtocols`. See the guide's TLS section. Such a
     * context cannot be shared with worker threads (make it in the worker's module).
     */
    ALPNCallback?: ALPNCallback;
    /** Client: the name to send (SNI) and verify; default: the host given to `connect()`. */
    servername?: string;
    /**
     * The signature schemes this side offers to verify and signs with, by OpenSSL's names
     * separated by `:` (node:tls's `sigalgs`): `'ecdsa_secp256r1_sha256:rsa_pss_rsae_sha256'`,
     * or the `ECDSA+SHA256` forms. Default: rustls's (ECDSA, RSA-PSS, RSA PKCS#1 and Ed25519
     * with SHA-2; no SHA-1).
     */
    sigalgs?: string;
    /**
     * node:tls's OpenSSL method name, as a version range: `'TLSv1_2_method'` and
     * `'TLSv1_3_method'` (and their `_server_`/`_client_` forms) pin one version, `'TLS_method'`
     * and `'SSLv23_method'` allow both; older methods throw `ERR_TLS_INVALID_PROTOCOL_METHOD`.
     * Not with `minVersion`/`maxVersion` (`ERR_TLS_PROTOCOL_VERSION_CONFLICT`, as node:tls).
     */
    secureProtocol?: string;
    /**
     * node:tls's OpenSSL option flags: `SSL_OP_NO_TLSv1_2` and `SSL_OP_NO_TLSv1_3` narrow the
     * version range; the other flags concern what netloop never does (SSLv3, TLS 1.0/1.1,
     * compression, renegotiation) and are accepted without effect.
     */
    secureOptions?: number;
    /** Lowest version, `'TLSv1.2'` (default) or `'TLSv1.3'`. */
    minVersion?: 'TLSv1.2' | 'TLSv1.3';
    /** Highest version, `'TLSv1.3'` (default) or `'TLSv1.2'`. */
    maxVersion?: 'TLSv1.2' | 'TLSv1.3';
    /** Milliseconds allowed for a handshake (Netty's default 10000; 0: no limit). */
    handshakeTimeout?: number;
    /**
     * Server, experimental (default false): after a TLS 1.3 handshake, protect records with
     * netloop's own record layer instead of rustls's. It is outside rustls's audited code; it
     * keeps less memory per idle connection and is not faster on bulk transfers.
     */
    experimentalOwnRecords?: boolean;
    /** Server: sessions kept for resumption by id (default 1024; 0: none). */
    sessionCacheSize?: number;
    /** Server: issue stateless session tickets (default true). */
    sessionTickets?: boolean;
    /**
     * Server: seconds a session resumes after it was made, by ticket or from the cache
     * (node:tls's `sessionTimeout`, default 300 as in node:tls; 1 to 604800, TLS 1.3's 7 days).
     * It is also the tickets' lifetime hint, and a context's own ticket keys are replaced at
     * this period.
     */
    sessionTimeout?: number;
    /**
     * Server: 48 bytes that seal session tickets (node:tls's `ticketKeys`), so that servers given
     * the same bytes (other processes, other machines behind one load balancer) resume each
     * other's sessions; without it each context has keys of its own. Rotate them with
     * `reload()`. Only netloop servers open netloop's tickets.
     */
    ticketKeys?: Buffer;
    /**
     * Cipher suites in order of preference, separated by `:`, by IANA or OpenSSL name
     * (`'TLS_AES_256_GCM_SHA384:ECDHE-RSA-AES256-GCM-SHA384'`). Default: AES-128-GCM, then
     * ChaCha20-Poly1305, then AES-256-GCM, for TLS 1.3 and for TLS 1.2 (ECDHE only). OpenSSL's
     * cipher-string language (`HIGH:!aNULL`) is not understood: an unknown name throws.
     */
    ciphers?: string;
    /**
     * Server: pick the suite by this context's order (default **true**, unlike node:tls) rather
     * than by the client's.
     */
    honorCipherOrder?: boolean;
    /** Key-exchange groups in order, separated by `:` (`'X25519:P-256'`; `P-384`), or `'auto'`. */
    ecdhCurve?: string;
    /**
     * Certificate revocation lists (PEM) checked against the peer's certificate: a client's
     * server, or a server's clients (with `requestCert`). A peer certificate whose issuer has no
     * list here fails (`UNABLE_TO_GET_CRL`), as with node:tls.
     */
    crl?: Pem;
    /**
     * Append every handshake's secrets to this file in the NSS key log format, so that Wireshark
     * can decrypt a capture (what node's `--tls-keylog` does). Debugging only.
     */
    keyLogFile?: string;
    /**
     * Client: judges the server's identity once its chain verified (node:tls's
     * `checkServerIdentity`): return an `Error` to refuse the server, `undefined` to accept it.
     * It replaces the host-name check (call node's `tls.checkServerIdentity(hostname, cert)` in
     * it to keep that check and add yours, e.g. a pinned `fingerprint256`). Called on the thread
     * of the channel's loop before anything is written or delivered; not called for resumed
     * sessions. Such a context cannot be shared with worker threads.
     */
    checkServerIdentity?: (hostname: string, cert: PeerCertificate) => Error | undefined;
}
/** What `SslContext` carries across a `worker_threads` boundary (structured clone keeps it). */
export interface SharedSslContext {
    readonly netloopSslContext: number;
}
