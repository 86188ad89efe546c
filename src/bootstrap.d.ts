import { Channel, type ServerChannel } from './channel';
import { type AbortOptions } from './abort';
import { EventLoopGroup } from './group';
import { EventLoop } from './loop';
import { type ChannelOptionName, type ChannelOptions } from './options';
import type { ChannelHandler } from './handlers';
/** Sets up a channel's pipeline. May be async only in what it does later: it runs synchronously. */
export type ChannelInitializer = (ch: Channel) => void;
type Loops = EventLoop | EventLoopGroup;
/** Sets up and binds server channels. */
export declare class ServerBootstrap {
    #private;
    /** The loops of the server channel (`boss`) and of accepted channels (`workers`, default: `boss`). */
    group(boss: Loops, workers?: Loops): this;
    /** An option of the server channel (`soBacklog`, `soReuseaddr`, `autoRead`, ...), checked at once. */
    option<K extends ChannelOptionName>(name: K, value: NonNullable<ChannelOptions[K]>): this;
    /** An option of every accepted channel (`tcpNoDelay`, water marks, `autoRead`, ...). */
    childOption<K extends ChannelOptionName>(name: K, value: NonNullable<ChannelOptions[K]>): this;
    /** Sets up each accepted channel's pipeline, on the channel's loop. */
    childHandler(init: ChannelInitializer): this;
    /**
     * The server channel's own handler (Netty's `ServerBootstrap.handler`): a handler, added
     * last, or an initializer of the server channel's pipeline. It sees the server channel's
     * events (`channelRegistered`, `channelActive`, `channelInactive`, ...) and its exceptions
     * (an accept failure such as `EMFILE`), and the exceptions of accepted channels that arrive
     * after those channels closed (their handlers are gone by then), with the channel's id as
     * the error's `channelId`.
     */
    handler(handler: ChannelHandler | ChannelInitializer): this;
    /**
     * Binds a server channel to `port` on `host` (default `0.0.0.0`); resolves to the server
     * channel (`bind(0)` picks a free port: see `localAddress`). Rejects with `EADDRINUSE`, ...
     *
     * With a worker group as `workers`, the boss loop (on this thread) hands each accepted
     * connection to the next worker loop; with `option('soReusePort', true)` (or the worker
     * group as boss too) every worker binds its own listener and the kernel spreads
     * connections. The workers' module sets channels up: `childHandler()` is not used then.
     *
     * `{ signal }` (node:net's `listen`): an abort before the server listens rejects with an
     * `AbortError` (its `cause`: the signal's reason); an abort afterwards closes the server.
     */
    bind(port: number, host?: string, options?: AbortOptions): Promise<ServerChannel>;
}
/** Sets up and connects client channels. */
export declare class Bootstrap {
    #private;
    group(group: Loops): this;
    /** An option of the channel (`connectTimeoutMillis`, `tcpNoDelay`, ...), checked at once. */
    option<K extends ChannelOptionName>(name: K, value: NonNullable<ChannelOptions[K]>): this;
    /** Sets up the channel's pipeline, on its loop, before it connects. */
    handler(init: ChannelInitializer): this;
    /**
     * Connects to `host:port`; resolves to the connected channel. Rejects with `ECONNREFUSED`,
     * `ETIMEDOUT` (after `connectTimeoutMillis`), ...; the channel is closed then.
     *
     * `{ signal }` (node:net's): an abort while connecting closes the half-open channel and
     * rejects with an `AbortError` (its `cause`: the signal's reason); an abort afterwards
     * closes the channel; an already-aborted signal rejects at once.
     */
    connect(port: number, host?: string, options?: AbortOptions): Promise<Channel>;
}
export {};
