/**
 * JS timers of one loop (`schedule`, `scheduleAtFixedRate`, `scheduleWithFixedDelay`,
 * `cancel`): they live here, in JS, and the native loop holds at most ONE timer per loop, armed
 * for the earliest JS deadline (docs/decisions/0006-js-timers.md).
 *
 * Ground rules (loop thread only):
 * - Order: by (deadline, sequence). Deadlines are `performance.now()` at the call plus the
 *   delay in whole µs (rounded up for a delay: never early; down when due now), so they count
 *   from the call even inside a long task; the sequence keeps FIFO order for equal deadlines.
 *   A deadline is kept as two small integers (whole ms, µs within it), never as a double: a
 *   double field would cost every timer a heap-number box (measured: ~1/3 more scavenge time
 *   in a burst). Two containers hold pending timers:
 *   - the *run*: a doubly linked list whose keys never decrease. A timer whose key is not
 *     below the run's tail is appended (O(1)): every timer of a burst with one delay;
 *   - the *heap*: a binary min-heap for the rest, each entry storing its index (O(log n)).
 *   The earliest pending timer is the smaller of the run's head and the heap's top. A cancelled
 *   timer leaves its container at once (unlink, or heap removal by index).
 * - The native side learns only "arm at deadline d / disarm" through a 3-number Float64Array
 *   `[dirty, deadline (-1: none), stamp]` that it reads after every dispatch call and at the
 *   start and end of every iteration; outside an iteration the first change asks for one
 *   (`requestDrain`, one napi call per JS turn, not per timer). It is rewritten only when the
 *   earliest deadline changes: a burst of timers with one delay changes it once.
 * - Firing: the native timer dispatches `Timers`; `runDue` runs the timers due at that moment
 *   and present when it started (a periodic timer put back, or a timer scheduled by a
 *   callback, waits for the next dispatch), for at most BUDGET_MS, then re-arms for the rest.
 *   A due re-arm is a native timer added during a task batch, so it runs in the next
 *   iteration: Node's phases get their turn in between.
 * - `cancel()` is `true` only if the timer will not run (again): a one-shot is marked done
 *   before its callback runs; a periodic one stays cancellable while it runs.
 */
import { AsyncResource } from 'node:async_hooks';
import { type TaskListener } from './task-future';
export type { TaskListener } from './task-future';
/** A task: its return value is ignored, except that a rejected promise goes to `onTaskError`. */
export type Task = () => unknown;
/**
 * A pending one-shot or periodic task; `cancel()` stops it. It is also a future of its outcome
 * (`addListener`, `await`): see `TaskFuture`. It is also the async resource its
 * callback runs in (the async context of the `schedule` call), as Node's `Timeout` is: one
 * object per timer.
 */
export declare class ScheduledTask extends AsyncResource {
    #private;
    /** A fixed-rate or fixed-delay task. */
    get periodic(): boolean;
    /** Cancels the task; `true` if it was still pending (a periodic task stops repeating). */
    cancel(): boolean;
    get isCancelled(): boolean;
    /** A one-shot task that has run. */
    get isDone(): boolean;
    /**
     * Milliseconds until the task's next run (Netty's `getDelay`): negative once that deadline
     * passed (a task due but not yet run, or one that ran).
     */
    getDelay(): number;
    /** `getDelay()`, as a property. */
    get delay(): number;
    /**
     * Runs `fn(error, value)` once the task is done: a one-shot after its callback (with its
     * result, or what it threw or rejected with), any task once cancelled (`ERR_CANCELLED`).
     * A listener added after a one-shot ran is called at once, without the result.
     */
    addListener(fn: TaskListener): this;
    /** Removes a listener added with `addListener`; true if it was still waiting. */
    removeListener(fn: TaskListener): boolean;
    /** Awaiting a task waits for its outcome (a periodic one: until it is cancelled, then rejects). */
    then<A = unknown, B = never>(onfulfilled?: ((value: unknown) => A | PromiseLike<A>) | null, onrejected?: ((reason: any) => B | PromiseLike<B>) | null): Promise<A | B>;
}
