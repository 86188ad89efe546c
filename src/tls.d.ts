import { NativeHandler } from './codecs';
import { NetloopError } from './errors';
import { type TlsInfo } from './tls-info';
import { type SharedSslContext, type SslContextOptions } from './tls-options';
export type { SNICallback } from './tls-sni';
export type { ALPNCallback, ALPNCallbackInfo } from './tls-alpn';
export type { PeerCertificate, TlsInfo } from './tls-info';
export type { SharedSslContext, SslContextOptions } from './tls-options';
export type { KeyObjectPem, PemIdentity, PfxIdentity, PfxObject, SslIdentity } from './tls-identity';
/**
 * A TLS configuration, parsed once. Share one context by every connection; to use it on a
 * worker thread of an `EventLoopGroup`, pass it in `workerData` (it crosses as its id) and give
 * what arrives to `new SslHandler(...)`: the worker uses the same parsed context.
 */
export declare class SslContext implements SharedSslContext {
    #private;
    /** The context's process-wide id (what crosses to worker threads). */
    readonly netloopSslContext: number;
    constructor(options: SslContextOptions | SharedSslContext);
    /** A server context (`isServer: true`). */
    static forServer(options: Omit<SslContextOptions, 'isServer'>): SslContext;
    /** A client context. */
    static forClient(options?: Omit<SslContextOptions, 'isServer'>): SslContext;
    get isServer(): boolean;
    /**
     * Replaces this context's configuration in place, as node:tls's `server.setSecureContext`
     * does: to rotate certificates without a restart. Handshakes that start afterwards, on every
     * thread using this context (worker threads included), get the new configuration;
     * established connections keep theirs. `options` is a whole configuration (what is left out
     * takes its default), of the same side (`isServer` may be omitted), with an `SNICallback`,
     * an `ALPNCallback` and a `checkServerIdentity` exactly when the context had one. Sessions from before do not resume (new ticket keys, an
     * empty session cache). On an error nothing changes.
     */
    reload(options: SslContextOptions): void;
}
/**
 * Fired to every handler when the handshake completes (Netty's `SslHandshakeCompletionEvent`):
 * `isSuccess`, or `cause` with the reason (also sent to `exceptionCaught`).
 */
export declare class SslHandshakeCompletionEvent {
    readonly cause: NetloopError | undefined;
    static readonly SUCCESS: SslHandshakeCompletionEvent;
    private constructor();
    get isSuccess(): boolean;
}
/** Fired when the peer sent close_notify (Netty's `SslCloseCompletionEvent`); the channel then closes. */
export declare class SslCloseCompletionEvent {
    static readonly INSTANCE: SslCloseCompletionEvent;
    private constructor();
}
/**
 * TLS for one connection (Netty's `SslHandler`), made per channel from a shared context and
 * added first in the pipeline. Runs natively: records never cross into JS.
 */
export declare class SslHandler extends NativeHandler {
    #private;
    /**
     * @param context an `SslContext`, or one that crossed to this worker thread in `workerData`
     * @param options.servername client: the name to send and verify (default: the context's
     *   `servername`, else the host given to `connect()` unless it is an IP address)
     */
    constructor(context: SslContext | SharedSslContext, options?: {
        servername?: string;
    });
    /**
     * Resolves with the negotiated parameters when the handshake completes; rejects with its
     * failure (Netty's `handshakeFuture()`).
     */
    handshakeFuture(): Promise<TlsInfo>;
}
