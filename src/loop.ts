/**
 * `EventLoop`: a Rust event loop (mio selector, MPSC task queue) attached to the calling JS
 * thread; its scheduled tasks live in JS (src/timers.ts) behind one native loop timer armed
 * for the earliest deadline (docs/decisions/0006-js-timers.md). libuv watches the loop's selector and runs one loop iteration per
 * wake-up, so tasks, timers and channel events run synchronously on this thread, in the
 * loop's order; promises and nextTicks they create run right after the iteration.
 *
 * Ground rules (all state here is touched on the loop's thread only):
 * - JS tasks live in a FIFO (src/loop-tasks.ts); one native "marker" task runs a batch. At
 *   most one marker is queued at a time, and the core runs a task queued during an
 *   iteration in the next one: one marker per iteration, then the iteration hands the thread
 *   back to libuv and the next one runs in libuv's poll phase: Node's timers, I/O and
 *   setImmediate always get their turn, however many tasks keep coming.
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
  checkPeriod,
  fromNative,
  invalidArgType,
  rejected,
} from './errors'
import { type AbortOptions, abortError } from './abort'
import { publishLoopShutdown } from './diagnostics'
import { type ChannelHub, channelMetrics, closeChannelsOf } from './hub'
import { DispatchKind, DispatchPacking, TimerArmSlot } from './protocol'
import { LoopTasks } from './loop-tasks'
import { applyHolding } from './op-stream'
import { type EventLoopOptions, type EventLoopState, type LoopMetrics, checkOptions, defaultTaskError, testHook } from './loop-options'
import { abortable, shutdownArgs } from './loop-shutdown'
export type { EventLoopOptions, EventLoopState, LoopMetrics } from './loop-options'
import { type LoopUtilization, since } from './utilization'
export type { LoopUtilization } from './utilization'
import { ScheduledTask, TimerQueue, type Task } from './timers'

export { ScheduledTask, type Task } from './timers'

const NativeEventLoop = native.NativeEventLoop
type NativeEventLoop = Native.NativeEventLoop

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
  readonly #tasks: LoopTasks
  readonly #arm = new Float64Array(TimerArmSlot.Length)
  readonly #timers: TimerQueue
  #inDispatch = 0
  #shutdownRequested = false
  #terminated = false
  /**
   * The native side holds this function weakly while the loop is idle (so an unreferenced
   * idle loop can be collected): the loop must hold it strongly itself, or the function could
   * be collected while the loop is still in use.
   */
  readonly #dispatchFn = (packed: number, arena?: Buffer, strings?: string[], base?: number, segments?: Buffer[]) =>
    this.#scope.runInAsyncScope(this.#dispatch, this, packed, arena, strings, base, segments)
  /**
   * The loop's async context, made where the loop was (as every iteration's was): the native
   * side calls the dispatcher without a callback scope around it and drains nextTicks and
   * microtasks at the iteration's end (crates/node/src/bridge/scopes.rs says why), so the
   * dispatcher enters this context itself, at the bottom of the async stack.
   */
  readonly #scope = new AsyncResource('netloop:EventLoop')
  readonly #termination: Promise<void>
  #resolveTermination!: () => void
  /** @internal test and benchmark hook: tasks posted by `_postFromOtherThread` land here. */
  _onRemoteTask?: (latencyNs: number) => void
  /** @internal the loop's channel hub (src/hub.ts `hubOf`), made when its first channel is. */
  _hub: ChannelHub | undefined = undefined
  /** @internal the loop's channel hub (src/hub.ts; src/hub-delivery.ts): event records delivered through this loop's dispatch. */
  _onChannelEvents?: (count: number, arena: Buffer | undefined, strings: string[] | undefined, base: number | undefined, segments: Buffer[] | undefined) => void

  constructor(options: EventLoopOptions = {}) {
    const { name, ioRatio, maxPendingTasks, spinBeforeSleepMicros, onTaskError } = checkOptions(options)
    const tasks = (this.#tasks = new LoopTasks(this, maxPendingTasks ?? Infinity, onTaskError ?? defaultTaskError))
    this.#termination = new Promise((resolve) => (this.#resolveTermination = resolve))
    this.#timers = new TimerQueue(this.#arm, () => this.#armChanged(), (task) => task.runInAsyncScope(tasks.run, tasks, task._fn))
    try {
      this.#native = new NativeEventLoop(this.#dispatchFn, this.#arm, performance.now(), {
        name,
        ioRatio,
        maxPendingTasks: maxPendingTasks === undefined ? undefined : Math.min(maxPendingTasks, 0xffffffff),
        spinBeforeSleepMicros,
      })
      tasks.native = this.#native
    } catch (error) {
      throw fromNative(error)
    }
  }

  /** The loop's one entry point into JS: tasks, timers, channel events, termination. */
  #dispatch(packed: number, arena?: Buffer, strings?: string[], base?: number, segments?: Buffer[]): void {
    // The native side packs (kind, arg) into one number: arg * Multiplier + kind.
    const kind = packed % DispatchPacking.Multiplier
    const arg = (packed - kind) / DispatchPacking.Multiplier
    this.#inDispatch++
    try {
      switch (kind) {
        case DispatchKind.Task:
          this.#tasks.runBatch()
          return
        case DispatchKind.Timers:
          this.#timers.runDue()
          return
        case DispatchKind.Terminated:
          this.#onTerminated()
          return
        case DispatchKind.Channels:
          this._onChannelEvents?.(arg, arena, strings, base, segments)
          return
        case DispatchKind.Remote:
          this._onRemoteTask?.(arg)
          return
        case DispatchKind.Fault:
          this.#tasks.fail(new NetloopError('ERR_LOOP_FAILED', `loop ${this.name} failed: libuv could not watch its rebuilt selector (libuv error -${arg}); it terminates`))
          return
      }
    } finally {
      // What tasks and timers wrote goes to the native side with its big chunks and error
      // strings before the loop's delivery applies the op buffer (src/op-stream.ts `holding`).
      if (kind !== DispatchKind.Channels && kind !== DispatchKind.Terminated) applyHolding()
      // The native side reads the arm buffer when this call returns.
      this.#inDispatch--
    }
  }

  #onTerminated(): void {
    if (!this.#terminated) publishLoopShutdown(this, 'end', 0, 0)
    this.#terminated = true
    this.#tasks.rejectQueued()
    this.#timers.cancelAll()
    this.#resolveTermination()
  }

  get name(): string {
    return this.#native.name
  }

  /** @internal The native loop (channels are created on it). */
  get _native(): NativeEventLoop {
    return this.#native
  }

  /**
   * Counters of this loop: of its JS boundary (iterations, deliveries: native→JS calls
   * carrying channel events, events, JS→native calls, ops, bytes in/out of JS, channels),
   * and `refusedConnections`: connections its server channels closed as soon as they were
   * accepted (over `maxConnections`, or out of file descriptors).
   */
  metrics(): LoopMetrics {
    const m = channelMetrics(this) ?? { iterations: 0, deliveries: 0, events: 0, jsToNativeCalls: 0, ops: 0, bytesIn: 0, bytesOut: 0, bytesOutFromReads: 0, bytesReleased: 0, channels: 0 }
    return { ...m, refusedConnections: this.#native.refusedConnections }
  }

  get state(): EventLoopState {
    return this.#native.state as EventLoopState
  }

  /** Tasks queued and not yet run (this thread's and other threads'). */
  get pendingTasks(): number {
    return this.#tasks.size + this.#native.pendingTasks
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

  /**
   * How busy the loop is, as `performance.eventLoopUtilization()`: `active` is the time (ms)
   * this thread spent in the loop's iterations (its tasks, timers and channel events, and the
   * promises they settled) since the loop was made, `idle` the rest of that time. Given an
   * earlier reading, the difference since it (`loop.utilization(prev)`); given two, the
   * difference between them (`loop.utilization(later, earlier)`), as Node's does.
   */
  utilization(prev?: LoopUtilization, prev2?: LoopUtilization): LoopUtilization {
    if (prev2 !== undefined) return since(prev!, prev2)
    const [busy, elapsed] = this.#native.busyTime()
    return since({ idle: Math.max(0, elapsed - busy), active: busy }, prev)
  }

  /** Tasks and timers that threw (or whose promise rejected) so far. */
  get taskFailures(): number {
    return this.#tasks.failures
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
    this.#tasks.push(fn)
  }

  /**
   * The timer queue changed the arm buffer. Inside a dispatch call the native side reads it
   * when the call returns; otherwise ask for an iteration (once per JS turn: the buffer stays
   * dirty until the native side reads it).
   */
  #armChanged(): void {
    if (this.#inDispatch === 0 && !this.#terminated) this.#native.requestDrain()
  }

  #addTimer(fn: Task, delay: number, period: number): ScheduledTask {
    if (this.#shutdownRequested || this.#terminated) throw rejected(`loop ${this.name} is shutting down: timers are cancelled, none are accepted`)
    return this.#timers.add(fn, delay, period)
  }

  /** Runs `fn` once after `delayMs` (a finite number; 0 or negative: due now). */
  schedule(fn: Task, delayMs: number): ScheduledTask {
    checkFunction('task', fn)
    return this.#addTimer(fn, checkDelay('delayMs', delayMs), 0)
  }

  /**
   * Runs `fn` after `initialDelayMs`, then every `periodMs` (at least 0.001, i.e. 1 µs) from
   * the previous deadline; missed runs catch up.
   */
  scheduleAtFixedRate(fn: Task, initialDelayMs: number, periodMs: number): ScheduledTask {
    checkFunction('task', fn)
    return this.#addTimer(fn, checkDuration('initialDelayMs', initialDelayMs), checkPeriod('periodMs', periodMs))
  }

  /** Runs `fn` after `initialDelayMs`, then `delayMs` (at least 0.001, i.e. 1 µs) after the end of each run. */
  scheduleWithFixedDelay(fn: Task, initialDelayMs: number, delayMs: number): ScheduledTask {
    checkFunction('task', fn)
    return this.#addTimer(fn, checkDuration('initialDelayMs', initialDelayMs), -checkPeriod('delayMs', delayMs))
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
   *
   * `{ signal }` (last argument, or the only one with the default durations): an already
   * aborted signal rejects at once with an `AbortError` (`cause`: the signal's reason) and
   * starts nothing; aborting it during the shutdown cuts the wait short: the rest of the quiet
   * period and timeout are skipped (the loop runs the tasks it accepted and terminates right
   * away) and the promise rejects with the `AbortError` at once (`terminationFuture()` still
   * resolves when the loop has terminated).
   */
  shutdownGracefully(options?: AbortOptions): Promise<void>
  shutdownGracefully(quietPeriodMs?: number, timeoutMs?: number, options?: AbortOptions): Promise<void>
  shutdownGracefully(quietPeriodMs: number | AbortOptions = 2000, timeoutMs = 15000, options?: AbortOptions): Promise<void> {
    const { quiet, timeout, signal } = shutdownArgs(quietPeriodMs, timeoutMs, options)
    if (signal?.aborted) return Promise.reject(abortError(signal))
    const done = this.#startShutdown(quiet, timeout)
    return signal === undefined ? done : abortable(done, signal, () => this._expediteShutdown())
  }

  /** `shutdownGracefully(0, 15000)` (`await using`); resolves once the loop terminated. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.shutdownGracefully(0, 15_000)
  }

  #startShutdown(quiet: number, timeout: number): Promise<void> {
    if (this.#shutdownRequested || this.#terminated) return this.#termination
    publishLoopShutdown(this, 'start', quiet, timeout)
    // As Netty's closeAll: the loop's channels close first (their pending writes fail, their
    // handlers see inactive and unregistered while the loop still runs tasks).
    closeChannelsOf(this)
    try {
      this.#native.shutdownGracefully(quiet, timeout)
    } catch (error) {
      throw fromNative(error)
    }
    this.#shutdownRequested = true
    this.#timers.cancelAll()
    return this.#termination
  }

  /** @internal Skips the rest of a graceful shutdown's quiet period and timeout. */
  _expediteShutdown(): void {
    if (!this.#terminated) this.#native.expediteShutdown()
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
    return testHook(this.#native, op, a, b)
  }

  /** @internal JS timers pending (cancelled ones leave at once). */
  get _pendingTimers(): number {
    return this.#timers.size
  }

  /** @internal Timers in the native loop's heap (at most one armed for the JS timers; cancelled ones until the heap drops them). */
  get _nativeTimers(): number {
    return this.#hook('timers')
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

  /** @internal Non-blocking polls this loop made while spinning before it slept. */
  get _spinPolls(): number {
    return this.#hook('spinPolls')
  }
}
