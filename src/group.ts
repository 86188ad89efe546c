/** `EventLoopGroup`: a fixed set of loops handed out round robin. */
import { availableParallelism } from 'node:os'
import { EventLoop, type EventLoopOptions } from './loop'
import { invalidArg } from './errors'

/** A fixed set of event loops handed out round robin by `next()`. */
export class EventLoopGroup {
  readonly #loops: EventLoop[]
  #next = 0

  /**
   * `nThreads` loops (default 1). All loops of a group made here are attached to the calling
   * JS thread; several cores are served by groups on worker threads.
   */
  constructor(nThreads = 1, options: EventLoopOptions = {}) {
    if (!Number.isInteger(nThreads) || nThreads < 0) {
      throw invalidArg(`nThreads must be a non-negative integer, got ${nThreads}`)
    }
    const n = nThreads === 0 ? availableParallelism() : nThreads
    this.#loops = Array.from({ length: n }, (_, i) => new EventLoop({ ...options, name: `${options.name ?? 'netloop'}-${i}` }))
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
