/**
 * The JS tasks of an `EventLoop` (src/loop.ts): a FIFO here, run in batches by native
 * "marker" tasks, and the loop's failure reporting (`onTaskError`).
 *
 * Ground rules (the loop's thread only):
 * - One native marker runs up to JS_BATCH queued JS tasks, then queues another marker if
 *   tasks remain. `#markerQueued` is true exactly while a marker is in the native queue, so
 *   `execute()` crosses into native code once per batch, not per task.
 * - Every task accepted here runs, or is reported to `onTaskError` with an
 *   `ERR_REJECTED_EXECUTION` error (only if the loop was destroyed under it).
 */
import type * as Native from '../native'
import { fromNative, rejected } from './errors'
import type { EventLoop } from './loop'
import { TaskQueue } from './tasks'
import type { Task } from './timers'

/** JS tasks run per native task (marker). */
const JS_BATCH = 32

/** @internal */
export class LoopTasks {
  readonly #queue = new TaskQueue()
  readonly #runTask = (fn: Task) => this.run(fn)
  readonly #reportAsync = (error: unknown) => this.fail(error)
  #markerQueued = false
  /** Tasks and timers that threw (or whose promise rejected) so far. */
  failures = 0
  /** Set by the loop once its native loop exists. */
  native!: Native.NativeEventLoop

  constructor(
    readonly loop: EventLoop,
    readonly maxPending: number,
    readonly onTaskError: (error: unknown, loop: EventLoop) => void,
  ) {}

  /** JS tasks queued here and not yet run. */
  get size(): number {
    return this.#queue.size
  }

  /** Queues `fn` (the loop checked that it may run); throws ERR_REJECTED_EXECUTION when full. */
  push(fn: Task): void {
    if (this.#queue.size >= this.maxPending) throw rejected(`loop ${this.loop.name} already has ${this.maxPending} pending tasks`)
    if (!this.#markerQueued) {
      try {
        this.native.execute()
      } catch (error) {
        throw fromNative(error)
      }
      this.#markerQueued = true
    }
    this.#queue.push(fn)
  }

  /** A marker ran: up to JS_BATCH tasks run, and another marker is queued if tasks remain. */
  runBatch(): void {
    this.#markerQueued = false
    this.#queue.run(JS_BATCH, this.#runTask)
    // Done, or a task executed by this batch already queued the next marker.
    if (this.#queue.size === 0 || this.#markerQueued) return
    // These tasks were accepted: the re-queue is never rejected while the loop runs tasks.
    const r = this.native.requeue()
    if (r === 0) this.#markerQueued = true
    // The loop's final drain (shut down, nothing new is queued): run the rest now.
    else if (r === 1) this.#queue.run(Infinity, this.#runTask)
    else this.rejectQueued()
  }

  /** Runs one task (or timer); what it throws or rejects goes to `onTaskError`. */
  run(fn: Task): void {
    try {
      const result = fn() as PromiseLike<unknown> | undefined
      if (result != null && typeof result.then === 'function') result.then(undefined, this.#reportAsync)
    } catch (error) {
      this.fail(error)
    }
  }

  fail(error: unknown): void {
    this.failures++
    try {
      this.onTaskError(error, this.loop)
    } catch (again) {
      console.error('netloop: onTaskError threw:', again)
    }
  }

  /** Tasks that can no longer run (the loop is gone) are reported, never dropped silently. */
  rejectQueued(): void {
    const n = this.#queue.clear()
    this.#markerQueued = false
    for (let i = 0; i < n; i++) this.fail(rejected(`loop ${this.loop.name} terminated before the task ran`))
  }
}
