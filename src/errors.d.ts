/**
 * Errors: every error the package throws or rejects with is a `NetloopError` with a stable,
 * Node-style `code` and, for argument errors, Node's message style.
 */
/**
 * An error with a stable `code`:
 * - `ERR_INVALID_ARG_TYPE`: an argument of the wrong type;
 * - `ERR_OUT_OF_RANGE`: a number out of its range (non-finite delays, periods under 1 µs,
 *   a quiet period longer than the shutdown timeout, a loop count over 4096);
 * - `ERR_INVALID_ARG_VALUE`: any other bad argument;
 * - `ERR_REJECTED_EXECUTION`: a task or timer submitted to a loop that is shutting down (timers)
 *   or shut down (tasks), or beyond `maxPendingTasks`;
 * - `ERR_LOOP_FAILED`: the loop failed and terminated (reported through `onTaskError`).
 */
export declare class NetloopError extends Error {
    readonly code: string;
    /** For a system error: Node's (negative) error number, e.g. -111 for `ECONNREFUSED`. */
    errno?: number;
    /** For a socket or DNS error: the failed call (`connect`, `bind`, `getaddrinfo`). */
    syscall?: string;
    /** For a connect or bind error: the address and port, as in node:net's errors. */
    address?: string;
    port?: number;
    /** For a DNS error: the host name that did not resolve. */
    hostname?: string;
    /** For an error of a channel: its id. */
    channelId?: number;
    constructor(code: string, message: string);
}
/**
 * A failed `connect` or `bind` as node:net reports it: `connect ECONNREFUSED 127.0.0.1:7000`,
 * with `errno`, `syscall`, `address` and `port`.
 */
export declare function socketError(error: unknown, syscall: 'connect' | 'bind', address: string, port: number): NetloopError;
/** A DNS failure (node:dns's error: `ENOTFOUND`, ...) as a `NetloopError` with the same fields. */
export declare function dnsError(error: unknown, hostname: string): NetloopError;
export declare function invalidArg(message: string): NetloopError;
export declare function invalidArgType(name: string, expected: string, value: unknown): NetloopError;
export declare function outOfRange(name: string, rule: string, value: unknown): NetloopError;
export declare function rejected(message: string): NetloopError;
/** A native error (which carries a `code`) as a `NetloopError`. */
export declare function fromNative(error: unknown): NetloopError;
export declare function checkFunction(name: string, fn: unknown): asserts fn is (...args: never[]) => unknown;
export declare function checkNumber(name: string, v: unknown): asserts v is number;
/** A delay in ms: a finite number; negatives are due now. */
export declare function checkDelay(name: string, v: unknown): number;
/** A duration in ms that must not be negative (shutdown quiet period and timeout). */
export declare function checkDuration(name: string, v: unknown): number;
/** Shortest period of a periodic task: 1 µs. */
export declare const MIN_PERIOD_MS = 0.001;
/** A period in ms: finite and at least 1 µs. */
export declare function checkPeriod(name: string, v: unknown): number;
/** A boolean. */
export declare function checkBoolean(name: string, v: unknown): asserts v is boolean;
/** An integer in `min..max`. */
export declare function checkInteger(name: string, v: unknown, min: number, max: number): number;
