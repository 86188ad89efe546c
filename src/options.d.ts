/** Every channel option (the guide's list), with Netty's names in camelCase. */
export interface ChannelOptions {
    /** Disable Nagle's algorithm (default true). */
    tcpNoDelay?: boolean;
    /** SO_KEEPALIVE (default false). */
    soKeepAlive?: boolean;
    /** Listen backlog of server channels (default 1024). */
    soBacklog?: number;
    /** SO_REUSEADDR of server channels (default true). */
    soReuseaddr?: boolean;
    /**
     * SO_REUSEPORT of server channels (default false). With a worker-thread group, every worker
     * loop binds its own listener on the port and the kernel spreads connections.
     */
    soReusePort?: boolean;
    /** SO_RCVBUF in bytes (default: the kernel's). */
    soRcvbuf?: number;
    /** SO_SNDBUF in bytes (default: the kernel's). */
    soSndbuf?: number;
    /** SO_LINGER in seconds; -1 (default) disables it, 0 resets on close. */
    soLinger?: number;
    /** Pending outbound bytes above which the channel turns unwritable (default 65536). */
    writeBufferHighWaterMark?: number;
    /** Pending outbound bytes below which it turns writable again (default 32768). */
    writeBufferLowWaterMark?: number;
    /** Milliseconds before a connect fails with `ETIMEDOUT`; 0 disables (default 30000). */
    connectTimeoutMillis?: number;
    /** Read as soon as data arrives (default true); false: only after `read()`. */
    autoRead?: boolean;
    /** Most write system calls per flush before yielding to other channels (default 16). */
    writeSpinCount?: number;
    /** Most reads per readiness event (default 16). */
    maxMessagesPerRead?: number;
    /**
     * Bytes after which a read batch ends, the rest read in a later turn (Netty's
     * `maxBytesPerRead`; default 65536, 0: no limit). A channel's reads reach JS once per loop
     * iteration, so this bounds what an iteration holds before your handler sees it.
     */
    maxBytesPerRead?: number;
    /** Keep the output open after the peer half-closes (default false). */
    allowHalfClosure?: boolean;
    /**
     * Server channels: most accepted connections open at once (default 0: no limit). Beyond it
     * a new connection is closed as soon as it is accepted and counted in
     * `EventLoop.metrics().refusedConnections` of the server's loop.
     */
    maxConnections?: number;
}
export type ChannelOptionName = keyof ChannelOptions;
/** The option names, for iteration. */
export declare const OPTION_NAMES: ChannelOptionName[];
/** Checks `name` and `value`; returns the value as the native side takes it. */
export declare function encodeOption(name: string, value: unknown): number;
/** The native value of option `name` back in JS form. */
export declare function decodeOption(name: ChannelOptionName, v: number): boolean | number;
/** Checks a set of options; returns them as parallel name/value lists for the native side. */
export declare function encodeOptions(options: ChannelOptions): [string[], number[]];
