import { NativeHandler } from './codecs';
/** Limits of a `RespDecoder` (defaults as redis-server's where it has one). */
export interface RespDecoderOptions {
    /** Longest bulk string, in bytes (default 512 MiB, Redis's proto-max-bulk-len). */
    maxBulkLength?: number;
    /** Most elements of one array (default 1048576). */
    maxArrayLength?: number;
    /** Most arrays nested in one another (default 32; a command needs 1). */
    maxNestingDepth?: number;
    /** Longest inline command or type line (default 65536, as Redis). */
    maxInlineLength?: number;
    /** Accept inline commands such as `PING\r\n` typed into telnet (default true). */
    inlineCommands?: boolean;
    /** Accept RESP3 types (default true). */
    resp3?: boolean;
    /**
     * For servers: while the channel is not writable (replies queued past the high water mark),
     * deliver no new command and stop reading (`autoRead` off meanwhile), and go on once it
     * drains: a client that pipelines without reading its replies is held back by TCP instead of
     * growing the server's memory (node:http's rule; redis-server has none). Commands of one read
     * that reach the handler after the channel turned unwritable go back to the decoder and come
     * again once it drains, so what is queued stays near the high water mark whatever a reply's
     * size. Default: on for a server's channels, off for clients (a client would stop reading
     * replies while its own commands cannot drain).
     */
    pauseWhileUnwritable?: boolean;
}
/**
 * Decodes RESP2/RESP3 natively (Netty's `RedisDecoder` + `RedisArrayAggregator`). Each whole
 * value reaches the next handler as JS data: bulk strings as `Buffer`s, simple strings as
 * strings, integers as numbers (bigint beyond 2^53), null as `null`, arrays as arrays, errors
 * as `RespErrorReply`, maps as `Map`, sets as `Set`. A protocol error or a limit reaches
 * `exceptionCaught` as `ERR_RESP_*` and the decoder discards what follows: close the channel
 * (after an error reply), as redis-server does.
 */
export declare class RespDecoder extends NativeHandler {
    constructor(options?: RespDecoderOptions);
}
/** An error reply (`-ERR ...`), as read from a peer. */
export declare class RespErrorReply {
    readonly message: string;
    constructor(message: string);
}
/** A reply to write: framed natively as RESP when it reaches the native side. */
export declare class RespReply {
}
/** Reply builders (Netty's `SimpleStringRedisMessage`, `ErrorRedisMessage`, ...). */
export declare const Resp: {
    /** `+text` */
    simple: (text: string) => RespReply;
    /** `-text` (e.g. `ERR unknown command`) */
    error: (text: string) => RespReply;
    /** `:n` */
    integer: (n: number | bigint) => RespReply;
    /** `$len\r\ndata` */
    bulk: (data: string | Uint8Array) => RespReply;
    /** `$-1` (a missing key) */
    nullBulk: () => RespReply;
    /** `*n` followed by each item */
    array: (list: RespReply[]) => RespReply;
    /** `*-1` */
    nullArray: () => RespReply;
    /** RESP3 `_` */
    null: () => RespReply;
    /** RESP3 `#t` / `#f` */
    boolean: (b: boolean) => RespReply;
    /** RESP3 `,d` */
    double: (d: number) => RespReply;
    /** RESP3 `%n` */
    map: (pairs: Array<[RespReply, RespReply]>) => RespReply;
    /**
     * Several replies back to back, as if each were written on its own, in one write: a server
     * answering a pipelined batch can collect its replies and write them once per read batch
     * (in `channelReadComplete`), which costs less than a write per reply. Not an element of
     * an array or map (`ERR_INVALID_ARG_VALUE`).
     */
    sequence: (replies: RespReply[]) => RespReply;
    /** `+OK` */
    OK: RespReply;
    /** `+PONG` */
    PONG: RespReply;
};
