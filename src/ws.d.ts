/**
 * WebSocket (RFC 6455) framed natively (Netty's websocketx): `WebSocketServerProtocolHandler`
 * goes after `HttpServerCodec` in `childHandler`; it answers the handshake of an upgrade
 * request for its path and from then on decodes frames, answers pings and runs the close
 * handshake natively. Each message reaches the next handler once, as a `TextWebSocketFrame`
 * (`{ text }`) or a `BinaryWebSocketFrame` (`{ binary }`, a view of the bytes read);
 * writing one of the frame classes, a string (a text message) or a Buffer (a binary message)
 * sends it. A protocol violation closes the connection with its close code (1002, 1007,
 * 1009) and reaches `exceptionCaught` as a `NetloopError` (`ERR_WS_*`). With
 * `perMessageDeflate`, a client's permessage-deflate offer (RFC 7692) is accepted and
 * messages are compressed and inflated natively, the inflated size bounded by
 * `maxMessageSize` (a deflate bomb closes with 1009).
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
    /**
     * Accept permessage-deflate (RFC 7692) when a client offers it: `true` for the defaults,
     * or its options. Default off, as the `ws` package's server: compression costs CPU, and
     * a connection holds up to ~420 KiB of compressor and decompressor state once it has
     * compressed messages both ways (none before; freed after each message on a side without
     * context takeover). See docs/guide.md, "WebSocket".
     */
    perMessageDeflate?: boolean | PerMessageDeflateOptions;
    /** Also pass pings and pongs on to the next handler as `PingWebSocketFrame`/`PongWebSocketFrame` (default false). */
    forwardControlFrames?: boolean;
}
/** Options of permessage-deflate (the `ws` package's names). */
export interface PerMessageDeflateOptions {
    /** Messages shorter than this many bytes go uncompressed (default 1024). */
    threshold?: number;
    /** The server starts each message with an empty window; its compressor is freed between messages (default false). */
    serverNoContextTakeover?: boolean;
    /** Ask the client to start each message with an empty window; our decompressor is freed between messages (default false). */
    clientNoContextTakeover?: boolean;
    /** The server's window, log2 9..15 (default 15); below 15 it uses less memory and compresses less. */
    serverMaxWindowBits?: number;
    /** The client's window, log2 9..15 (default 15); below 15, offers that do not let the server set it are declined. */
    clientMaxWindowBits?: number;
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
