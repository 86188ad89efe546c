/**
 * Errors: every error the package throws or rejects with is a `NetloopError` with a stable,
 * Node-style `code`.
 */
/** An error with a stable `code` (`ERR_REJECTED_EXECUTION`, `ERR_INVALID_ARG_VALUE`, ...). */
export declare class NetloopError extends Error {
    readonly code: string;
    constructor(code: string, message: string);
}
export declare function invalidArg(message: string): NetloopError;
export declare function checkFunction(name: string, fn: unknown): asserts fn is () => void;
export declare function checkMillis(name: string, ms: unknown): number;
export declare function checkPeriod(name: string, ms: unknown): number;
