/**
 * `EventLoop`: a Rust event loop (mio selector, lock-free task queue, timer heap) attached to
 * the calling JS thread. libuv watches the loop's selector and runs one loop iteration per
 * wake-up, so tasks, timers and channel events run synchronously on this thread, in the
 * loop's order; promises and nextTicks they create run right after the iteration.
 *
 * Ground rules (all state here is touched on the loop's thread only):
 * - JS tasks live in a FIFO here; one native "marker" task runs up to JS_BATCH of them. At
 *   most 64 markers run per loop iteration, then the iteration hands the thread back to
 *   libuv and the next one runs in libuv's poll phase: Node's timers, I/O and setImmediate
 *   always get their turn, however many tasks keep coming.
 * - Every task whose `execute` returned runs, or is reported to `onTaskError` with an
 *   `ERR_REJECTED_EXECUTION` error (only if the loop was destroyed under it).
 * - Tasks and timers run in the async context of the code that submitted them.
 */
import { AsyncResource } from 'node:async_hooks'
import { native } from './binding'
import type * as Native from '../native'
import {
  NetloopError,
  checkDelay,
  checkDuration,
  checkFunction,
  checkInteger,
  checkPeriod,
  fromNative,
  invalidArgType,
  outOfRange,
  rejected,
} from './errors'
import { channelMetrics, closeChannelsOf, type ChannelMetrics } from './hub'

const NativeEventLoop = native.NativeEventLoop
type NativeEventLoop = Native.NativeEventLoop
const TIMER_FIRED_SLOTS = native.TIMER_FIRED_SLOTS
const TIMER_OP_FIELDS = native.TIMER_OP_FIELDS
const TIMER_OP_HEADER = native.TIMER_OP_HEADER
const TIMER_OPS_CAPACITY = native.TIMER_OPS_CAPACITY

/** Lifecycle of a loop, as in Netty. */
export type EventLoopState = 'not-started' | 'started' | 'shutting-down' | 'shutdown' | 'terminated'

/** A task: its return value is ignored, except that a rejected promise goes to `onTaskError`. */
export type Task = () => unknown

export interface EventLoopOptions {
  /** Diagnostics name (default `netloop-js`). */
  name?: string
  /** Percentage of an iteration given to I/O, 1..100 (default 50); tasks get the rest. */
  ioRatio?: number
  /**
   * Most tasks that may wait to run (default: unbounded): `execute` beyond it throws
   * `ERR_REJECTED_EXECUTION`. Bounds this thread's task queue and, separately, the queue of
   * tasks posted from other threads.
   */
  maxPendingTasks?: number
  /**
   * Receives what tasks and timers throw (or their promises reject with) and loop failures
   * (`ERR_LOOP_FAILED`). Default: printed to stderr. The loop goes on.
   */
  onTaskError?: (error: unknown, loop: EventLoop) => void
}

/** JS tasks run per native task (marker). */
const JS_BATCH = 32
/** Timer ids are u32 on the native side; 0 is never used. */
const MAX_TIMER_ID = 0xfffffffe

const enum Dispatch {
  Task = 0,
  Timers = 1,
  Terminated = 2,
  Remote = 3,
  Fault = 4,
}
/** The native side packs (kind, arg) into one number: arg * PACK + kind. */
const PACK = 8

/**
 * Timer ops shared with the native side; the layout is defined in crates/node/src/timers.rs
 * and exported from there: `[count, (kind, id, a, b, jsStamp) × OPS_CAPACITY, fired ids ×
 * FIRED_SLOTS]`, stamps from `performance.now()`.
 */
const OP_HEADER = TIMER_OP_HEADER
const OP_FIELDS = TIMER_OP_FIELDS
const OPS_CAPACITY = TIMER_OPS_CAPACITY
const FIRED_SLOTS = TIMER_FIRED_SLOTS
const FIRED_BASE = OP_HEADER + OP_FIELDS * OPS_CAPACITY
const enum Op {
  OneShot = 1,
  FixedRate = 2,
  FixedDelay = 3,
  Cancel = 4,
}

/** @internal the layout this module uses (checked against the native side by a test). */
export const _timerLayout = { OP_HEADER, OP_FIELDS, OPS_CAPACITY, FIRED_SLOTS, length: FIRED_BASE + FIRED_SLOTS }

/** The test hooks of the native loop (only with NETLOOP_TEST_HOOKS=1; not in its typings). */
interface NativeTestHooks {
  testHook(op: string, a: number, b: number): number
}

/** A pending one-shot or periodic task; `cancel()` stops it. */
export class ScheduledTask {
  #state: 'pending' | 'done' | 'cancelled' = 'pending'
  readonly #cancel: (task: ScheduledTask) => void
  readonly periodic: boolean
  /** @internal */
  readonly _id: number
  /** @internal */
  readonly _fn: Task
  /** @internal the async context of the `schedule` call. */
  readonly _ar: AsyncResource

  /** @internal */
  constructor(id: number, fn: Task, periodic: boolean, ar: AsyncResource, cancel: (task: ScheduledTask) => void) {
    this._id = id
    this._fn = fn
    this.periodic = periodic
    this._ar = ar
    this.#cancel = cancel
  }

  /** Cancels the task; `true` if it was still pending (a periodic task stops repeating). */
  cancel(): boolean {
    if (this.#state !== 'pending') return false
    this.#state = 'cancelled'
    this.#cancel(this)
    return true
  }

  get isCancelled(): boolean {
    return this.#state === 'cancelled'
  }

  /** A one-shot task that has run. */
  get isDone(): boolean {
    return this.#state === 'done'
  }

  /** @internal */
  _markDone(): void {
    if (this.#state === 'pending') this.#state = 'done'
  }

  /** @internal the loop cancelled it (shutdown). */
  _markCancelled(): void {
    if (this.#state === 'pending') this.#state = 'cancelled'
  }
}

function defaultTaskError(error: unknown, loop: EventLoop): void {
  console.error(`netloop: a task on loop ${loop.name} threw; the loop goes on:`, error)
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
export class EventLoop {
  readonly #native: NativeEventLoop
  #tasks: Array<Task | undefined> = []
  #contexts: Array<AsyncResource | undefined> = []
  #head = 0
  #markerQueued = false
  readonly #maxPending: number
  readonly #timers = new Map<number, ScheduledTask>()
  readonly #ops = new Float64Array(FIRED_BASE + FIRED_SLOTS)
  #inDispatch = 0
  #shutdownRequested = false
  #terminated = false
  readonly #cancelTimer = (task: ScheduledTask) => this.#cancelTimerOp(task)
  readonly #reportAsync = (error: unknown) => this.#fail(error)
  /**
   * The native side holds this function weakly while the loop is idle (so an unreferenced
   * idle loop can be collected): the loop must hold it strongly itself, or the function could
   * be collected while the loop is still in use.
   */
  readonly #dispatchFn = (packed: number) => this.#dispatch(packed)
  #nextTimerId = 1
  #timerIdsWrapped = false
  #taskFailures = 0
  readonly #onTaskError: (error: unknown, loop: EventLoop) => void
  readonly #termination: Promise<void>
  #resolveTermination!: () => void
  /** @internal test and benchmark hook: tasks posted by `_postFromOtherThread` land here. */
  _onRemoteTask?: (latencyNs: number) => void

  constructor(options: EventLoopOptions = {}) {
    if (options === null || typeof options !== 'object') throw invalidArgType('options', 'object', options)
    const { name, ioRatio, maxPendingTasks, onTaskError } = options
    if (name !== undefined && typeof name !== 'string') throw invalidArgType('options.name', 'string', name)
    if (ioRatio !== undefined) checkInteger('options.ioRatio', ioRatio, 1, 100)
    if (maxPendingTasks !== undefined) checkInteger('options.maxPendingTasks', maxPendingTasks, 1, Number.MAX_SAFE_INTEGER)
    if (onTaskError !== undefined) checkFunction('options.onTaskError', onTaskError)
    this.#onTaskError = onTaskError ?? defaultTaskError
    this.#maxPending = maxPendingTasks ?? Infinity
    this.#termination = new Promise((resolve) => (this.#resolveTermination = resolve))
    try {
      this.#native = new NativeEventLoop(this.#dispatchFn, this.#ops, performance.now(), {
        name,
        ioRatio,
        maxPendingTasks: maxPendingTasks === undefined ? undefined : Math.min(maxPendingTasks, 0xffffffff),
      })
    } catch (error) {
      throw fromNative(error)
    }
  }

  #dispatch(packed: number): void {
    const kind = packed % PACK
    const arg = (packed - kind) / PACK
    this.#inDispatch++
    try {
      switch (kind) {
        case Dispatch.Task:
          this.#runTaskBatch()
          return
        case Dispatch.Timers:
          this.#runTimers(arg)
          return
        case Dispatch.Terminated:
          this.#onTerminated()
          return
        case Dispatch.Remote:
          this._onRemoteTask?.(arg)
          return
        case Dispatch.Fault:
          this.#fail(new NetloopError('ERR_LOOP_FAILED', `loop ${this.name} failed: libuv could not watch its rebuilt selector (libuv error -${arg}); it terminates`))
          return
      }
    } finally {
      // The native side drains buffered timer ops when this call returns.
      this.#inDispatch--
    }
  }

  #runTimers(count: number): void {
    // Ids are read one at a time: a callback may cancel a timer later in the batch.
    for (let i = 0; i < count; i++) {
      const id = this.#ops[FIRED_BASE + i]
      const task = this.#timers.get(id)
      if (!task) continue
      if (!task.periodic) {
        this.#timers.delete(id)
        task._markDone()
      }
      task._ar.runInAsyncScope(this.#run, this, task._fn)
    }
  }

  /**
   * One native task (a "marker") runs up to JS_BATCH queued JS tasks, then queues another
   * marker if tasks remain. Invariant: `#markerQueued` is true exactly while a marker is in
   * the native queue, so `execute()` crosses into native code once per batch, not per task.
   */
  #runTaskBatch(): void {
    this.#markerQueued = false
    const end = Math.min(this.#tasks.length, this.#head + JS_BATCH)
    while (this.#head < end) {
      const fn = this.#tasks[this.#head]
      const context = this.#contexts[this.#head]
      this.#tasks[this.#head] = undefined
      this.#contexts[this.#head++] = undefined
      if (fn) context!.runInAsyncScope(this.#run, this, fn)
    }
    if (this.#head === this.#tasks.length) {
      this.#tasks = []
      this.#contexts = []
      this.#head = 0
      return
    }
    if (this.#head > 1024 && this.#head * 2 > this.#tasks.length) {
      this.#tasks = this.#tasks.slice(this.#head)
      this.#contexts = this.#contexts.slice(this.#head)
      this.#head = 0
    }
    if (!this.#markerQueued) {
      // These tasks were accepted: the re-queue is never rejected while the loop runs tasks.
      const r = this.#native.requeue()
      if (r === 0) this.#markerQueued = true
      else if (r === 1) {
        // The loop's final drain (shut down, nothing new is queued): run the rest now.
        while (this.#head < this.#tasks.length) {
          const fn = this.#tasks[this.#head]
          const context = this.#contexts[this.#head]
          this.#tasks[this.#head] = undefined
          this.#contexts[this.#head++] = undefined
          if (fn) context!.runInAsyncScope(this.#run, this, fn)
        }
        this.#tasks = []
        this.#contexts = []
        this.#head = 0
      }
      else this.#rejectQueued()
    }
  }

  #run(fn: Task): void {
    try {
      const result = fn() as PromiseLike<unknown> | undefined
      if (result != null && typeof result.then === 'function') result.then(undefined, this.#reportAsync)
    } catch (error) {
      this.#fail(error)
    }
  }

  #fail(error: unknown): void {
    this.#taskFailures++
    try {
      this.#onTaskError(error, this)
    } catch (again) {
      console.error('netloop: onTaskError threw:', again)
    }
  }

  /** Tasks that can no longer run (the loop is gone) are reported, never dropped silently. */
  #rejectQueued(): void {
    const tasks = this.#tasks
    const from = this.#head
    this.#tasks = []
    this.#contexts = []
    this.#head = 0
    this.#markerQueued = false
    for (let i = from; i < tasks.length; i++) {
      if (tasks[i]) this.#fail(rejected(`loop ${this.name} terminated before the task ran`))
    }
  }

  #onTerminated(): void {
    this.#terminated = true
    this.#rejectQueued()
    for (const task of this.#timers.values()) task._markCancelled()
    this.#timers.clear()
    this.#resolveTermination()
  }

  /**
   * The async context for a task submitted now. `new AsyncResource` costs about 30 ns on
   * Node 20 (with or without AsyncLocalStorage in use); `AsyncResource.bind` and
   * `AsyncLocalStorage.snapshot()` about 8 µs. A context cannot be shared between tasks
   * submitted from the same resource: `AsyncLocalStorage.run` changes the store of the
   * current resource in place.
   */
  #capture(): AsyncResource {
    return new AsyncResource('netloop:task')
  }

  get name(): string {
    return this.#native.name
  }

  /** @internal The native loop (channels are created on it). */
  get _native(): NativeEventLoop {
    return this.#native
  }

  /**
   * Counters of this loop's JS boundary: iterations, deliveries (native→JS calls carrying
   * channel events), events, JS→native calls, ops, bytes in/out of JS, channels.
   */
  metrics(): ChannelMetrics {
    return channelMetrics(this) ?? { iterations: 0, deliveries: 0, events: 0, jsToNativeCalls: 0, ops: 0, bytesIn: 0, bytesOut: 0, channels: 0 }
  }

  get state(): EventLoopState {
    return this.#native.state as EventLoopState
  }

  /** Tasks queued and not yet run (this thread's and other threads'). */
  get pendingTasks(): number {
    return this.#tasks.length - this.#head + this.#native.pendingTasks
  }

  /**
   * Keeps the process alive until the loop terminates, as a listening server does. By
   * default an idle loop does not; queued tasks, pending timers and channels always do.
   */
  ref(): this {
    this.#native.setRef(true)
    return this
  }

  /** Undoes `ref()`: an idle loop no longer keeps the process alive. */
  unref(): this {
    this.#native.setRef(false)
    return this
  }

  /** Tasks and timers that threw (or whose promise rejected) so far. */
  get taskFailures(): number {
    return this.#taskFailures
  }

  /** True on the thread that runs this loop (the thread that created it). */
  inEventLoop(): boolean {
    return this.#native.inEventLoop()
  }

  /**
   * Runs `fn` on the loop, after the tasks already queued, in the async context of this call
   * (as `setImmediate` does). See the class documentation for where it runs relative to
   * Node's phases. Throws `ERR_REJECTED_EXECUTION` once the loop is shut down or when
   * `maxPendingTasks` tasks are waiting; a task accepted here always runs.
   */
  execute(fn: Task): void {
    if (typeof fn !== 'function') throw invalidArgType('task', 'function', fn)
    if (this.#terminated) throw rejected(`loop ${this.name} has terminated`)
    if (this.#tasks.length - this.#head >= this.#maxPending) throw rejected(`loop ${this.name} already has ${this.#maxPending} pending tasks`)
    if (!this.#markerQueued) {
      try {
        this.#native.execute()
      } catch (error) {
        throw fromNative(error)
      }
      this.#markerQueued = true
    }
    this.#tasks.push(fn)
    this.#contexts.push(this.#capture())
  }

  /** Queues a timer op for the native side (inside a dispatch call: no napi call per op). */
  #pushOp(kind: Op, id: number, a: number, b: number): void {
    const ops = this.#ops
    let n = ops[0]
    if (n === OPS_CAPACITY) {
      this.#native.drainOps()
      n = 0
    } else if (n === 0 && this.#inDispatch === 0) {
      // Outside a loop iteration nothing drains the buffer by itself: ask for an iteration.
      this.#native.requestDrain()
    }
    const at = OP_HEADER + n * OP_FIELDS
    ops[at] = kind
    ops[at + 1] = id
    ops[at + 2] = a
    ops[at + 3] = b
    ops[at + 4] = performance.now()
    ops[0] = n + 1
  }

  #cancelTimerOp(task: ScheduledTask): void {
    if (this.#timers.get(task._id) !== task) return
    this.#timers.delete(task._id)
    this.#pushOp(Op.Cancel, task._id, 0, 0)
  }

  /** The next timer id that is not in use (ids wrap after 2^32 - 2 schedules). */
  #allocTimerId(): number {
    let id = this.#nextTimerId
    if (this.#timerIdsWrapped) {
      while (this.#timers.has(id)) id = id >= MAX_TIMER_ID ? 1 : id + 1
    }
    if (id >= MAX_TIMER_ID) {
      this.#nextTimerId = 1
      this.#timerIdsWrapped = true
    } else {
      this.#nextTimerId = id + 1
    }
    return id
  }

  #addTimer(fn: Task, kind: Op, a: number, b: number): ScheduledTask {
    if (this.#shutdownRequested || this.#terminated) throw rejected(`loop ${this.name} is shutting down: timers are cancelled, none are accepted`)
    const id = this.#allocTimerId()
    const task = new ScheduledTask(id, fn, kind !== Op.OneShot, this.#capture(), this.#cancelTimer)
    this.#pushOp(kind, id, a, b)
    this.#timers.set(id, task)
    return task
  }

  /** Runs `fn` once after `delayMs` (a finite number; 0 or negative: due now). */
  schedule(fn: Task, delayMs: number): ScheduledTask {
    checkFunction('task', fn)
    return this.#addTimer(fn, Op.OneShot, checkDelay('delayMs', delayMs), 0)
  }

  /**
   * Runs `fn` after `initialDelayMs`, then every `periodMs` (at least 0.001, i.e. 1 µs) from
   * the previous deadline; missed runs catch up.
   */
  scheduleAtFixedRate(fn: Task, initialDelayMs: number, periodMs: number): ScheduledTask {
    checkFunction('task', fn)
    return this.#addTimer(fn, Op.FixedRate, checkDuration('initialDelayMs', initialDelayMs), checkPeriod('periodMs', periodMs))
  }

  /** Runs `fn` after `initialDelayMs`, then `delayMs` (at least 0.001, i.e. 1 µs) after the end of each run. */
  scheduleWithFixedDelay(fn: Task, initialDelayMs: number, delayMs: number): ScheduledTask {
    checkFunction('task', fn)
    return this.#addTimer(fn, Op.FixedDelay, checkDuration('initialDelayMs', initialDelayMs), checkPeriod('delayMs', delayMs))
  }

  /**
   * Shuts the loop down (Netty's graceful shutdown) and resolves when it has terminated.
   *
   * Pending timers are cancelled at once and new timers are rejected (`ERR_REJECTED_EXECUTION`).
   * Tasks keep being accepted and run until none ran for `quietPeriodMs` (default 2000 ms);
   * `timeoutMs` (default 15000 ms) bounds the whole shutdown, also when tasks keep coming
   * during the quiet period. Then new tasks are rejected, the tasks already accepted run, and
   * the loop terminates. Both are finite numbers >= 0, with `quietPeriodMs <= timeoutMs`
   * (`ERR_OUT_OF_RANGE` otherwise). Calling it again returns the same promise.
   */
  shutdownGracefully(quietPeriodMs = 2000, timeoutMs = 15000): Promise<void> {
    const quiet = checkDuration('quietPeriodMs', quietPeriodMs)
    const timeout = checkDuration('timeoutMs', timeoutMs)
    if (quiet > timeout) throw outOfRange('quietPeriodMs', `<= timeoutMs (${timeout})`, quiet)
    if (this.#shutdownRequested || this.#terminated) return this.#termination
    if (this.#ops[0] > 0) this.#native.drainOps()
    // As Netty's closeAll: the loop's channels close first (their pending writes fail, their
    // handlers see inactive and unregistered while the loop still runs tasks).
    closeChannelsOf(this)
    try {
      this.#native.shutdownGracefully(quiet, timeout)
    } catch (error) {
      throw fromNative(error)
    }
    this.#shutdownRequested = true
    for (const task of this.#timers.values()) task._markCancelled()
    this.#timers.clear()
    return this.#termination
  }

  /** Resolves when the loop has terminated. */
  terminationFuture(): Promise<void> {
    return this.#termination
  }

  /** @internal Terminates at once without running JS (a loop nobody got yet). */
  _destroy(): void {
    this.#native.destroy()
    this.#shutdownRequested = true
    if (!this.#terminated) this.#onTerminated()
  }


  #hook(op: string, a = 0, b = 0): number {
    try {
      return (this.#native as unknown as NativeTestHooks).testHook(op, a, b)
    } catch (error) {
      throw fromNative(error)
    }
  }

  /** @internal Test hook: the next timer id (to test the wrap-around). */
  _setNextTimerId(id: number): void {
    this.#nextTimerId = id
  }

  /** @internal Another OS thread posts `count` tasks to this loop (tests and benchmarks). */
  _postFromOtherThread(count: number, delayMs = 0): void {
    this.#hook('post', count, delayMs)
  }

  /** @internal Selector rebuilds of this loop so far (premature wake-ups past the threshold). */
  get _selectorRebuilds(): number {
    return this.#hook('rebuilds')
  }

  /** @internal Test hook: the next `count` polls report a premature empty wake-up. */
  _injectSelectorFaults(count: number): void {
    this.#hook('faults', count)
  }

  /** @internal Test hook: the next re-watch of a rebuilt selector fails. */
  _failNextRewatch(): void {
    this.#hook('failRewatch')
  }

  /** @internal Wake-ups of this loop's waker so far. */
  get _wakeups(): number {
    return this.#hook('wakeups')
  }
}
