import { EventLoop } from './loop';
import type { EventLoopGroup } from './group';
import { SslContext } from './tls';
import type { SslContextOptions } from './tls-options';
import type { PerMessageDeflateOptions } from './ws';
/** Options of `new WebSocket(url, protocols, options)` (the `ws` package's, where they apply). */
export interface WebSocketClientOptions {
    /** The netloop loop or group the connection runs on (default: a shared loop). */
    group?: EventLoop | EventLoopGroup;
    /** Extra request fields. */
    headers?: Record<string, string>;
    /** The `Origin` field. */
    origin?: string;
    /** Fails the connection when the handshake is not done within this many ms (`ERR_WS_HANDSHAKE_TIMEOUT`). */
    handshakeTimeout?: number;
    /** Longest message accepted, in bytes (default 100 MiB as `ws`; 1009 beyond). */
    maxPayload?: number;
    /** How long `close()` waits for the peer's close frame, in ms (default 10000). */
    closeTimeout?: number;
    /** Answer pings natively (default true). */
    autoPong?: boolean;
    /**
     * Offer permessage-deflate (default `true`, as the `ws` package's client: the server
     * decides, and most servers decline unless configured). `false` offers nothing; an object
     * tunes the offer (`threshold`, `serverNoContextTakeover`, `clientNoContextTakeover`,
     * `serverMaxWindowBits`, `clientMaxWindowBits`; see `PerMessageDeflateOptions`).
     */
    perMessageDeflate?: boolean | PerMessageDeflateOptions;
    /** `wss:`: verify the server (default true). */
    rejectUnauthorized?: boolean;
    /** `wss:`: trusted CA certificates (PEM). */
    ca?: SslContextOptions['ca'];
    /** `wss:`: a client certificate and key (PEM). */
    cert?: SslContextOptions['cert'];
    key?: SslContextOptions['key'];
    /** `wss:`: the name sent (SNI) and verified (default: the URL's host unless an IP address). */
    servername?: string;
    /** `wss:`: a client `SslContext` of your own instead of the options above. */
    tls?: SslContext;
}
