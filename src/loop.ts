/**
 * `EventLoop`: a Rust event loop (mio selector, lock-free task queue, timer heap) attached to
 * the calling JS thread. libuv watches the loop's selector and runs one loop iteration per
 * wake-up, so tasks, timers and channel events run synchronously on this thread, in the
 * loop's order; promises and nextTicks they create run right after the iteration.
 */
import { NativeEventLoop } from '../native'
import { channelMetrics, type ChannelMetrics } from './hub'
import { checkFunction, checkMillis, checkPeriod, invalidArg } from './errors'

/** Lifecycle of a loop, as in Netty. */
export type EventLoopState = 'not-started' | 'started' | 'shutting-down' | 'shutdown' | 'terminated'

export interface EventLoopOptions {
  /** Diagnostics name. */
  name?: string
  /** Percentage of an iteration given to I/O, 1..100 (default 50); tasks get the rest. */
  ioRatio?: number
  /** Most tasks that may wait in the cross-thread queue (default: unbounded). */
  maxPendingTasks?: number
  /** Receives errors thrown by tasks and timers. Default: printed to stderr. The loop goes on. */
  onTaskError?: (error: unknown, loop: EventLoop) => void
}

/** JS tasks run per native task; bounds how long the loop goes without checking its budget. */
const JS_BATCH = 32

const enum Dispatch {
  Task = 0,
  Timers = 1,
  Terminated = 2,
  Remote = 3,
}

/**
 * Timer ops shared with the native side (see crates/node/src/timers.rs):
 * `[count, (kind, id, a, b, jsStamp) × OPS_CAPACITY, fired ids × FIRED_SLOTS]`, stamps from
 * `performance.now()`. The native side writes the ids of timers that fire together into the
 * fired region and dispatches them in one call.
 */
const OPS_CAPACITY = 256
const OP_HEADER = 1
const OP_FIELDS = 5
const FIRED_SLOTS = 64
const FIRED_BASE = OP_HEADER + OP_FIELDS * OPS_CAPACITY
const enum Op {
  OneShot = 1,
  FixedRate = 2,
  FixedDelay = 3,
  Cancel = 4,
}

/** A pending one-shot or periodic task; `cancel()` stops it. */
export class ScheduledTask {
  #state: 'pending' | 'done' | 'cancelled' = 'pending'
  readonly #cancel: (task: ScheduledTask) => void
  readonly periodic: boolean
  /** @internal */
  readonly _id: number
  /** @internal */
  readonly _fn: () => void

  /** @internal */
  constructor(id: number, fn: () => void, periodic: boolean, cancel: (task: ScheduledTask) => void) {
    this._id = id
    this._fn = fn
    this.periodic = periodic
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

/** One event loop attached to the calling JS thread. */
export class EventLoop {
  readonly #native: NativeEventLoop
  #tasks: Array<(() => void) | undefined> = []
  #head = 0
  #markerQueued = false
  readonly #timers = new Map<number, ScheduledTask>()
  readonly #ops = new Float64Array(FIRED_BASE + FIRED_SLOTS)
  #inDispatch = 0
  #shutdownRequested = false
  readonly #cancelTimer = (task: ScheduledTask) => this.#cancelTimerOp(task)
  #nextTimerId = 1
  #taskFailures = 0
  readonly #onTaskError: (error: unknown, loop: EventLoop) => void
  readonly #termination: Promise<void>
  #resolveTermination!: () => void
  /** @internal test and benchmark hook: tasks posted by `_postFromOtherThread` land here. */
  _onRemoteTask?: (latencyNs: number) => void

  constructor(options: EventLoopOptions = {}) {
    const { name, ioRatio, maxPendingTasks, onTaskError } = options
    if (ioRatio !== undefined && (!Number.isInteger(ioRatio) || ioRatio < 1 || ioRatio > 100)) {
      throw invalidArg(`ioRatio must be an integer in 1..100, got ${ioRatio}`)
    }
    if (maxPendingTasks !== undefined && (!Number.isInteger(maxPendingTasks) || maxPendingTasks < 1)) {
      throw invalidArg(`maxPendingTasks must be a positive integer, got ${maxPendingTasks}`)
    }
    if (onTaskError !== undefined) checkFunction('onTaskError', onTaskError)
    this.#onTaskError = onTaskError ?? defaultTaskError
    this.#termination = new Promise((resolve) => (this.#resolveTermination = resolve))
    // The native side packs (kind, arg) into one number: arg * 4 + kind.
    this.#native = new NativeEventLoop((packed: number) => this.#dispatch(packed % 4, Math.floor(packed / 4)), this, this.#ops, performance.now(), {
      name,
      ioRatio,
      maxPendingTasks: maxPendingTasks === undefined ? undefined : Math.min(maxPendingTasks, 0xffffffff),
    })
  }

  #dispatch(kind: number, arg: number): void {
    this.#inDispatch++
    try {
      this.#dispatchOne(kind, arg)
    } finally {
      // The native side drains buffered timer ops when this call returns.
      this.#inDispatch--
    }
  }

  #dispatchOne(kind: number, arg: number): void {
    switch (kind) {
      case Dispatch.Task:
        this.#runTaskBatch()
        return
      case Dispatch.Timers: {
        // Ids are read one at a time: a callback may cancel a timer later in the batch.
        for (let i = 0; i < arg; i++) {
          const id = this.#ops[FIRED_BASE + i]
          const task = this.#timers.get(id)
          if (!task) continue
          if (!task.periodic) {
            this.#timers.delete(id)
            task._markDone()
          }
          this.#run(task._fn)
        }
        return
      }
      case Dispatch.Terminated:
        for (const task of this.#timers.values()) task._markCancelled()
        this.#timers.clear()
        this.#resolveTermination()
        return
      case Dispatch.Remote:
        this._onRemoteTask?.(arg)
        return
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
      this.#tasks[this.#head++] = undefined
      if (fn) this.#run(fn)
    }
    if (this.#head === this.#tasks.length) {
      this.#tasks = []
      this.#head = 0
    } else {
      if (this.#head > 1024 && this.#head * 2 > this.#tasks.length) {
        this.#tasks = this.#tasks.slice(this.#head)
        this.#head = 0
      }
      if (!this.#markerQueued) {
        this.#native.execute()
        this.#markerQueued = true
      }
    }
  }

  #run(fn: () => void): void {
    try {
      fn()
    } catch (error) {
      this.#taskFailures++
      try {
        this.#onTaskError(error, this)
      } catch (again) {
        console.error('netloop: onTaskError threw:', again)
      }
    }
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

  /** Tasks waiting in the cross-thread queue. */
  get pendingTasks(): number {
    return this.#native.pendingTasks
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

  /** Tasks and timers that threw so far. */
  get taskFailures(): number {
    return this.#taskFailures
  }

  /** True on the thread that runs this loop (the thread that created it). */
  inEventLoop(): boolean {
    return this.#native.inEventLoop()
  }

  /** Runs `fn` on the loop, after the tasks already queued. */
  execute(fn: () => void): void {
    checkFunction('task', fn)
    if (!this.#markerQueued) {
      this.#native.execute()
      this.#markerQueued = true
    }
    this.#tasks.push(fn)
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

  /** Ops are buffered until shutdown; afterwards they go straight to the native side. */
  #buffering(): boolean {
    return !this.#shutdownRequested
  }

  #cancelTimerOp(task: ScheduledTask): void {
    if (!this.#timers.delete(task._id)) return
    if (this.#buffering()) this.#pushOp(Op.Cancel, task._id, 0, 0)
    else this.#native.cancel(task._id)
  }

  #addTimer(fn: () => void, kind: Op, a: number, b: number): ScheduledTask {
    checkFunction('task', fn)
    const id = this.#nextTimerId
    this.#nextTimerId = id >= 0xfffffffe ? 1 : id + 1
    const task = new ScheduledTask(id, fn, kind !== Op.OneShot, this.#cancelTimer)
    if (this.#buffering()) {
      this.#pushOp(kind, id, a, b)
    } else if (kind === Op.OneShot) {
      this.#native.schedule(id, a)
    } else {
      this.#native.schedulePeriodic(id, a, b, kind === Op.FixedRate)
    }
    this.#timers.set(id, task)
    return task
  }

  /** Runs `fn` once after `delayMs` (0 or negative: due now). */
  schedule(fn: () => void, delayMs: number): ScheduledTask {
    return this.#addTimer(fn, Op.OneShot, checkMillis('delayMs', delayMs), 0)
  }

  /** Runs `fn` after `initialDelayMs`, then every `periodMs` from the previous deadline; missed runs catch up. */
  scheduleAtFixedRate(fn: () => void, initialDelayMs: number, periodMs: number): ScheduledTask {
    return this.#addTimer(fn, Op.FixedRate, checkMillis('initialDelayMs', initialDelayMs), checkPeriod('periodMs', periodMs))
  }

  /** Runs `fn` after `initialDelayMs`, then `delayMs` after the end of each run. */
  scheduleWithFixedDelay(fn: () => void, initialDelayMs: number, delayMs: number): ScheduledTask {
    return this.#addTimer(fn, Op.FixedDelay, checkMillis('initialDelayMs', initialDelayMs), checkPeriod('delayMs', delayMs))
  }

  /**
   * Shuts the loop down: tasks keep running until none arrived for `quietPeriodMs` (or until
   * `timeoutMs`), scheduled tasks are cancelled, then new tasks are rejected with
   * `ERR_REJECTED_EXECUTION` and the loop terminates. Resolves on termination.
   */
  shutdownGracefully(quietPeriodMs = 2000, timeoutMs = 15000): Promise<void> {
    const quiet = checkMillis('quietPeriodMs', quietPeriodMs)
    const timeout = checkMillis('timeoutMs', timeoutMs)
    if (this.#ops[0] > 0) this.#native.drainOps()
    this.#native.shutdownGracefully(quiet, timeout)
    this.#shutdownRequested = true
    for (const task of this.#timers.values()) task._markCancelled()
    this.#timers.clear()
    return this.#termination
  }

  /** Resolves when the loop has terminated. */
  terminationFuture(): Promise<void> {
    return this.#termination
  }

  /** @internal Another OS thread posts `count` tasks to this loop (tests and benchmarks). */
  _postFromOtherThread(count: number, delayMs = 0): void {
    this.#native.postFromOtherThread(count, delayMs)
  }

  /** @internal Selector rebuilds of this loop so far (premature wake-ups past the threshold). */
  get _selectorRebuilds(): number {
    return this.#native.selectorRebuilds
  }

  /** @internal Test hook: the next `count` polls report a premature empty wake-up. */
  _injectSelectorFaults(count: number): void {
    this.#native.injectSelectorFaults(count)
  }

  /** @internal Wake-ups of this loop's waker so far. */
  get _wakeups(): number {
    return this.#native.wakeups
  }
}

