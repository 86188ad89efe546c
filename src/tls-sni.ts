/**
 * node:tls's `SNICallback` for netloop servers: how the callback is called and how its answer
 * (a callback, a returned value or Promise, an error or a throw) is reduced to one outcome.
 * The native `SslHandler` waits meanwhile (docs/decisions/0007-tls.md, "SNICallback").
 */
import { invalidArgType } from './errors'
import type { SslContext } from './tls'

/**
 * node:tls's `SNICallback`: called once per connection whose client names a server, on the
 * thread of the channel's loop; answer `cb(null, context)` (a server `SslContext`), `cb(null)`
 * for the context's own certificates, or `cb(err)` to refuse the name. A function declaring
 * fewer than two parameters answers with its return value instead (a context, undefined, or a
 * Promise of one; a rejection refuses the name).
 */
export type SNICallback<Context = SslContext> = (
  servername: string,
  cb: (err: Error | null | undefined, context?: Context | null) => void,
) => void | Context | null | Promise<Context | null | undefined>

/** What a callback came to. */
export type SniOutcome =
  /** `value`: what the callback answered as the context (undefined/null: the default). */
  | { kind: 'answer'; value: unknown }
  /** It refused the name (`cb(err)`, a rejected promise). */
  | { kind: 'refuse'; error: unknown }
  /** It failed (threw, or its async body rejected after it meant to call back). */
  | { kind: 'fail'; error: unknown }

/** @internal Checks the option. */
export function checkSniCallback(v: unknown): asserts v is SNICallback<unknown> | undefined {
  if (v !== undefined && typeof v !== 'function') throw invalidArgType('SNICallback', 'function', v)
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (typeof v === 'object' || typeof v === 'function') && v !== null && typeof (v as PromiseLike<unknown>).then === 'function'
}

/** @internal Calls `callback` for `servername`; `settle` gets its first outcome, once. */
export function runSniCallback(callback: SNICallback<unknown>, servername: string, settle: (o: SniOutcome) => void): void {
  let done = false
  const once = (o: SniOutcome) => {
    if (done) return // node:tls destroys the socket on a second call; here it is ignored
    done = true
    settle(o)
  }
  const byReturn = callback.length < 2
  let r: unknown
  try {
    r = callback(servername, (err, context) => once(err != null ? { kind: 'refuse', error: err } : { kind: 'answer', value: context }))
  } catch (error) {
    once({ kind: 'fail', error })
    return
  }
  if (isThenable(r)) {
    r.then(
      (value) => {
        if (byReturn) once({ kind: 'answer', value })
      },
      (error: unknown) => once(byReturn ? { kind: 'refuse', error } : { kind: 'fail', error }),
    )
  } else if (byReturn) {
    once({ kind: 'answer', value: r })
  }
}

/** @internal The text of what a callback threw or refused with. */
export function describeError(e: unknown): string {
  if (e instanceof Error) return e.message || e.name
  return String(e)
}
