/**
 * The arguments of `EventLoop.shutdownGracefully` and its abortable wait (see its docs).
 */
import { type AbortOptions } from './abort';
/** `(quietPeriodMs, timeoutMs, options)` or `(options)`, checked: durations >= 0, quiet <= timeout. */
export declare function shutdownArgs(quietPeriodMs: number | AbortOptions, timeoutMs: number, options: AbortOptions | undefined): {
    quiet: number;
    timeout: number;
    signal: AbortSignal | undefined;
};
/** The termination, unless `signal` aborts first: then the shutdown hurries and this rejects. */
export declare function abortable(done: Promise<void>, signal: AbortSignal, expedite: () => void): Promise<void>;
