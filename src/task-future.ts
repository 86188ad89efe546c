/**
 * The future side of a scheduled task (Netty's `ScheduledFuture`: listeners, `await`), made
 * only for a task someone listens to or awaits. It is kept beside the task in a WeakMap, so a
 * timer nobody listens to stays as small as before (timers.ts counts its fields).
 *
 * Ground rules (the loop's thread only): a one-shot's outcome is its callback's result
 * (awaited when it is a promise) or what it threw, recorded by a wrapper put in place of the
 * callback when the first listener arrives; a cancelled task fails with `ERR_CANCELLED`; a
 * periodic task completes only when cancelled. Listeners run once, in the order added.
 */
import { NetloopError } from './errors'
import type { Task } from './timers'

/** A listener of a scheduled task: `error` null on success, with the task's result as `value`. */
export type TaskListener = (error: Error | null, value?: unknown) => void

/** @internal */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: Error }

function call(fn: TaskListener, o: Outcome): void {
  try {
    if (o.ok) fn(null, o.value)
    else fn(o.error, undefined)
  } catch (e) {
    console.error('netloop: a scheduled task listener threw:', e)
  }
}

/** @internal */
export class TaskFuture {
  outcome: Outcome | undefined
  #listeners: TaskListener[] = []
  #promise: Promise<unknown> | undefined

  settle(o: Outcome): void {
    if (this.outcome !== undefined) return
    this.outcome = o
    const ls = this.#listeners
    this.#listeners = []
    for (const fn of ls) call(fn, o)
  }

  add(fn: TaskListener): void {
    if (this.outcome !== undefined) call(fn, this.outcome)
    else this.#listeners.push(fn)
  }

  remove(fn: TaskListener): boolean {
    const i = this.#listeners.indexOf(fn)
    if (i < 0) return false
    this.#listeners.splice(i, 1)
    return true
  }

  /** A real Promise of the outcome, made on first use (an ignored failure is no unhandled rejection). */
  asPromise(): Promise<unknown> {
    return (this.#promise ??= new Promise<unknown>((resolve, reject) => this.add((e, v) => (e ? reject(e) : resolve(v)))))
  }
}

const futures = new WeakMap<object, TaskFuture>()
/** Futures made so far: while 0, cancelling a task looks nothing up. */
let futureCount = 0

/** @internal */
export function futureOf(task: object): TaskFuture | undefined {
  return futureCount > 0 ? futures.get(task) : undefined
}

/** @internal */
export function newFuture(task: object): TaskFuture {
  const f = new TaskFuture()
  futures.set(task, f)
  futureCount++
  return f
}

/** @internal */
export const cancelledError = (): NetloopError => new NetloopError('ERR_CANCELLED', 'the scheduled task was cancelled')

/** @internal A cancelled task's future fails (if anyone listens). */
export function settleCancelled(task: object): void {
  futureOf(task)?.settle({ ok: false, error: cancelledError() })
}

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)))

/** @internal `fn`, recording its outcome in `future`; what it throws or rejects with still reaches the loop's `onTaskError`. */
export function recording(fn: Task, future: TaskFuture): Task {
  return () => {
    let r: unknown
    try {
      r = fn()
    } catch (e) {
      future.settle({ ok: false, error: asError(e) })
      throw e
    }
    if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function') {
      ;(r as PromiseLike<unknown>).then(
        (value) => future.settle({ ok: true, value }),
        (e) => future.settle({ ok: false, error: asError(e) }),
      )
    } else future.settle({ ok: true, value: r })
    return r
  }
}
