import { type AbortOptions } from './abort';
import { type ChannelMetrics } from './hub';
import { type LoopUtilization } from './utilization';
export type { LoopUtilization } from './utilization';
import { ScheduledTask, type Task } from './timers';
export { ScheduledTask, type Task } from './timers';
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
/**
 * One event loop attached to the calling JS thread.
 *
 * Where tasks run: `execute(fn)` runs `fn` in the loop's next iteration, which libuv runs in
 * its poll phase (with I/O callbacks; before `setImmediate` callbacks of the same turn, after
 * Node's timers); a task executed from a task runs in the same iteration unless the iteration
 * already ran its share (64 batches of up to 32 tasks), then in the next one. Promises and nextTicks of
 * tasks run right after the iteration. A loop nobody references, with nothing queued, no
 * pending timer, no channel and not `ref()`ed, is garbage collected and releases its fds.
 */
export declare class EventLoop {
    #private;
    constructor(options?: EventLoopOptions);
    get name(): string;
    /**
     * Counters of this loop: of its JS boundary (iterations, deliveries: native→JS calls
     * carrying channel events, events, JS→native calls, ops, bytes in/out of JS, channels),
     * and `refusedConnections`: connections its server channels closed as soon as they were
     * accepted (over `maxConnections`, or out of file descriptors).
     */
    metrics(): LoopMetrics;
    get state(): EventLoopState;
    /** Tasks queued and not yet run (this thread's and other threads'). */
    get pendingTasks(): number;
    /**
     * Keeps the process alive until the loop terminates, as a listening server does. By
     * default an idle loop does not; queued tasks, pending timers and channels always do.
     */
    ref(): this;
    /** Undoes `ref()`: an idle loop no longer keeps the process alive. */
    unref(): this;
    /**
     * How busy the loop is, as `performance.eventLoopUtilization()`: `active` is the time (ms)
     * this thread spent in the loop's iterations (its tasks, timers and channel events, and the
     * promises they settled) since the loop was made, `idle` the rest of that time. Given an
     * earlier reading, the difference since it (`loop.utilization(prev)`); given two, the
     * difference between them (`loop.utilization(later, earlier)`), as Node's does.
     */
    utilization(prev?: LoopUtilization, prev2?: LoopUtilization): LoopUtilization;
    /** Tasks and timers that threw (or whose promise rejected) so far. */
    get taskFailures(): number;
    /** True on the thread that runs this loop (the thread that created it). */
    inEventLoop(): boolean;
    /**
     * Runs `fn` on the loop, after the tasks already queued, in the async context of this call
     * (as `setImmediate` does). See the class documentation for where it runs relative to
     * Node's phases. Throws `ERR_REJECTED_EXECUTION` once the loop is shut down or when
     * `maxPendingTasks` tasks are waiting; a task accepted here always runs.
     */
    execute(fn: Task): void;
    /** Runs `fn` once after `delayMs` (a finite number; 0 or negative: due now). */
    schedule(fn: Task, delayMs: number): ScheduledTask;
    /**
     * Runs `fn` after `initialDelayMs`, then every `periodMs` (at least 0.001, i.e. 1 µs) from
     * the previous deadline; missed runs catch up.
     */
    scheduleAtFixedRate(fn: Task, initialDelayMs: number, periodMs: number): ScheduledTask;
    /** Runs `fn` after `initialDelayMs`, then `delayMs` (at least 0.001, i.e. 1 µs) after the end of each run. */
    scheduleWithFixedDelay(fn: Task, initialDelayMs: number, delayMs: number): ScheduledTask;
    /**
     * Shuts the loop down (Netty's graceful shutdown) and resolves when it has terminated.
     *
     * Pending timers are cancelled at once and new timers are rejected (`ERR_REJECTED_EXECUTION`).
     * Tasks keep being accepted and run until none ran for `quietPeriodMs` (default 2000 ms);
     * `timeoutMs` (default 15000 ms) bounds the whole shutdown, also when tasks keep coming
     * during the quiet period. Then new tasks are rejected, the tasks already accepted run, and
     * the loop terminates. Both are finite numbers >= 0, with `quietPeriodMs <= timeoutMs`
     * (`ERR_OUT_OF_RANGE` otherwise). Calling it again returns the same promise.
     *
     * `{ signal }` (last argument, or the only one with the default durations): an already
     * aborted signal rejects at once with an `AbortError` (`cause`: the signal's reason) and
     * starts nothing; aborting it during the shutdown cuts the wait short: the rest of the quiet
     * period and timeout are skipped (the loop runs the tasks it accepted and terminates right
     * away) and the promise rejects with the `AbortError` at once (`terminationFuture()` still
     * resolves when the loop has terminated).
     */
    shutdownGracefully(options?: AbortOptions): Promise<void>;
    shutdownGracefully(quietPeriodMs?: number, timeoutMs?: number, options?: AbortOptions): Promise<void>;
    /** Resolves when the loop has terminated. */
    terminationFuture(): Promise<void>;
}
