/**
 * `EventLoopGroup`: a fixed set of loops. Either all on the calling thread (handed out round
 * robin by `next()`), or each on its own worker thread (`{ threads, module }`): then the group
 * serves connections on several cores, see `ServerBootstrap.group(boss, workers)`.
 */
import { EventEmitter } from 'node:events'
import { availableParallelism } from 'node:os'
import { EventLoop, type EventLoopOptions, type LoopMetrics } from './loop'
import { type LoopUtilization, reading, since } from './utilization'
import { type AbortOptions, abortError, signalOf } from './abort'
import { NetloopError, checkDuration, checkInteger, fromNative, invalidArgType, outOfRange } from './errors'
import { type LoopTermination, WorkerLoop, moduleUrl } from './workers'

/** Worker loops' default `spinBeforeSleepMicros` (a loop on the main thread: 0). */
const WORKER_SPIN_MICROS = 20

/** A group whose loops live on worker threads. */
export interface WorkerGroupOptions extends EventLoopOptions {
  /** Worker threads, one loop each (0: the available parallelism). */
  threads: number
  /**
   * The module each worker imports (a path or a URL; ESM, CommonJS, or TypeScript under the
   * loader the main thread uses). It exports `childHandler(ch)` (or a default function): the
   * initializer of every channel that lands on that worker's loop.
   */
  module: string | URL
  /** Given to each worker as `require('node:worker_threads').workerData`. */
  workerData?: unknown
}

export interface EventLoopGroup {
  /** A worker's loop ended (load failure, uncaught exception, exit, termination). */
  on(event: 'loopTerminated', listener: (info: LoopTermination) => void): this
  /** An error thrown by a task or timer on a worker's loop (when no `onTaskError` is given). */
  on(event: 'taskError', listener: (error: Error) => void): this
}

/** Most loops in one group (each holds two fds and a libuv handle pair). */
export const MAX_GROUP_SIZE = 4096

/** A fixed set of event loops: on this thread, or one per worker thread. */
export class EventLoopGroup extends EventEmitter {
  readonly #loops: EventLoop[]
  readonly #workers: WorkerLoop[]
  #next = 0
  #shutdownRequested = false
  #termination: Promise<void> | undefined

  /**
   * `nThreads` loops (default 1; 0: the available parallelism; at most 4096, else
   * `ERR_OUT_OF_RANGE`). All loops of a group made here are attached to the calling JS
   * thread; several cores are served by groups on worker threads. If making a loop fails
   * (e.g. out of file descriptors) the loops made so far are released and the error thrown.
   */
  constructor(nThreads?: number, options?: EventLoopOptions)
  constructor(options: WorkerGroupOptions)
  constructor(nThreads: number | WorkerGroupOptions = 1, options: EventLoopOptions = {}) {
    super()
    if (typeof nThreads === 'object' && nThreads !== null) {
      this.#loops = []
      this.#workers = this.#startWorkers(nThreads)
      return
    }
    this.#workers = []
    checkInteger('nThreads', nThreads, 0, MAX_GROUP_SIZE)
    if (options === null || typeof options !== 'object') throw invalidArgType('options', 'object', options)
    const n = nThreads === 0 ? Math.min(availableParallelism(), MAX_GROUP_SIZE) : nThreads
    const loops: EventLoop[] = []
    try {
      for (let i = 0; i < n; i++) loops.push(new EventLoop({ ...options, name: `${options.name ?? 'netloop'}-${i}` }))
    } catch (error) {
      for (const loop of loops) loop._destroy()
      throw fromNative(error)
    }
    this.#loops = loops
  }

  #startWorkers(options: WorkerGroupOptions): WorkerLoop[] {
    const { threads, module, workerData, onTaskError, ...given } = options
    // A worker thread is its loop's own: spinning there delays no one else's JS, and it saves
    // the sleep and wake-up a busy loop pays per batch (2 worker loops against 1 on 64 B echo,
    // per-core efficiency 0.63-0.68 without, 0.72-0.93 with: docs/benchmarks.md).
    const loopOptions = { ...given, spinBeforeSleepMicros: given.spinBeforeSleepMicros ?? WORKER_SPIN_MICROS }
    checkInteger('threads', threads, 0, 256)
    const url = moduleUrl(module)
    if (onTaskError !== undefined && typeof onTaskError !== 'function') throw invalidArgType('onTaskError', 'function', onTaskError)
    const n = threads === 0 ? availableParallelism() : threads
    const report = (e: Error) => {
      if (onTaskError) onTaskError(e, undefined as never)
      else if (this.listenerCount('taskError') > 0) this.emit('taskError', e)
      else console.error('netloop: a task on a worker loop threw; the loop goes on:', e)
    }
    return Array.from({ length: n }, (_, i) => {
      const w = new WorkerLoop(i, url, loopOptions, workerData, report)
      w.on('terminated', (info: LoopTermination) => this.emit('loopTerminated', info))
      return w
    })
  }

  /** True for a group whose loops live on worker threads. */
  get isWorkerGroup(): boolean {
    return this.#workers.length > 0
  }

  /** @internal The worker loops (empty for a group on this thread). */
  get _workers(): readonly WorkerLoop[] {
    return this.#workers
  }

  /**
   * Resolves once every worker loaded its module and started its loop; rejects with
   * `ERR_WORKER_INIT_FAILED` (the cause attached) if one could not. Immediate for a group on
   * this thread.
   */
  async ready(): Promise<void> {
    try {
      await Promise.all(this.#workers.map((w) => w.ready))
    } catch (e) {
      const err = new NetloopError('ERR_WORKER_INIT_FAILED', `a worker loop could not start: ${(e as Error).message}`)
      ;(err as Error & { cause?: unknown }).cause = e
      throw err
    }
  }

  /** Per-loop counters (see `EventLoop.metrics()`), one entry per loop or live worker. */
  async metrics(): Promise<LoopMetrics[]> {
    if (this.#workers.length === 0) return this.#loops.map((l) => l.metrics())
    return Promise.all(this.#workers.filter((w) => w.alive).map((w) => w.metrics() as Promise<LoopMetrics>))
  }

  /**
   * How busy each loop is (see `EventLoop.utilization()`), one entry per loop, in the order of
   * `loops`; given an earlier reading, the difference since it, loop by loop; given two, the
   * difference between them (`group.utilization(later, earlier)`). A worker group reports each
   * worker thread's `performance.eventLoopUtilization()` (the thread runs only its loop), one
   * entry per worker, live or not.
   */
  utilization(prev?: readonly LoopUtilization[], prev2?: readonly LoopUtilization[]): LoopUtilization[] {
    if (prev !== undefined && !Array.isArray(prev)) throw invalidArgType('prev', 'Array', prev)
    if (prev2 !== undefined) {
      if (!Array.isArray(prev2)) throw invalidArgType('prev2', 'Array', prev2)
      return prev!.map((u, i) => since(u, prev2[i]))
    }
    if (this.#workers.length > 0) {
      return this.#workers.map((w, i) => {
        // Read from another thread, Node's figures can be off by a few µs (even negative).
        const { idle, active } = w.worker.performance.eventLoopUtilization(prev?.[i])
        return reading(idle, active)
      })
    }
    return this.#loops.map((l, i) => l.utilization(prev?.[i]))
  }

  get size(): number {
    return this.#workers.length || this.#loops.length
  }

  get loops(): readonly EventLoop[] {
    return this.#loops
  }

  /** The next loop, round robin (groups on this thread only). */
  next(): EventLoop {
    if (this.#workers.length > 0) {
      throw new NetloopError('ERR_INVALID_STATE', 'the loops of a worker group live on their worker threads: use it as the child group of a ServerBootstrap')
    }
    const n = this.#loops.length
    const i = (n & (n - 1)) === 0 ? this.#next & (n - 1) : this.#next % n
    this.#next = (this.#next + 1) >>> 0
    return this.#loops[i]
  }

  /**
   * Shuts every loop down (see `EventLoop.shutdownGracefully`; same defaults, 2 s / 15 s):
   * their channels close first (pending writes flushed or failed), then the loops terminate;
   * worker threads exit. Returns `terminationFuture()`: the same promise on every call
   * (Netty); a later call changes nothing.
   *
   * `{ signal }` as for `EventLoop.shutdownGracefully`: already aborted, it rejects at once
   * and starts nothing; aborted later, every loop of this thread skips the rest of its quiet
   * period and timeout, and the promise rejects with an `AbortError` at once; worker loops are
   * asked to do the same (they terminate soon after, on their own threads).
   */
  shutdownGracefully(options?: AbortOptions): Promise<void>
  shutdownGracefully(quietPeriodMs?: number, timeoutMs?: number, options?: AbortOptions): Promise<void>
  shutdownGracefully(quietPeriodMs: number | AbortOptions = 2000, timeoutMs = 15000, options?: AbortOptions): Promise<void> {
    if (typeof quietPeriodMs === 'object' && quietPeriodMs !== null) {
      options = quietPeriodMs
      quietPeriodMs = 2000
    }
    const signal = signalOf(options)
    if (signal?.aborted) {
      checkDuration('quietPeriodMs', quietPeriodMs)
      checkDuration('timeoutMs', timeoutMs)
      return Promise.reject(abortError(signal))
    }
    const done = this.#shutdown(quietPeriodMs, timeoutMs)
    if (signal === undefined) return done
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        for (const l of this.#loops) l._expediteShutdown()
        for (const w of this.#workers) w.request({ t: 'expedite' }).catch(() => undefined)
        reject(abortError(signal))
      }
      signal.addEventListener('abort', onAbort, { once: true })
      done.then(() => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      })
    })
  }

  /** `shutdownGracefully(0, 15000)` (`await using`); resolves once every loop terminated. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.shutdownGracefully(0, 15_000)
  }

  #shutdown(quietPeriodMs: number, timeoutMs: number): Promise<void> {
    if (this.#workers.length === 0) {
      // Each loop checks the arguments (and throws) before anything shuts down.
      for (const l of this.#loops) l.shutdownGracefully(quietPeriodMs, timeoutMs)
    } else if (!this.#shutdownRequested) {
      checkDuration('quietPeriodMs', quietPeriodMs)
      checkDuration('timeoutMs', timeoutMs)
      if (quietPeriodMs > timeoutMs) throw outOfRange('quietPeriodMs', `<= timeoutMs (${timeoutMs})`, quietPeriodMs)
      for (const w of this.#workers) {
        // A worker that already exited counts as terminated (its `exited` resolved).
        w.request({ t: 'shutdown', quiet: quietPeriodMs, timeout: timeoutMs }).catch(() => undefined)
      }
    }
    this.#shutdownRequested = true
    return this.terminationFuture()
  }

  /** Resolves once every loop has terminated (every worker exited); the same promise on every call. */
  terminationFuture(): Promise<void> {
    this.#termination ??= (
      this.#workers.length > 0
        ? Promise.all(this.#workers.map((w) => w.exited))
        : Promise.all(this.#loops.map((l) => l.terminationFuture()))
    ).then(() => undefined)
    return this.#termination
  }

  get isTerminated(): boolean {
    if (this.#workers.length > 0) return this.#workers.every((w) => !w.alive)
    return this.#loops.every((l) => l.state === 'terminated')
  }
}
