import type { AddressInfo } from 'node:net';
import { ChannelPipeline } from './pipeline';
import { ChannelPromise } from './promise';
import type { EventLoop } from './loop';
import type { Outbound } from './handlers';
import { type ChannelOptionName, type ChannelOptions } from './options';
import { type TlsInfo } from './tls-info';
import { type HAProxyMessage } from './haproxy';
import { ChannelDuplex, type ChannelDuplexOptions } from './duplex';
import { ChannelMessages, type ChannelMessagesOptions } from './messages';
/** What `ServerBootstrap.bind` resolves to: a server channel (or, with `SO_REUSEPORT` worker
 * listeners, the set of them). */
export interface ServerChannel {
    /** Unique in the process (negative for a set of worker listeners). */
    readonly id: number;
    readonly localAddress: AddressInfo | undefined;
    readonly isOpen: boolean;
    /** Resolves when the server is closed. */
    readonly closeFuture: Promise<void>;
    /** Stops listening (accepted channels stay open). */
    close(): Promise<void>;
    /** Lets the process exit while listening (node:net's `unref()`). */
    unref(): this;
    ref(): this;
    /** Stops listening (`await using`). */
    [Symbol.asyncDispose](): Promise<void>;
}
/** Every option of a live channel, readable and settable (checked at once). */
export type ChannelConfig = Required<ChannelOptions>;
export declare class Channel implements ServerChannel {
    #private;
    /** The channel's id, unique in the process. */
    readonly id: number;
    readonly pipeline: ChannelPipeline;
    /** The server channel that accepted this one. */
    readonly parent: Channel | undefined;
    /** Resolves when the channel is closed (never rejects). Made on first use. */
    get closeFuture(): Promise<void>;
    /** The loop this channel is registered on. */
    get eventLoop(): EventLoop;
    get isOpen(): boolean;
    get isActive(): boolean;
    /**
     * False once the pending outbound bytes (every write made so far, the ones JS still holds
     * included) passed the high water mark, until they fall below the low one; false too while
     * a user-defined writability flag is off.
     */
    get isWritable(): boolean;
    get isRegistered(): boolean;
    /** Bytes that can be written before the channel turns unwritable (0 when unwritable). */
    get bytesBeforeUnwritable(): number;
    /** Bytes to drain before the channel turns writable again (0 when writable). */
    get bytesBeforeWritable(): number;
    /** The local end, shaped like node:net's `socket.address()`. */
    get localAddress(): AddressInfo | undefined;
    /** The remote end. */
    get remoteAddress(): AddressInfo | undefined;
    /** Every option, live: reading asks the channel, setting checks and applies at once. */
    get config(): ChannelConfig;
    getOption<K extends ChannelOptionName>(name: K): ChannelConfig[K];
    setOption<K extends ChannelOptionName>(name: K, value: ChannelConfig[K]): this;
    /** Writes through the whole pipeline (from the tail). See `ChannelHandlerContext.write`. */
    write(msg: Outbound): void;
    write(msg: Outbound, promise: ChannelPromise): ChannelPromise;
    writeAndFlush(msg: Outbound): void;
    writeAndFlush(msg: Outbound, promise: ChannelPromise): ChannelPromise;
    flush(): this;
    /** Asks for one more read (with `autoRead` off). */
    read(): this;
    /**
     * Closes the channel through the whole pipeline (pending writes fail with
     * `ERR_CHANNEL_CLOSED`); resolves when closed. A `close` handler that throws or rejects
     * still closes the channel, and then this rejects with its error (as `ctx.close()` does);
     * the returned promise is not reported as an unhandled rejection when nobody awaits it.
     * Given a promise (Netty's `close(promise)`), completes that one and returns it: with
     * `voidPromise()` a failure goes to `exceptionCaught`.
     */
    close(): Promise<void>;
    close(promise: ChannelPromise): ChannelPromise;
    /** Half-close: sends FIN after what was flushed; reading goes on. */
    shutdownOutput(): Promise<void>;
    /** A promise for an outbound operation, to await it. */
    newPromise(): ChannelPromise;
    /** The void promise (Netty's `voidPromise()`): it cannot be awaited, and a failure of the
     * operation it is given to goes to `exceptionCaught`. Writes made without a promise are
     * silent instead (Netty's `write(msg)`). */
    voidPromise(): ChannelPromise;
    /**
     * Netty's user-defined writability: flag `index` (1..31) turned off makes the channel
     * unwritable (with one `channelWritabilityChanged`) whatever its buffer, e.g. for traffic
     * shaping; the channel is writable when its buffer is below the high mark and every flag is on.
     */
    setUserDefinedWritability(index: number, writable: boolean): this;
    /** Lets the process exit while this channel is open (node:net's `unref()`). */
    unref(): this;
    /** Undoes `unref()` (the default: an open channel keeps the process alive). */
    ref(): this;
    /** What the channel's `SslHandler` negotiated; undefined before the handshake or without TLS. */
    get tls(): TlsInfo | undefined;
    /** The PROXY protocol header this channel received (its `HAProxyMessageDecoder`'s), once it did. */
    get haproxy(): HAProxyMessage | undefined;
    /**
     * A `stream.Duplex` over this channel, added as a handler at the end of its pipeline; see
     * `ChannelDuplex`. Backpressure maps onto the channel's: `write()` returns false while the
     * channel is unwritable, and a consumer that falls behind turns `autoRead` off.
     */
    toDuplex(options?: ChannelDuplexOptions): ChannelDuplex;
    /**
     * The channel's inbound messages as an async iterator (`for await (const m of ch.messages())`),
     * with backpressure: the channel stops reading while the consumer is `highWaterMark`
     * messages behind. Ends when the channel closes; an error in the pipeline rejects it. Make
     * it before data can arrive (in the initializer, or with `autoRead: false`): messages that
     * reached the end of the pipeline before it existed are gone.
     */
    messages<T = Buffer>(options?: ChannelMessagesOptions): ChannelMessages<T>;
    /** Closes the channel (`await using`); resolves once it is closed. */
    [Symbol.asyncDispose](): Promise<void>;
    toString(): string;
}
