import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Channel } from './channel';
import type { ChannelHandlerContext } from './context';
import { EventLoop } from './loop';
import type { EventLoopGroup } from './group';
import { HttpRequest } from './http';
import { SslContext } from './tls';
import { type PerMessageDeflateOptions } from './ws';
import { WebSocket } from './ws-socket';
import { type WebSocketData } from './ws-data';
import { type PublishOptions } from './ws-topics';
/** What `connection` and `handleUpgrade`'s callback get beside the socket (node:http's request, in part). */
export interface WebSocketRequest {
    readonly method: 'GET';
    /** The request target (`/path?query`). */
    readonly url: string;
    /** The fields by lower-case name (repeated ones joined with `, `). */
    readonly headers: Record<string, string>;
    readonly rawHeaders: readonly string[];
    /** The remote end, node:net style. */
    readonly socket: {
        readonly remoteAddress?: string;
        readonly remotePort?: number;
        readonly remoteFamily?: string;
    };
    /** The connection's channel. */
    readonly channel: Channel;
}
/** Options of `new WebSocketServer(options, callback)`. */
export interface WebSocketServerOptions {
    /** Listen on this port (0: any); one of `port` and `noServer` is required. */
    port?: number;
    /** The address to listen on (default `0.0.0.0`). */
    host?: string;
    /** Only upgrade requests for this path (default: every path). */
    path?: string;
    /** No server of its own: connections come through `handleUpgrade`. */
    noServer?: boolean;
    /** Choose the subprotocol in JS (`false`: none); the handshake is then answered in JS. */
    handleProtocols?: (protocols: Set<string>, request: WebSocketRequest) => string | false;
    /** The subprotocols spoken, chosen natively (the first the client offers); default: none. */
    protocols?: string[];
    /** Longest message accepted, in bytes (default 100 MiB, as `ws`; 1009 beyond). */
    maxPayload?: number;
    /** Keep the open connections in `clients` (default true). */
    clientTracking?: boolean;
    /** The loop(s) that accept and serve (default: a loop of its own, shut down on `close`). */
    group?: EventLoop | EventLoopGroup;
    /** Serve `wss:` with this server `SslContext`. */
    tls?: SslContext;
    /** How long `close()` on a connection waits for the peer's close frame, in ms (default 10000). */
    closeTimeout?: number;
    /** Answer pings natively (default true). */
    autoPong?: boolean;
    /**
     * Accept permessage-deflate when a client offers it (default false, as `ws`'s server):
     * `true` or `PerMessageDeflateOptions`; negotiated natively, or in JS by `handleUpgrade`
     * (and so with `handleProtocols`) by the same rules, then applied natively.
     */
    perMessageDeflate?: boolean | PerMessageDeflateOptions;
}
export declare class WebSocketServer extends EventEmitter {
    #private;
    /** The open connections (when `clientTracking` is on). */
    readonly clients: Set<WebSocket> | undefined;
    readonly options: Readonly<WebSocketServerOptions>;
    constructor(options: WebSocketServerOptions, callback?: () => void);
    /** The listening address, node:net style (`null` with `noServer` or before listening). */
    address(): AddressInfo | null;
    /** Whether `request` is for this server's path (as `ws`'s `shouldHandle`). */
    shouldHandle(request: {
        url: string;
    }): boolean;
    /**
     * Answers an upgrade request read by the handler of `ctx` (after `HttpServerCodec`): a
     * valid one gets its `101` (subprotocol by `handleProtocols`, else `protocols`, else the
     * first offered, as `ws`), the native frame handler and a bridge go in before that handler,
     * and `cb(ws, request)` runs; an invalid one is answered 400 (426 for another version)
     * and HTTP goes on.
     */
    handleUpgrade(request: HttpRequest, ctx: ChannelHandlerContext, cb: (ws: WebSocket, request: WebSocketRequest) => void): void;
    /**
     * Sends `data` to every subscriber of `topic` (connections that called `ws.subscribe`), on
     * every loop of the process: `publish` of src/ws-topics.ts, encoded once, written natively.
     * A string is text, other data binary unless `options.binary` says otherwise. Returns the
     * subscribers reached.
     */
    publish(topic: string, data: WebSocketData, options?: PublishOptions): number;
    /** Stops accepting; `close` (and `cb`) once the listener closed and every tracked connection ended. Connections are not closed (as `ws` 8). */
    close(cb?: (err?: Error) => void): void;
}
