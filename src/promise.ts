/**
 * `ChannelPromise`: the outcome of an outbound operation (Netty's `ChannelPromise`). It is
 * awaitable (`await ch.writeAndFlush(msg, ch.newPromise())`), creates a real `Promise` only
 * when someone awaits it, and so never turns an ignored failure into an unhandled
 * rejection.
 *
 * Netty's rules for writes made without a promise: `write(msg)` stands for
 * `write(msg, newPromise())` with a promise nobody listens to, so its failure is silent
 * (here: the shared *silent* void promise, no allocation). Only the channel's
 * `voidPromise()` reports a failure to the pipeline's `exceptionCaught`. Neither void promise
 * can be awaited or listened to; `unvoid()` gives a promise that can.
 */
import type { Channel } from './channel'
import { NetloopError } from './errors'

/** @internal */
export type Settle = { ok: true } | { ok: false; error: Error }

/** Completes a promise lent by the native pipeline (a native handler's write). @internal */
export type NativeCompleter = (id: number, error: Error | null) => void

/** @internal Where a void promise's failure goes (its pipeline: no closure per promise). */
export interface VoidFailureSink {
  fireExceptionCaught(error: unknown): unknown
}

export class ChannelPromise implements PromiseLike<void> {
  /** @internal 0: void; > 0: registered with a hub; < 0: lent by native code; NaN: not yet. */
  _id: number
  /** @internal Set by the hub that knows this promise: cancels the native side (true: cancelled). */
  _cancelNative: ((id: number) => boolean) | undefined
  #cancelled = false
  #result: Settle | undefined
  #promise: Promise<void> | undefined
  #resolve: (() => void) | undefined
  #reject: ((e: Error) => void) | undefined
  readonly #onVoidFailure: VoidFailureSink | undefined
  readonly #native: NativeCompleter | undefined
  #listeners: Array<(error: Error | null) => void> | undefined
  /** @internal The channel of the operation (set by the pipeline that made the promise). */
  _channel: Channel | undefined
  /** Made for a write without a promise (see `_implicit`). */
  #implicit = false
  /** Listened to or awaited. */
  #observed = false

  /** @internal */
  constructor(id: number, onVoidFailure?: VoidFailureSink, native?: NativeCompleter) {
    this._id = id
    this.#onVoidFailure = onVoidFailure
    this.#native = native
  }

  /** True for a void promise (the silent one of promise-less writes, or `voidPromise()`). */
  get isVoid(): boolean {
    return this._id === 0
  }

  /**
   * @internal The promise an outbound handler's `write` gets for a write made without one
   * (Netty's `write(msg)` makes a new promise): it may be listened to, and stays silent (sent
   * as the silent void promise, no bookkeeping) unless it was listened to or awaited before
   * the handler passed the write on.
   */
  static _implicit(): ChannelPromise {
    const p = new ChannelPromise(Number.NaN)
    p.#implicit = true
    return p
  }

  /** @internal An implicit promise nobody listened to (yet): the write goes on silently. */
  get _silent(): boolean {
    return this.#implicit && !this.#observed
  }

  /** @internal True for the void promise whose failure goes to `exceptionCaught`. */
  get _fires(): boolean {
    return this._id === 0 && this.#onVoidFailure !== undefined
  }

  /**
   * A promise that can be listened to in place of this one (Netty's `unvoid()`): this one if
   * it is not void; for a void one a new promise, whose failure still goes to
   * `exceptionCaught` when this one's would have.
   */
  unvoid(): ChannelPromise {
    if (this._id !== 0) return this
    const p = new ChannelPromise(NaN)
    const sink = this.#onVoidFailure
    if (sink !== undefined) p.addListener((e) => void (e !== null && sink.fireExceptionCaught(e)))
    return p
  }

  get isDone(): boolean {
    return this.#result !== undefined
  }

  get isSuccess(): boolean {
    return this.#result?.ok === true
  }

  /** True once cancelled (see `cancel`). */
  get isCancelled(): boolean {
    return this.#cancelled
  }

  /**
   * Netty's `cancel()`: fails the promise with `ERR_CANCELLED` unless it is done or its
   * operation is under way (a write that was flushed, a close that started). The operation of
   * a cancelled promise does nothing: a write cancelled before its flush is never written.
   * `true` if this call cancelled it. A void promise cannot be cancelled.
   */
  cancel(): boolean {
    if (this._id === 0 || this.#result !== undefined) return false
    if (!Number.isNaN(this._id) && this._cancelNative !== undefined && !this._cancelNative(this._id)) return false
    this.#cancelled = true
    return this._complete({ ok: false, error: new NetloopError('ERR_CANCELLED', 'the operation was cancelled') })
  }

  /** The failure, once failed. */
  get cause(): Error | undefined {
    const r = this.#result
    return r && !r.ok ? r.error : undefined
  }

  /** A `Promise` of the outcome (created on first use). */
  get promise(): Promise<void> {
    if (this._id === 0) {
      throw new NetloopError('ERR_INVALID_STATE', 'a void promise cannot be awaited: pass channel.newPromise() to await an operation')
    }
    this.#observed = true
    if (this.#promise === undefined) {
      const r = this.#result
      if (r === undefined) {
        this.#promise = new Promise<void>((resolve, reject) => {
          this.#resolve = resolve
          this.#reject = reject
        })
      } else {
        this.#promise = r.ok ? Promise.resolve() : Promise.reject(r.error)
      }
    }
    return this.#promise
  }

  then<A = void, B = never>(
    onfulfilled?: ((value: void) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: any) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.promise.then(onfulfilled, onrejected)
  }

  /** Runs `fn` once with the outcome (null on success), synchronously when it completes. */
  addListener(fn: (error: Error | null) => void): this {
    if (this._id === 0) {
      throw new NetloopError('ERR_INVALID_STATE', 'a void promise has no listeners: use promise.unvoid() (or pass channel.newPromise()) to learn the outcome')
    }
    this.#observed = true
    const r = this.#result
    if (r !== undefined) fn(r.ok ? null : r.error)
    else (this.#listeners ??= []).push(fn)
    return this
  }

  /** Removes a listener added with `addListener` (the first one that is `fn`); true if it was there. */
  removeListener(fn: (error: Error | null) => void): boolean {
    const ls = this.#listeners
    const i = ls ? ls.indexOf(fn) : -1
    if (i < 0) return false
    ls!.splice(i, 1)
    return true
  }

  /** The channel the operation belongs to (Netty's `ChannelPromise.channel()`); undefined for a promise made outside a channel. */
  get channel(): Channel | undefined {
    return this._channel
  }

  /** Marks the operation done; false if it already was. */
  trySuccess(): boolean {
    return this.#settle({ ok: true })
  }

  /** Marks the operation failed; false if it already was done. */
  tryFailure(error: Error): boolean {
    return this.#settle({ ok: false, error })
  }

  #settle(r: Settle): boolean {
    if (this.#result !== undefined) return false
    if (this._id < 0 && this.#native) {
      // Lent by native code: the native promise completes, and its listeners run there.
      this.#native(this._id, r.ok ? null : r.error)
    }
    return this._complete(r)
  }

  /** @internal Completes this side only (the native side already knows). */
  _complete(r: Settle): boolean {
    if (this._id === 0) {
      // A void promise is shared and never done: a failure goes to exceptionCaught (the
      // channel's voidPromise()) or nowhere (the silent one of promise-less writes).
      if (!r.ok) this.#onVoidFailure?.fireExceptionCaught(r.error)
      return false
    }
    if (this.#result !== undefined) return false
    this.#result = r
    if (r.ok) this.#resolve?.()
    else this.#reject?.(r.error)
    const ls = this.#listeners
    this.#listeners = undefined
    if (ls) for (const fn of ls) fn(r.ok ? null : r.error)
    return true
  }
}

