/**
 * What crosses the JS/native boundary by reference rather than by value, one registry of each
 * per loop's hub: JS values lent to the native pipeline as *tokens* (a message that is not
 * bytes, a user event, an exception), and JS promises named by *ids* that native code
 * completes with `PromiseDone` records.
 *
 * Ground rules (the loop's JS thread only): a token is taken, or released by a `Release`
 * record, once; an error's token may be read (`peek`) before that. A promise gets its id when
 * it first crosses and leaves the table when its `PromiseDone` record arrives.
 */
import { ChannelPromise } from './promise'
import { PromiseId } from './protocol'

/** JS values the native pipeline holds by token. */
export class Tokens {
  readonly #values = new Map<number, unknown>()
  #next = 1

  /** A token for `value`, held until it is taken or released. */
  lend(value: unknown): number {
    const t = this.#next++
    this.#values.set(t, value)
    return t
  }

  /** The value of `token`, which stays lent. */
  peek(token: number): unknown {
    return this.#values.get(token)
  }

  /** The value of `token`, which is given back. */
  take(token: number): unknown {
    const v = this.#values.get(token)
    this.#values.delete(token)
    return v
  }

  /** Forgets `token` (the native side dropped what it carried). */
  release(token: number): void {
    this.#values.delete(token)
  }
}

/** JS promises native code completes, by id; and JS stand-ins for native promises. */
export class Promises {
  readonly #byId = new Map<number, ChannelPromise>()
  #next = 1

  constructor(
    /** Cancels native promise `id` (applying the buffered ops first). */
    readonly cancelNative: (id: number) => boolean,
    /** Completes native promise `id` (as an op). */
    readonly completeNative: (id: number, error: Error | null) => void,
  ) {}

  /** The wire id of `p`: 0 silent void, `PromiseId.VoidFiring`, a JS id (> 0) or a lent one (< -1). */
  idOf(p: ChannelPromise | undefined): number {
    if (p === undefined || p._silent) return 0
    if (p._id === 0) return p._fires ? PromiseId.VoidFiring : PromiseId.Silent
    if (p._id < 0 || p._id > 0) return p._id
    const id = this.#next++
    p._id = id
    p._cancelNative = this.cancelNative
    this.#byId.set(id, p)
    return id
  }

  /** JS promise `id`, which leaves the table (its `PromiseDone` record arrived). */
  take(id: number): ChannelPromise | undefined {
    const p = this.#byId.get(id)
    if (p !== undefined) this.#byId.delete(id)
    return p
  }

  /** A JS stand-in for native promise `id` (< 0), lent with a native handler's operation. */
  lent(id: number): ChannelPromise {
    const p = new ChannelPromise(id, undefined, this.completeNative)
    p._cancelNative = this.cancelNative
    return p
  }
}
