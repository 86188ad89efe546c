/**
 * permessage-deflate's server side of the negotiation (RFC 7692 §5, §7.1) in JS, for the
 * handshake `WebSocketServer.handleUpgrade` answers itself: the same rules as the native
 * handshake's (crates/ws/src/extension.rs, `server_negotiate`), so both paths agree on what
 * they accept. The first valid `permessage-deflate` offer this end can honour is answered;
 * invalid ones (an unknown or repeated parameter, a value where none is allowed, window bits
 * outside 8..15 or with a leading zero) are declined and the next is tried.
 */
/** The configuration as `deflateParams` (src/ws.ts) makes it: on, threshold, the two flags, the two windows. */
type Config = number[];
/**
 * The answer to `header` (the request's `Sec-WebSocket-Extensions`) under `config`: the
 * response's value and the agreed parameters (server and client no context takeover as 0/1,
 * server and client window bits), or undefined (the connection goes uncompressed).
 */
export declare function negotiateDeflate(config: Config, header: string | undefined): {
    response: string;
    agreed: number[];
} | undefined;
export {};
