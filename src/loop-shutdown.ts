/**
 * The arguments of `EventLoop.shutdownGracefully` and its abortable wait (see its docs).
 */
import { type AbortOptions, abortError, signalOf } from './abort'
import { checkDuration, outOfRange } from './errors'

/** `(quietPeriodMs, timeoutMs, options)` or `(options)`, checked: durations >= 0, quiet <= timeout. */
export function shutdownArgs(quietPeriodMs: number | AbortOptions, timeoutMs: number, options: AbortOptions | undefined): { quiet: number; timeout: number; signal: AbortSignal | undefined } {
  if (typeof quietPeriodMs === 'object' && quietPeriodMs !== null) {
    options = quietPeriodMs
    quietPeriodMs = 2000
  }
  const quiet = checkDuration('quietPeriodMs', quietPeriodMs)
  const timeout = checkDuration('timeoutMs', timeoutMs)
  if (quiet > timeout) throw outOfRange('quietPeriodMs', `<= timeoutMs (${timeout})`, quiet)
  return { quiet, timeout, signal: signalOf(options) }
}

/** The termination, unless `signal` aborts first: then the shutdown hurries and this rejects. */
export function abortable(done: Promise<void>, signal: AbortSignal, expedite: () => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      expedite()
      reject(abortError(signal))
    }
    signal.addEventListener('abort', onAbort, { once: true })
    done.then(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    })
  })
}

