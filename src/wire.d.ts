export declare const enum W {
    RECORD = 6,
    REGISTERED = 1,
    UNREGISTERED = 2,
    ACTIVE = 3,
    INACTIVE = 4,
    READ_BYTES = 5,
    READ_VALUE = 6,
    READ_COMPLETE = 7,
    USER_EVENT = 8,
    EXCEPTION = 9,
    WRITABILITY = 10,
    READ_BIG = 11,
    READ_RESP = 12,
    READ_HTTP = 13,
    WRITE_BYTES = 20,
    WRITE_VALUE = 21,
    FLUSH = 22,
    READ = 23,
    CLOSE = 24,
    WRITE_BIG = 25,
    WRITE_RESP = 26,
    WRITE_HTTP = 27,
    PROMISE_DONE = 30,
    NEW_CHANNEL = 31,
    CLOSED = 32,
    RELEASE = 33,
    FORGET = 34,
    UNHANDLED = 35,
    TLS_HANDSHAKE = 36,
    COMPLETE_PROMISE = 40,
    REGISTER = 41
}
/** Throws if the native addon speaks another version of the wire. */
export declare function checkWire(): void;
/**
 * Promise ids on the wire: 0 is the silent void promise (a write made without a promise),
 * `VOID_FIRING` the channel's `voidPromise()` (a failure goes to `exceptionCaught`), ids > 0
 * are JS promises and ids below `VOID_FIRING` native promises lent to JS.
 */
export declare const VOID_FIRING = -1;
/** Event records per delivery call, op records per buffer, write-arena bytes. */
export declare const EVENT_CAPACITY = 4096;
export declare const OP_CAPACITY = 4096;
export declare const ARENA_BYTES: number;
/** Writes larger than this travel as their own Buffer instead of through the arena. */
export declare const ARENA_MAX_WRITE: number;
