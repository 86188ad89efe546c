import { type AbortOptions } from './abort';
import { type EventLoopOptions, type EventLoopState, type LoopMetrics } from './loop-options';
export type { EventLoopOptions, EventLoopState, LoopMetrics } from './loop-options';
import { type LoopUtilization } from './utilization';
export type { LoopUtilization } from './utilization';
import { ScheduledTask, type Task } from './timers';
export { ScheduledTask, type Task } from './timers';
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
    /** `shutdownGracefully(0, 15000)` (`await using`); resolves once the loop terminated. */
    [Symbol.asyncDispose](): Promise<void>;
    /** Resolves when the loop has terminated. */
    terminationFuture(): Promise<void>;
}
