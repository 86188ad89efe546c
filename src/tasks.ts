/**
 * The FIFO of a loop's JS tasks, each with the async context of the code that submitted it
 * (`new AsyncResource` costs about 30 ns on Node 20; `AsyncResource.bind` and
 * `AsyncLocalStorage.snapshot()` about 8 µs. A context cannot be shared between tasks
 * submitted from the same resource: `AsyncLocalStorage.run` changes the store of the current
 * resource in place).
 */
import { AsyncResource } from 'node:async_hooks'
import type { Task } from './timers'

export class TaskQueue {
  #tasks: Array<Task | undefined> = []
  #contexts: Array<AsyncResource | undefined> = []
  #head = 0

  /** Tasks waiting. */
  get size(): number {
    return this.#tasks.length - this.#head
  }

  /** Queues `fn` with the async context of this call. */
  push(fn: Task): void {
    this.#tasks.push(fn)
    this.#contexts.push(new AsyncResource('netloop:task'))
  }

  /**
   * Runs up to `max` of the tasks queued now, in order, each in its context through `run`.
   * Tasks queued meanwhile wait for the next call.
   */
  run(max: number, run: (fn: Task) => void): void {
    const end = Math.min(this.#tasks.length, this.#head + max)
    while (this.#head < end) {
      const fn = this.#tasks[this.#head]
      const context = this.#contexts[this.#head]
      this.#tasks[this.#head] = undefined
      this.#contexts[this.#head++] = undefined
      if (fn) context!.runInAsyncScope(run, undefined, fn)
    }
    if (this.#head === this.#tasks.length) this.#reset()
    else if (this.#head > 1024 && this.#head * 2 > this.#tasks.length) {
      this.#tasks = this.#tasks.slice(this.#head)
      this.#contexts = this.#contexts.slice(this.#head)
      this.#head = 0
    }
  }

  /** Takes every queued task out; returns how many there were. */
  clear(): number {
    const n = this.size
    this.#reset()
    return n
  }

  #reset(): void {
    this.#tasks = []
    this.#contexts = []
    this.#head = 0
  }
}
