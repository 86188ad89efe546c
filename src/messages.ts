/**
 * `channel.messages()`: the channel's inbound messages as an async iterator, for clients that
 * read in a loop: `for await (const msg of ch.messages()) ...`.
 *
 * Ground rules (everything runs on the channel's loop thread, the thread that made the loop):
 * - The iterator is a JS handler added last in the pipeline: it receives what the handlers
 *   before it pass on (bytes, or frames from a decoder) and queues them.
 * - Backpressure: once `highWaterMark` messages wait in the queue the channel's `autoRead` is
 *   turned off; it is turned on again when the consumer has taken the queue down to half of
 *   that. The iterator owns `autoRead` while it runs: a channel made with `autoRead: false`
 *   (so that nothing is read before the iterator exists) starts reading at the first `next()`.
 * - The iteration ends (after the queued messages) when the channel closes or the peer shuts
 *   its output down (`ChannelInputShutdownEvent`); an error reaching the handler
 *   (`exceptionCaught`) rejects the `next()` after the queued messages, then the iteration is
 *   over. Leaving the loop early (`break`, `return()`) removes the handler and leaves the
 *   channel open, as `events.on()` leaves its emitter.
 */
import type { Channel } from './channel'
import type { ChannelHandlerContext } from './context'
import { checkInteger, invalidArgType } from './errors'
import { ChannelInputShutdownEvent } from './handlers'

/** Options of `channel.messages()`. */
export interface ChannelMessagesOptions {
  /** Messages the consumer may fall behind before the channel stops reading (default 16). */
  highWaterMark?: number
  /** The handler's name in the pipeline (default: generated, `ChannelMessagesHandler#n`). */
  name?: string
}

type Waiter<T> = { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void }

const DONE: IteratorResult<never> = Object.freeze({ value: undefined, done: true }) as IteratorResult<never>

/** The iterator's place in the pipeline. */
class ChannelMessagesHandler<T> {
  constructor(readonly messages: ChannelMessages<T>) {}
  handlerAdded(ctx: ChannelHandlerContext): void {
    this.messages._ctx = ctx
  }
  channelRead(_ctx: ChannelHandlerContext, msg: T): void {
    this.messages._onMessage(msg)
  }
  userEventTriggered(ctx: ChannelHandlerContext, event: unknown): void {
    if (event === ChannelInputShutdownEvent.INSTANCE) this.messages._end()
    ctx.fireUserEventTriggered(event)
  }
  channelInactive(ctx: ChannelHandlerContext): void {
    this.messages._end()
    ctx.fireChannelInactive()
  }
  exceptionCaught(_ctx: ChannelHandlerContext, error: Error): void {
    this.messages._fail(error)
  }
}

/** The async iterator `channel.messages()` returns. */
export class ChannelMessages<T = Buffer> implements AsyncIterableIterator<T> {
  readonly #channel: Channel
  readonly #highWaterMark: number
  readonly #lowWaterMark: number
  #queue: T[] = []
  #head = 0
  #waiters: Waiter<T>[] = []
  /** @internal */ _ctx: ChannelHandlerContext | undefined
  /** True while the iterator holds `autoRead` off. */
  #paused: boolean
  #ended = false
  #error: { e: unknown } | undefined
  #finished = false

  /** @internal Use `channel.messages()`. */
  constructor(channel: Channel, options: ChannelMessagesOptions = {}) {
    if (options === null || typeof options !== 'object') throw invalidArgType('options', 'object', options)
    this.#highWaterMark = options.highWaterMark === undefined ? 16 : checkInteger('highWaterMark', options.highWaterMark, 1, 0x7fffffff)
    this.#lowWaterMark = Math.floor(this.#highWaterMark / 2)
    if (options.name !== undefined && (typeof options.name !== 'string' || options.name.length === 0)) throw invalidArgType('name', 'non-empty string', options.name)
    this.#channel = channel
    // A channel that does not read yet starts reading when the consumer first asks.
    this.#paused = channel.isOpen && channel.getOption('autoRead') === false
    const handler = new ChannelMessagesHandler(this)
    if (options.name !== undefined) channel.pipeline.addLast(options.name, handler)
    else channel.pipeline.addLast(handler)
    if (!channel.isOpen) this._end()
  }

  /** Messages received and not yet taken. */
  get queued(): number {
    return this.#queue.length - this.#head
  }

  /** @internal */
  _onMessage(msg: T): void {
    if (this.#ended || this.#finished) return
    const w = this.#waiters.shift()
    if (w !== undefined) {
      w.resolve({ value: msg, done: false })
      return
    }
    this.#queue.push(msg)
    if (!this.#paused && this.queued >= this.#highWaterMark) {
      this.#paused = true
      this.#setAutoRead(false)
    }
  }

  /** @internal The channel closed or its input was shut down. */
  _end(): void {
    if (this.#ended) return
    this.#ended = true
    this.#settleWaiters()
  }

  /** @internal */
  _fail(error: unknown): void {
    if (this.#ended || this.#finished) return
    this.#error = { e: error }
    this._end()
  }

  /** Waiting `next()` calls learn the end (the queue is empty when one waits): the first one the error, if any. */
  #settleWaiters(): void {
    if (this.#waiters.length === 0) return
    const waiters = this.#waiters
    this.#waiters = []
    const error = this.#error
    this.#finish()
    for (const [i, w] of waiters.entries()) {
      if (i === 0 && error !== undefined) w.reject(error.e)
      else w.resolve(DONE)
    }
  }

  #setAutoRead(on: boolean): void {
    try {
      if (this.#channel.isOpen) this.#channel.setOption('autoRead', on)
    } catch {
      // Closed meanwhile: nothing more to read.
    }
  }

  /** Leaves the pipeline; the channel reads on its own again if the iterator had stopped it. */
  #finish(): void {
    if (this.#finished) return
    this.#finished = true
    this.#queue = []
    this.#head = 0
    if (this.#paused) {
      this.#paused = false
      this.#setAutoRead(true)
    }
    const ctx = this._ctx
    if (ctx !== undefined && !ctx.isRemoved && this.#channel.isOpen) {
      try {
        this.#channel.pipeline.remove(ctx.name)
      } catch {
        // Already gone.
      }
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queued > 0) {
      const value = this.#queue[this.#head]
      this.#queue[this.#head++] = undefined as T
      if (this.#head === this.#queue.length) {
        this.#queue = []
        this.#head = 0
      } else if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head)
        this.#head = 0
      }
      if (this.#paused && !this.#ended && this.queued <= this.#lowWaterMark) {
        this.#paused = false
        this.#setAutoRead(true)
      }
      return Promise.resolve({ value, done: false })
    }
    if (this.#finished) return Promise.resolve(DONE)
    if (this.#ended) {
      if (this.#error !== undefined) {
        const { e } = this.#error
        this.#finish()
        return Promise.reject(e)
      }
      this.#finish()
      return Promise.resolve(DONE)
    }
    if (this.#paused) {
      this.#paused = false
      this.#setAutoRead(true)
    }
    return new Promise((resolve, reject) => void this.#waiters.push({ resolve, reject }))
  }

  /** Stops iterating (a `break` out of `for await`): removes the handler, the channel stays open. */
  return(): Promise<IteratorResult<T>> {
    this.#ended = true
    this.#finish()
    const waiters = this.#waiters
    this.#waiters = []
    for (const w of waiters) w.resolve(DONE)
    return Promise.resolve(DONE)
  }

  [Symbol.asyncIterator](): this {
    return this
  }
}
