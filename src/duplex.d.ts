/**
 * `channel.toDuplex()`: a `stream.Duplex` over a channel, for the libraries that take a
 * socket-like stream (node:http's `server.emit('connection', duplex)`, `tls.TLSSocket`, `ws`).
 *
 * Ground rules (everything runs on the channel's loop thread, the thread that made the loop):
 * - The duplex is a JS handler added last in the pipeline: it sees what the handlers before it
 *   pass on (bytes from the socket, or decoded values in object mode) and writes from its own
 *   place, through the handlers before it.
 * - Reads: each message is `push`ed. When `push()` returns false (the consumer is behind) the
 *   channel's `autoRead` is turned off; the stream's next `_read()` turns it on again. A
 *   channel made with `autoRead: false` starts reading at the stream's first `_read()`.
 * - Writes: a write callback is called at once while the channel is writable and held while it
 *   is not (its pending bytes passed the high water mark), until `channelWritabilityChanged`
 *   says it is writable again. The writable budget is the channel's `bytesBeforeUnwritable`,
 *   counted down by each write and asked afresh (one native call) when it runs out.
 *   `write()` returns false while a callback is held; `'drain'` follows.
 * - Ends: `end()` shuts the output down (FIN after queued writes). The duplex turns the
 *   channel's `allowHalfClosure` on: the peer's FIN arrives as `ChannelInputShutdownEvent` and
 *   ends the readable side; without `allowHalfOpen` the writable side is then ended too, and
 *   the channel closes once both sides are done (as a net.Socket). The channel's close ends the
 *   readable side and finishes the writable one; `destroy(err)` closes the channel, and an
 *   error reaching the handler (`exceptionCaught`) destroys the stream with it.
 */
import { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { Channel } from './channel';
/** Options of `channel.toDuplex()`. */
export interface ChannelDuplexOptions {
    /**
     * Keep the writable side open after the readable side ended (node:net's `allowHalfOpen`,
     * default false: the duplex ends its writable side, FIN after what was written, then closes).
     */
    allowHalfOpen?: boolean;
    /** Readable values instead of bytes (for handlers before the duplex that decode messages). */
    readableObjectMode?: boolean;
    /** The readable buffer's high water mark (default 16 KiB, or 16 values in object mode). */
    readableHighWaterMark?: number;
    /** The writable buffer's high water mark (default 16 KiB). */
    writableHighWaterMark?: number;
    /** The handler's name in the pipeline (default: generated, `ChannelDuplexHandler#n`). */
    name?: string;
}
type Callback = (error?: Error | null) => void;
/** A `stream.Duplex` over a channel, shaped like a `net.Socket` (see `Channel.toDuplex`). */
export declare class ChannelDuplex extends Duplex {
    #private;
    /** The channel under the stream. */
    readonly channel: Channel;
    /** Bytes (or values) received through the stream. */
    bytesRead: number;
    /** Bytes handed to the channel through the stream. */
    bytesWritten: number;
    /** node:net's `connecting`: always false (the stream is made over a channel that exists). */
    readonly connecting = false;
    /** The inactivity timeout set with `setTimeout` (ms; undefined: none). */
    timeout: number | undefined;
    _read(): void;
    write(chunk: unknown, encoding?: BufferEncoding | Callback, cb?: Callback): boolean;
    _write(chunk: Buffer, _encoding: BufferEncoding, cb: Callback): void;
    _writev(chunks: Array<{
        chunk: Buffer;
    }>, cb: Callback): void;
    _final(cb: Callback): void;
    _destroy(error: Error | null, cb: Callback): void;
    /** node:net's `destroySoon()`: ends the writable side, then closes once it finished. */
    destroySoon(): void;
    /** The remote address (`'127.0.0.1'`), kept after the close. */
    get remoteAddress(): string | undefined;
    get remotePort(): number | undefined;
    /** `'IPv4'` or `'IPv6'`. */
    get remoteFamily(): string | undefined;
    get localAddress(): string | undefined;
    get localPort(): number | undefined;
    get localFamily(): string | undefined;
    /** node:net's `address()`: the local end. */
    address(): AddressInfo | Record<string, never>;
    /** True when an `SslHandler` sits in front of the duplex (the stream carries its plaintext). */
    get encrypted(): boolean;
    /** `'open'`, `'readOnly'`, `'writeOnly'` or `'closed'`, as node:net's. */
    get readyState(): string;
    /** Sets the channel's `tcpNoDelay` (default true). */
    setNoDelay(noDelay?: boolean): this;
    /** Sets the channel's `soKeepAlive` (the initial delay is the system's). */
    setKeepAlive(enable?: boolean, _initialDelay?: number): this;
    /**
     * Emits `'timeout'` after `ms` without a read or a write (node:net's `setTimeout`; 0 turns
     * it off). The stream stays open: close it in the listener. The timer does not keep the
     * process alive.
     */
    setTimeout(ms: number, callback?: () => void): this;
    /** Lets the process exit while the channel is open (`channel.unref()`). */
    unref(): this;
    /** Undoes `unref()`. */
    ref(): this;
}
export {};
