/** `EventLoopGroup`: a fixed set of loops handed out round robin. */
import { availableParallelism } from 'node:os'
import { EventLoop, type EventLoopOptions } from './loop'
import { checkInteger, fromNative, invalidArgType } from './errors'

/** Most loops in one group (each holds two fds and a libuv handle pair). */
export const MAX_GROUP_SIZE = 4096

/** A fixed set of event loops handed out round robin by `next()`. */
export class EventLoopGroup {
  readonly #loops: EventLoop[]
  #next = 0

  /**
   * `nThreads` loops (default 1; 0: the available parallelism; at most 4096, else
   * `ERR_OUT_OF_RANGE`). All loops of a group made here are attached to the calling JS
   * thread; several cores are served by groups on worker threads. If making a loop fails
   * (e.g. out of file descriptors) the loops made so far are released and the error thrown.
   */
  constructor(nThreads = 1, options: EventLoopOptions = {}) {
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

  get size(): number {
    return this.#loops.length
  }

  get loops(): readonly EventLoop[] {
    return this.#loops
  }

  /** The next loop, round robin. */
  next(): EventLoop {
    const n = this.#loops.length
    const i = (n & (n - 1)) === 0 ? this.#next & (n - 1) : this.#next % n
    this.#next = (this.#next + 1) >>> 0
    return this.#loops[i]
  }

  /** Shuts every loop down (see `EventLoop.shutdownGracefully`; same defaults, 2 s / 15 s). */
  shutdownGracefully(quietPeriodMs = 2000, timeoutMs = 15000): Promise<void> {
    return Promise.all(this.#loops.map((l) => l.shutdownGracefully(quietPeriodMs, timeoutMs))).then(() => undefined)
  }

  terminationFuture(): Promise<void> {
    return Promise.all(this.#loops.map((l) => l.terminationFuture())).then(() => undefined)
  }

  get isTerminated(): boolean {
    return this.#loops.every((l) => l.state === 'terminated')
  }
}
