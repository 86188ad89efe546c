/**
 * WebSocket (RFC 6455) framed natively (Netty's websocketx): `WebSocketServerProtocolHandler`
 * goes after `HttpServerCodec` in `childHandler`; it answers the handshake of an upgrade
 * request for its path and from then on decodes frames, answers pings and runs the close
 * handshake natively. Each message reaches the next handler once, as a `TextWebSocketFrame`
 * (`{ text }`) or a `BinaryWebSocketFrame` (`{ binary }`, a view of the bytes read);
 * writing one of the frame classes, a string (a text message) or a Buffer (a binary message)
 * sends it. A protocol violation closes the connection with its close code (1002, 1007,
 * 1009) and reaches `exceptionCaught` as a `NetloopError` (`ERR_WS_*`).
 *
 * ```ts
 * childHandler: (ch) => ch.pipeline
 *   .addLast('http', new HttpServerCodec())
 *   .addLast('ws', new WebSocketServerProtocolHandler('/chat'))
 *   .addLast('app', { channelRead: (ctx, msg: TextWebSocketFrame) => ctx.writeAndFlush(msg) })
 * ```
 *
 * The layout both sides share is described in crates/node/src/channel/ws_wire.rs.
 */
import { Buffer } from 'node:buffer';
import { NativeHandler } from './codecs';
/** Options of a `WebSocketServerProtocolHandler`. */
export interface WebSocketServerProtocolOptions {
    /** Subprotocols the server speaks; the first the client offers is chosen (default none). */
    subprotocols?: string[];
    /** Upgrade every path that starts with the handler's path (default false: exactly it). */
    checkStartsWith?: boolean;
    /** Longest frame payload accepted, in bytes (default 16 MiB; 1009 beyond). */
    maxFrameSize?: number;
    /** Longest message accepted, all its fragments together (default 64 MiB; 1009 beyond). */
    maxMessageSize?: number;
    /** How long to wait for the peer's close frame after sending ours, in ms (default 10000). */
    closeTimeout?: number;
    /** Answer pings with pongs natively (default true). */
    autoPong?: boolean;
    /** Also pass pings and pongs on to the next handler as `PingWebSocketFrame`/`PongWebSocketFrame` (default false). */
    forwardControlFrames?: boolean;
}
/** Whether strings written to `ch` are WebSocket text messages. */
export declare function isWebSocketChannel(ch: object): boolean;
/** The server handshake on `HttpServerCodec`'s upgrade, then WebSocket frames (native). */
export declare class WebSocketServerProtocolHandler extends NativeHandler {
    constructor(path?: string, o?: WebSocketServerProtocolOptions);
}
/** Sends every message back natively (no JS); put it after a `WebSocketServerProtocolHandler`. */
export declare class WebSocketEchoHandler extends NativeHandler {
    constructor();
}
/** A whole text message. */
export declare class TextWebSocketFrame {
    readonly text: string;
    constructor(text: string);
}
/** A whole binary message. */
export declare class BinaryWebSocketFrame {
    readonly binary: Buffer;
    constructor(binary: Buffer);
}
/** A ping (at most 125 bytes; the native side answers the peer's pings itself). */
export declare class PingWebSocketFrame {
    readonly ping: Buffer;
    constructor(ping?: Buffer);
}
/** A pong. */
export declare class PongWebSocketFrame {
    readonly pong: Buffer;
    constructor(pong?: Buffer);
}
/**
 * A close frame: written, it starts the close handshake (the connection closes when the
 * peer answers, or after `closeTimeout`); `code` undefined sends an empty close frame.
 */
export declare class CloseWebSocketFrame {
    readonly code?: number | undefined;
    readonly reason: string;
    constructor(code?: number | undefined, reason?: string);
}
/** What a WebSocket handler reads and writes. */
export type WebSocketFrame = TextWebSocketFrame | BinaryWebSocketFrame | PingWebSocketFrame | PongWebSocketFrame | CloseWebSocketFrame;
/** Whether `m` is one of the frame classes. */
export declare function isWebSocketFrame(m: unknown): m is WebSocketFrame;
