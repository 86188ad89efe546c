/**
 * `EventLoop`: a Rust event loop (mio selector, lock-free task queue, timer heap) attached to
 * the calling JS thread. libuv watches the loop's selector and runs one loop iteration per
 * wake-up, so tasks, timers and channel events run synchronously on this thread, in the
 * loop's order; promises and nextTicks they create run right after the iteration.
 */
import { NativeEventLoop } from '../native';
import { type ChannelMetrics } from './hub';
/** Lifecycle of a loop, as in Netty. */
export type EventLoopState = 'not-started' | 'started' | 'shutting-down' | 'shutdown' | 'terminated';
export interface EventLoopOptions {
    /** Diagnostics name. */
    name?: string;
    /** Percentage of an iteration given to I/O, 1..100 (default 50); tasks get the rest. */
    ioRatio?: number;
    /** Most tasks that may wait in the cross-thread queue (default: unbounded). */
    maxPendingTasks?: number;
    /** Receives errors thrown by tasks and timers. Default: printed to stderr. The loop goes on. */
    onTaskError?: (error: unknown, loop: EventLoop) => void;
}
/** A pending one-shot or periodic task; `cancel()` stops it. */
export declare class ScheduledTask {
    #private;
    readonly periodic: boolean;
    /** @internal */
    readonly _id: number;
    /** @internal */
    readonly _fn: () => void;
    /** @internal */
    constructor(id: number, fn: () => void, periodic: boolean, cancel: (task: ScheduledTask) => void);
    /** Cancels the task; `true` if it was still pending (a periodic task stops repeating). */
    cancel(): boolean;
    get isCancelled(): boolean;
    /** A one-shot task that has run. */
    get isDone(): boolean;
    /** @internal */
    _markDone(): void;
    /** @internal the loop cancelled it (shutdown). */
    _markCancelled(): void;
}
/** One event loop attached to the calling JS thread. */
export declare class EventLoop {
    #private;
    /** @internal test and benchmark hook: tasks posted by `_postFromOtherThread` land here. */
    _onRemoteTask?: (latencyNs: number) => void;
    constructor(options?: EventLoopOptions);
    get name(): string;
    /** @internal The native loop (channels are created on it). */
    get _native(): NativeEventLoop;
    /**
     * Counters of this loop's JS boundary: iterations, deliveries (native→JS calls carrying
     * channel events), events, JS→native calls, ops, bytes in/out of JS, channels.
     */
    metrics(): ChannelMetrics;
    get state(): EventLoopState;
    /** Tasks waiting in the cross-thread queue. */
    get pendingTasks(): number;
    /**
     * Keeps the process alive until the loop terminates, as a listening server does. By
     * default an idle loop does not; queued tasks, pending timers and channels always do.
     */
    ref(): this;
    /** Undoes `ref()`: an idle loop no longer keeps the process alive. */
    unref(): this;
    /** Tasks and timers that threw so far. */
    get taskFailures(): number;
    /** True on the thread that runs this loop (the thread that created it). */
    inEventLoop(): boolean;
    /** Runs `fn` on the loop, after the tasks already queued. */
    execute(fn: () => void): void;
    /** Runs `fn` once after `delayMs` (0 or negative: due now). */
    schedule(fn: () => void, delayMs: number): ScheduledTask;
    /** Runs `fn` after `initialDelayMs`, then every `periodMs` from the previous deadline; missed runs catch up. */
    scheduleAtFixedRate(fn: () => void, initialDelayMs: number, periodMs: number): ScheduledTask;
    /** Runs `fn` after `initialDelayMs`, then `delayMs` after the end of each run. */
    scheduleWithFixedDelay(fn: () => void, initialDelayMs: number, delayMs: number): ScheduledTask;
    /**
     * Shuts the loop down: tasks keep running until none arrived for `quietPeriodMs` (or until
     * `timeoutMs`), scheduled tasks are cancelled, then new tasks are rejected with
     * `ERR_REJECTED_EXECUTION` and the loop terminates. Resolves on termination.
     */
    shutdownGracefully(quietPeriodMs?: number, timeoutMs?: number): Promise<void>;
    /** Resolves when the loop has terminated. */
    terminationFuture(): Promise<void>;
    /** @internal Another OS thread posts `count` tasks to this loop (tests and benchmarks). */
    _postFromOtherThread(count: number, delayMs?: number): void;
    /** @internal Selector rebuilds of this loop so far (premature wake-ups past the threshold). */
    get _selectorRebuilds(): number;
    /** @internal Test hook: the next `count` polls report a premature empty wake-up. */
    _injectSelectorFaults(count: number): void;
    /** @internal Wake-ups of this loop's waker so far. */
    get _wakeups(): number;
}
