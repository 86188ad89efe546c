export type Pem = string | Buffer | Array<string | Buffer>;
/** A certificate chain and key for one host name: PEM `cert` and `key`, or a PKCS#12 `pfx`. */
export type SslIdentity = PemIdentity | PfxIdentity;
/** A certificate chain and key (PEM) for one host name. */
export interface PemIdentity {
    cert: Pem;
    key: string | Buffer;
    /** The passphrase of `key` if it is encrypted (default: the context's `passphrase`). */
    passphrase?: string;
    /** A DER OCSP response for `cert`, stapled for clients that ask (see `ocspResponse`). */
    ocspResponse?: Buffer;
}
/** A certificate chain and key in a PKCS#12 file, for one host name. */
export interface PfxIdentity {
    /** The PKCS#12 file (see the context's `pfx`). */
    pfx: Buffer;
    /** Its passphrase (default: the context's `passphrase`). */
    passphrase?: string;
    /** A DER OCSP response for its certificate, stapled for clients that ask. */
    ocspResponse?: Buffer;
}
/** A PKCS#12 file with its own passphrase (node:tls's `pfx` entries). */
export interface PfxObject {
    buf: Buffer;
    passphrase?: string;
}
/** PEM text (a string, a Buffer, or an array of either) as one Buffer, entries on lines of their own. */
export declare function pem(name: string, v: Pem | undefined): Buffer | undefined;
/** One of node:tls's `key` array with a passphrase of its own. */
export interface KeyObjectPem {
    pem: string | Buffer;
    passphrase?: string;
}
/** node:tls's `key` array and `cert` array: the keys, and one chain per key (`undefined`: one key). */
export declare function keysAndChains(key: string | Buffer | Array<string | Buffer | KeyObjectPem> | undefined, cert: Pem | undefined, isServer: boolean): {
    keys: ({
        pem: Buffer<ArrayBufferLike>;
        passphrase?: undefined;
    } | {
        pem: Buffer<ArrayBufferLike>;
        passphrase: string | undefined;
    })[];
    certs: Buffer<ArrayBufferLike>[];
} | undefined;
/** The native side's `SNI` entries: each host name with its PEM chain and key or its PKCS#12 file. */
export declare function sniIdentities(entries: Record<string, SslIdentity> | undefined): {
    hostname: string;
    cert: Buffer<ArrayBufferLike> | undefined;
    key: Buffer<ArrayBufferLike> | undefined;
    pfx: Buffer<ArrayBufferLike> | undefined;
    passphrase: string | undefined;
    ocspResponse: Buffer<ArrayBufferLike> | undefined;
}[] | undefined;
/** The PKCS#12 files of `pfx` (node:tls's forms: a Buffer, `{ buf, passphrase }`, an array of either). */
export declare function pfxFiles(v: Buffer | PfxObject | Array<Buffer | PfxObject> | undefined, isServer: boolean): PfxObject[] | undefined;
export declare function der(name: string, v: unknown): Buffer | undefined;
