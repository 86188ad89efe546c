import { NativeHandler } from './codecs';
import { type PerMessageDeflateOptions } from './ws';
/** Options of a `WebSocketClientProtocolHandler`. */
export interface WebSocketClientProtocolOptions {
    /** The `Host` field (default: the `HttpClientCodec`'s `host`, if any). */
    host?: string;
    /** Subprotocols offered, in order of preference (default none). */
    subprotocols?: string[];
    /** Extra request fields (`Origin`, `Authorization`, ...). */
    headers?: Record<string, string> | Array<[string, string]>;
    /** Longest frame payload accepted, in bytes (default 16 MiB; 1009 beyond). */
    maxFrameSize?: number;
    /** Longest message accepted, all its fragments together (default 64 MiB; 1009 beyond). */
    maxMessageSize?: number;
    /** How long to wait for the peer's close frame after sending ours, in ms (default 10000). */
    closeTimeout?: number;
    /** Answer pings with pongs natively (default true). */
    autoPong?: boolean;
    /** Also pass pings and pongs on as `PingWebSocketFrame`/`PongWebSocketFrame` (default false). */
    forwardControlFrames?: boolean;
    /**
     * Offer permessage-deflate (RFC 7692): `true` for the defaults, or its options (the
     * server's names: `serverNoContextTakeover` asks the server to, `clientNoContextTakeover`
     * is this end's, the window bits are offered below 15). Default off for this handler; the
     * `WebSocket` client offers it by default, as the `ws` package. When the server accepts,
     * messages of at least `threshold` bytes are compressed and the server's are inflated
     * natively, bounded by `maxMessageSize`; an answer the offer does not allow fails the
     * handshake with `ERR_WS_HANDSHAKE_EXTENSION`.
     */
    perMessageDeflate?: boolean | PerMessageDeflateOptions;
}
/** Sends the client handshake after `HttpClientCodec`, then WebSocket frames (native). */
export declare class WebSocketClientProtocolHandler extends NativeHandler {
    constructor(target?: string, o?: WebSocketClientProtocolOptions);
}
/**
 * A WebSocket handshake completed (Netty's `HandshakeComplete`): on a server, the request's
 * target and fields; on a client, the target sent and the answer's fields. `protocol` is the
 * subprotocol chosen ('' for none).
 */
export declare class WebSocketHandshakeEvent {
    readonly url: string;
    readonly protocol: string;
    /** The fields as received: name, value, name, value, ... (node:http's `rawHeaders`). */
    readonly rawHeaders: readonly string[];
    /** The fields by lower-case name (repeated ones joined with `, `, as node:http does). */
    readonly headers: Record<string, string>;
    constructor(url: string, protocol: string, 
    /** The fields as received: name, value, name, value, ... (node:http's `rawHeaders`). */
    rawHeaders: readonly string[]);
}
