/**
 * A timer of one loop as its user sees it (`ScheduledTask`: cancel, delay, a future of its
 * outcome) and as its queue keeps it (deadline, sequence, place): docs/decisions/0006-js-timers.md.
 *
 * Ground rules: a task is owned by one `TimerQueue` (timers.ts) and touched on its loop's
 * thread only. Its place in the queue is also its state (`_where`); a deadline is two small
 * integers (whole ms and µs within it), never a double (a double field costs a heap-number box
 * per timer). The queue reads and writes the `_` fields; users see only the public members.
 */
import { AsyncResource } from 'node:async_hooks'
import { NetloopError } from './errors'
import { type TaskListener, TaskFuture, cancelledError, futureOf, newFuture, recording } from './task-future'

/** A task: its return value is ignored, except that a rejected promise goes to `onTaskError`. */
export type Task = () => unknown

/**
 * What a task needs of the queue that owns it (timers.ts's `TimerQueue`): a local type, so that
 * the published declarations, which leave the internal queue out, name nothing missing.
 */
interface OwningQueue {
  _cancel(task: ScheduledTask): void
}

/**
 * `_where` of a timer, which is also its state: >= 0: pending, at that heap index; IN_RUN:
 * pending, in the run; NOT_QUEUED: pending, out of both (a periodic timer while it runs);
 * DONE: a one-shot that ran (or runs); CANCELLED.
 */
export const IN_RUN = -1
export const NOT_QUEUED = -2
export const DONE = -3
export const CANCELLED = -4

/**
 * A pending one-shot or periodic task; `cancel()` stops it. It is also a future of its outcome
 * (`addListener`, `await`): see `TaskFuture`. It is also the async resource its
 * callback runs in (the async context of the `schedule` call), as Node's `Timeout` is: one
 * object per timer.
 */
export class ScheduledTask extends AsyncResource {
  // Bytes per timer decide whether a burst fits in V8's young generation (a scavenge in the
  // middle of a burst copies every live timer): one-shots carry 10 fields (2 of them
  // AsyncResource's), the state lives in `_where`, the periodic rule in the subclass.
  /** @internal (replaced by a recording wrapper once someone listens to a pending one-shot) */
  declare _fn: Task
  /** @internal deadline: whole ms of `performance.now()` time, and µs within that ms. */
  declare _ms: number
  /** @internal */
  declare _us: number
  /** @internal */
  declare _seq: number
  /** @internal heap index or IN_RUN / NOT_QUEUED / DONE / CANCELLED. */
  declare _where: number
  /** @internal run links. */
  declare _prev: ScheduledTask | null
  /** @internal */
  declare _next: ScheduledTask | null
  /** @internal */
  declare readonly _queue: OwningQueue

  /** @internal */
  constructor(queue: OwningQueue, fn: Task) {
    super('netloop:timer')
    this._fn = fn
    this._ms = 0
    this._us = 0
    this._seq = 0
    this._where = NOT_QUEUED
    this._prev = null
    this._next = null
    this._queue = queue
  }

  /** A fixed-rate or fixed-delay task. */
  get periodic(): boolean {
    return false
  }

  /** Cancels the task; `true` if it was still pending (a periodic task stops repeating). */
  cancel(): boolean {
    if (this._where < NOT_QUEUED) return false
    this._queue._cancel(this)
    return true
  }

  get isCancelled(): boolean {
    return this._where === CANCELLED
  }

  /** A one-shot task that has run. */
  get isDone(): boolean {
    return this._where === DONE
  }

  /**
   * Milliseconds until the task's next run (Netty's `getDelay`): negative once that deadline
   * passed (a task due but not yet run, or one that ran).
   */
  getDelay(): number {
    return deadlineOf(this) - performance.now()
  }

  /** `getDelay()`, as a property. */
  get delay(): number {
    return this.getDelay()
  }

  #future(): TaskFuture {
    let f = futureOf(this)
    if (f !== undefined) return f
    f = newFuture(this)
    const where = this._where
    if (where === CANCELLED) f.settle({ ok: false, error: cancelledError() })
    // It ran before anyone listened: its result is gone (failures went to onTaskError).
    else if (where === DONE) f.settle({ ok: true, value: undefined })
    else if (!this.periodic) this._fn = recording(this._fn, f)
    return f
  }

  /**
   * Runs `fn(error, value)` once the task is done: a one-shot after its callback (with its
   * result, or what it threw or rejected with), any task once cancelled (`ERR_CANCELLED`).
   * A listener added after a one-shot ran is called at once, without the result.
   */
  addListener(fn: TaskListener): this {
    if (typeof fn !== 'function') throw new NetloopError('ERR_INVALID_ARG_TYPE', `The "listener" argument must be of type function. Received ${typeof fn}`)
    this.#future().add(fn)
    return this
  }

  /** Removes a listener added with `addListener`; true if it was still waiting. */
  removeListener(fn: TaskListener): boolean {
    return futureOf(this)?.remove(fn) ?? false
  }

  /** Awaiting a task waits for its outcome (a periodic one: until it is cancelled, then rejects). */
  then<A = unknown, B = never>(onfulfilled?: ((value: unknown) => A | PromiseLike<A>) | null, onrejected?: ((reason: any) => B | PromiseLike<B>) | null): Promise<A | B> {
    const f = this.#future()
    return f.asPromise().then(onfulfilled, onrejected)
  }
}

/** A periodic task: `period` ms (> 0: fixed rate; < 0: fixed delay of -period), and the exact next deadline. */
export class PeriodicTask extends ScheduledTask {
  declare readonly period: number
  declare at: number

  constructor(queue: OwningQueue, fn: Task, period: number, at: number) {
    super(queue, fn)
    this.period = period
    this.at = at
  }

  override get periodic(): boolean {
    return true
  }
}

export const before = (a: ScheduledTask, b: ScheduledTask): boolean =>
  a._ms < b._ms || (a._ms === b._ms && (a._us < b._us || (a._us === b._us && a._seq < b._seq)))

/**
 * Sets `task`'s deadline to `at` (`performance.now()` ms) in whole µs: rounded up when
 * `late` (a delay: never early), else down (due now: a deadline up to 1 µs before the call
 * changes no order that matters, and one after it would look future to the native side and
 * cost a 1 ms uv timer instead of the next iteration).
 */
export function setDeadline(task: ScheduledTask, at: number, late: boolean): void {
  const us = late ? Math.ceil(at * 1000) : Math.floor(at * 1000)
  const ms = Math.floor(us / 1000)
  task._ms = ms
  task._us = us - ms * 1000
}

/** The deadline of `task` in `performance.now()` ms (never earlier than the one it was given). */
export const deadlineOf = (task: ScheduledTask): number => task._ms + task._us / 1000
