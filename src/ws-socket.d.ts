/**
 * `WebSocket`: one connection with the `ws` package's surface (version 8), over a netloop
 * channel whose frames, pings and close handshake are native (src/ws.ts, src/ws-client.ts).
 * Both sides: `new WebSocket('ws://host:port/path')` connects (src/ws-client-connect.ts builds
 * the pipeline), and `WebSocketServer` (src/ws-server.ts) makes one per accepted connection.
 *
 * Events (EventEmitter): `open`, `message` (data, isBinary), `ping`, `pong`, `close` (code,
 * reason Buffer), `error`; and the WHATWG form: `addEventListener`, `onopen`/`onmessage`/
 * `onclose`/`onerror`, `binaryType`.
 *
 * Ground rules:
 * - One JS thread: the channel's loop's. Every event comes from the bridge handler, last in
 *   the pipeline, inside a delivery; a listener that throws is reported as an `error` event;
 *   an `error` with no listener (or thrown by one) becomes a process warning, never an
 *   uncaught exception.
 * - `close` is emitted once, when the channel has gone inactive: with the peer's close code
 *   (1005 for a close frame without one) if its close frame came, else 1006.
 * - The state only moves forward: CONNECTING → OPEN → CLOSING → CLOSED (CONNECTING →
 *   CLOSED when the handshake fails).
 */
import { Buffer } from 'node:buffer';
import { EventEmitter } from 'node:events';
import type { Channel } from './channel';
import type { ChannelHandler } from './handlers';
import { type WhatwgListener } from './ws-events';
import { type Callback, type SendOptions, type WebSocketData } from './ws-data';
import { type WebSocketTopics } from './ws-socket-topics';
export type { SendOptions, WebSocketData } from './ws-data';
export declare class WebSocket extends EventEmitter {
    #private;
    static readonly CONNECTING = 0;
    static readonly OPEN = 1;
    static readonly CLOSING = 2;
    static readonly CLOSED = 3;
    readonly CONNECTING = 0;
    readonly OPEN = 1;
    readonly CLOSING = 2;
    readonly CLOSED = 3;
    /** How binary messages are handed over: Buffers (default) or ArrayBuffers. */
    binaryType: 'nodebuffer' | 'arraybuffer';
    /**
     * A client connection to `address` (`ws:`, `wss:`, `http:`, `https:`), made as
     * src/ws-client-connect.ts describes; `null` makes the server-side object
     * `WebSocketServer` attaches.
     */
    constructor(address: string | URL | null, protocols?: string | string[] | Record<string, unknown>, options?: Record<string, unknown>);
    /** Connects and resolves once open (rejects with the handshake's or the connection's error). */
    static connect(address: string | URL, options?: Record<string, unknown> & {
        protocols?: string[];
    }): Promise<WebSocket>;
    get readyState(): number;
    /** The subprotocol the server chose ('' for none). */
    get protocol(): string;
    /** The URL a client connected to ('' on a server's side). */
    get url(): string;
    /**
     * A client's extensions in use, as the server's answer named them (`permessage-deflate;
     * ...` when agreed, '' for none). '' on a server's side (the agreement stays native).
     */
    get extensions(): string;
    /** The channel under this connection (netloop's; undefined while a client connects). */
    get channel(): Channel | undefined;
    /**
     * Bytes written and not yet handed to the kernel: the channel's outbound buffer as its
     * water marks count it (each queued write counts its size plus a fixed overhead, as Netty's
     * `ChannelOutboundBuffer` does). 0 once closed.
     */
    get bufferedAmount(): number;
    /** Lets the process exit while this connection is open (node:net's `unref()`). */
    unref(): this;
    /** Undoes `unref()`. */
    ref(): this;
    /** Sends a message: text for strings (unless `binary`), binary for bytes. */
    send(data: WebSocketData, options?: SendOptions | Callback, cb?: Callback): void;
    /** Sends a ping (at most 125 bytes). */
    ping(data?: WebSocketData, _mask?: boolean, cb?: Callback): void;
    /** Sends a pong (at most 125 bytes). */
    pong(data?: WebSocketData, _mask?: boolean, cb?: Callback): void;
    /**
     * Starts the close handshake: sends a close frame with `code` (1000 or 3000–4999, ...) and
     * `reason` (at most 123 bytes); the connection ends when the peer answers, or after the
     * close timeout. Before the connection is open, aborts it (`error`, then `close` 1006).
     */
    close(code?: number, reason?: string | Buffer): void;
    /** Ends the connection at once, without a close frame (the peer sees 1006). */
    terminate(): void;
    /** Stops reading (backpressure on the peer through TCP). */
    pause(): void;
    /** Reads again after `pause()`. */
    resume(): void;
    subscribe: WebSocketTopics['subscribe'];
    unsubscribe: WebSocketTopics['unsubscribe'];
    isSubscribed: WebSocketTopics['isSubscribed'];
    readonly subscriptions: WebSocketTopics['subscriptions'];
    publish: WebSocketTopics['publish'];
    /** The WHATWG form: `type` is `open`, `message`, `close` or `error`. */
    addEventListener(type: string, listener: WhatwgListener, options?: {
        once?: boolean;
    }): void;
    removeEventListener(type: string, listener: WhatwgListener): void;
    onopen: WhatwgListener | null;
    onmessage: WhatwgListener | null;
    onclose: WhatwgListener | null;
    onerror: WhatwgListener | null;
}
/** The last handler of a connection's pipeline: native events become the socket's. */
export declare function bridge(ws: WebSocket, emitOpen: boolean): ChannelHandler;
