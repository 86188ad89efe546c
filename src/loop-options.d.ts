/**
 * What an `EventLoop` is made with and reports: its options (checked here), its states and
 * metrics, and the native loop's test hooks.
 */
import type * as Native from '../native';
import type { ChannelMetrics } from './hub';
import type { EventLoop } from './loop';
/** What `EventLoop.metrics()` reports. */
export interface LoopMetrics extends ChannelMetrics {
    /** Connections the loop's server channels closed at once (over `maxConnections`, or out of fds). */
    refusedConnections: number;
}
/** Lifecycle of a loop, as in Netty. */
export type EventLoopState = 'not-started' | 'started' | 'shutting-down' | 'shutdown' | 'terminated';
export interface EventLoopOptions {
    /** Diagnostics name (default `netloop-js`). */
    name?: string;
    /** Percentage of an iteration given to I/O, 1..100 (default 50); tasks get the rest. */
    ioRatio?: number;
    /**
     * Most tasks that may wait to run (default: unbounded): `execute` beyond it throws
     * `ERR_REJECTED_EXECUTION`. Bounds this thread's task queue and, separately, the queue of
     * tasks posted from other threads.
     */
    maxPendingTasks?: number;
    /**
     * Microseconds the loop keeps polling its sockets without blocking, when it runs out of
     * work, before it hands the thread back to libuv, 0..1000 (default 0: never). Only while
     * spinning pays: after a spin that found work or a wait shorter than this, so an idle or
     * lightly loaded loop does not spin. Bounded: no iteration starts after the window.
     */
    spinBeforeSleepMicros?: number;
    /**
     * Receives what tasks and timers throw (or their promises reject with) and loop failures
     * (`ERR_LOOP_FAILED`). Default: printed to stderr. The loop goes on.
     */
    onTaskError?: (error: unknown, loop: EventLoop) => void;
}
/** `options` checked (ERR_INVALID_ARG_TYPE, ERR_OUT_OF_RANGE). */
export declare function checkOptions(options: EventLoopOptions): EventLoopOptions;
export declare function defaultTaskError(error: unknown, loop: EventLoop): void;
/** Runs test hook `op` of the native loop (only with NETLOOP_TEST_HOOKS=1). */
export declare function testHook(loop: Native.NativeEventLoop, op: string, a: number, b: number): number;
