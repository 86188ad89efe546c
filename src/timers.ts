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
import { TimerArmSlot } from './protocol'
import { CANCELLED, DONE, IN_RUN, NOT_QUEUED, PeriodicTask, ScheduledTask, type Task, before, deadlineOf, setDeadline } from './scheduled-task'
import { settleCancelled } from './task-future'

export { ScheduledTask, type Task } from './scheduled-task'
export type { TaskListener } from './task-future'

/**
 * A dispatch stops once it has run this long (checked every BUDGET_EVERY timers) and re-arms
 * for the rest, which run in the next loop iteration. Time, not a count, is what Node's other
 * phases wait for; a count small enough to bound slow callbacks would cut a burst of trivial
 * ones into many iterations, and a V8 scavenge between them copies every timer still queued
 * (measured: 100 000 due timers in 98 dispatches of 1024 cost ~2x the time of one pass).
 */
const BUDGET_MS = 4
const BUDGET_EVERY = 16

/** @internal The pending timers of one loop and the arm state shared with the native side. */
export class TimerQueue {
  readonly #heap: ScheduledTask[] = []
  #head: ScheduledTask | null = null
  #tail: ScheduledTask | null = null
  #size = 0
  #nextSeq = 0
  /** The deadline last written to the arm buffer (-1: disarmed). */
  #armed = -1
  #closed = false
  readonly #arm: Float64Array
  readonly #requestDrain: () => void
  readonly #run: (task: ScheduledTask) => void

  /**
   * `arm`: the buffer shared with the native side; `requestDrain`: called when the buffer
   * became dirty (the owner asks for a drain if none will happen by itself); `run`: runs a
   * timer's callback in its async context, reporting what it throws.
   */
  constructor(arm: Float64Array, requestDrain: () => void, run: (task: ScheduledTask) => void) {
    this.#arm = arm
    this.#requestDrain = requestDrain
    this.#run = run
    arm[TimerArmSlot.Dirty] = 0
    arm[TimerArmSlot.Deadline] = -1
    arm[TimerArmSlot.Stamp] = 0
  }

  /** Pending timers. */
  get size(): number {
    return this.#size
  }

  /** A new timer: first run `delay` ms (clamped to >= 0) from now. */
  add(fn: Task, delay: number, period: number): ScheduledTask {
    const now = performance.now()
    const at = delay > 0 ? now + delay : now
    const task = period === 0 ? new ScheduledTask(this, fn) : new PeriodicTask(this, fn, period, at)
    setDeadline(task, at, delay > 0)
    this.#insert(task)
    // Only an earlier deadline than the armed one moves the native timer.
    if (this.#armed < 0 || at < this.#armed) this.#sync(now)
    return task
  }

  #insert(task: ScheduledTask): void {
    task._seq = this.#nextSeq++
    this.#size++
    const tail = this.#tail
    if (tail === null) {
      this.#head = this.#tail = task
      task._where = IN_RUN
    } else if (!before(task, tail)) {
      tail._next = task
      task._prev = tail
      this.#tail = task
      task._where = IN_RUN
    } else {
      const heap = this.#heap
      heap.push(task)
      this.#up(heap.length - 1, task)
    }
  }

  #up(i: number, task: ScheduledTask): void {
    const heap = this.#heap
    while (i > 0) {
      const p = (i - 1) >> 1
      const parent = heap[p]
      if (!before(task, parent)) break
      heap[i] = parent
      parent._where = i
      i = p
    }
    heap[i] = task
    task._where = i
  }

  #down(i: number, task: ScheduledTask): void {
    const heap = this.#heap
    const n = heap.length
    for (;;) {
      let c = 2 * i + 1
      if (c >= n) break
      let child = heap[c]
      if (c + 1 < n) {
        const right = heap[c + 1]
        if (before(right, child)) {
          c++
          child = right
        }
      }
      if (!before(child, task)) break
      heap[i] = child
      child._where = i
      i = c
    }
    heap[i] = task
    task._where = i
  }

  /** The earliest pending timer. */
  #peek(): ScheduledTask | undefined {
    const head = this.#head
    const top = this.#heap.length > 0 ? this.#heap[0] : undefined
    if (head === null) return top
    return top !== undefined && before(top, head) ? top : head
  }

  /** Takes `task` out of its container (it must be queued). */
  #take(task: ScheduledTask): void {
    const where = task._where
    task._where = NOT_QUEUED
    this.#size--
    if (where === IN_RUN) {
      const prev = task._prev
      const next = task._next
      if (prev === null) this.#head = next
      else prev._next = next
      if (next === null) this.#tail = prev
      else next._prev = prev
      task._prev = task._next = null
      return
    }
    const heap = this.#heap
    const last = heap.pop()!
    if (last === task) return
    if (where > 0 && before(last, heap[(where - 1) >> 1])) this.#up(where, last)
    else this.#down(where, last)
  }

  /** @internal `task.cancel()` of a pending task: out of the queue at once; the native timer moves if it was the earliest. */
  _cancel(task: ScheduledTask): void {
    if (task._where === NOT_QUEUED) {
      task._where = CANCELLED
      settleCancelled(task)
      return
    }
    this.#take(task)
    task._where = CANCELLED
    settleCancelled(task)
    this.#sync(NaN)
  }

  /** Writes the earliest deadline to the arm buffer if it changed. `now`: a fresh `performance.now()` or NaN. */
  #sync(now: number): void {
    const first = this.#peek()
    const want = first === undefined ? -1 : deadlineOf(first)
    if (want === this.#armed) return
    this.#armed = want
    const arm = this.#arm
    arm[TimerArmSlot.Deadline] = want
    arm[TimerArmSlot.Stamp] = now
    if (arm[TimerArmSlot.Dirty] === 0) {
      arm[TimerArmSlot.Dirty] = 1
      this.#requestDrain()
    }
  }

  /**
   * The native timer fired (and is gone): runs the timers due now that were queued before
   * this call, within the bounds, then arms the native timer for the earliest one left.
   */
  runDue(): void {
    this.#armed = -1
    const start = performance.now()
    // Due: deadline <= start, i.e. (ms, us) <= (nowMs, nowUs) with start rounded down.
    const startUs = Math.floor(start * 1000)
    const nowMs = Math.floor(startUs / 1000)
    const nowUs = startUs - nowMs * 1000
    const seqEnd = this.#nextSeq
    let ran = 0
    for (;;) {
      const task = this.#peek()
      if (task === undefined || task._ms > nowMs || (task._ms === nowMs && task._us > nowUs) || task._seq >= seqEnd) break
      this.#take(task)
      if (!task.periodic) {
        task._where = DONE
        this.#run(task)
      } else {
        this.#run(task)
        if (task._where === NOT_QUEUED) {
          // Still pending (not cancelled by its own run).
          if (this.#closed) {
            task._where = CANCELLED
            settleCancelled(task)
          } else {
            const p = task as PeriodicTask
            const period = p.period
            p.at = period > 0 ? p.at + period : performance.now() - period
            setDeadline(task, p.at, true)
            this.#insert(task)
          }
        }
      }
      if (++ran % BUDGET_EVERY === 0 && performance.now() - start >= BUDGET_MS) break
    }
    this.#sync(performance.now())
  }

  /** Shutdown or termination: every pending timer is cancelled; none is accepted from now on. */
  cancelAll(): void {
    this.#closed = true
    for (const task of this.#heap) {
      task._where = CANCELLED
      settleCancelled(task)
    }
    this.#heap.length = 0
    for (let t = this.#head; t !== null; ) {
      const next: ScheduledTask | null = t._next
      t._where = CANCELLED
      t._prev = t._next = null
      settleCancelled(t)
      t = next
    }
    this.#head = this.#tail = null
    this.#size = 0
    this.#sync(NaN)
  }
}
