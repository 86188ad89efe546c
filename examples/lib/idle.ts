// Timeouts for slow or silent peers, shared by the example servers: a connection on which
// nothing was read or written for `--idle S` seconds is closed (Netty's IdleStateHandler with
// an all-idle time, and a handler that closes on its event). `--idle 0` turns it off.
//
// On the main thread the value comes from the command line; a worker thread (--threads N)
// gets it from the main thread as `workerData.idleSeconds` (runExample passes it on).
import { isMainThread, workerData } from 'node:worker_threads'
import { type Channel, type ChannelHandler, IdleStateEvent, IdleStateHandler } from 'netloop'

/** `--idle S` (seconds, 0: off; fractions allowed), or `fallback`; on a worker, what the main thread passed. */
export function idleSeconds(fallback: number): number {
  if (!isMainThread) {
    const passed = (workerData as { idleSeconds?: unknown } | undefined)?.idleSeconds
    return typeof passed === 'number' ? passed : fallback
  }
  return secondsArg('--idle', fallback)
}

/** A non-negative number of seconds after `name` on the command line, or `fallback`. */
export function secondsArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name)
  if (i < 0) return fallback
  const raw = process.argv[i + 1]
  const s = Number(raw)
  if (raw === undefined || !Number.isFinite(s) || s < 0) throw new Error(`bad ${name} (seconds >= 0): ${raw}`)
  return s
}

/** Closes the channel when an IdleStateEvent arrives; passes other events on. */
export const closeWhenIdle: ChannelHandler = {
  userEventTriggered(ctx, evt) {
    if (evt instanceof IdleStateEvent) ctx.close()
    else ctx.fireUserEventTriggered(evt)
  },
}

/**
 * Puts the idle timeout first in `ch`'s pipeline (nothing when `seconds` is 0). `watch`: 'all'
 * (default) counts reads and writes as traffic; 'reads' counts only what the peer sends, for
 * request/response servers (RESP, HTTP) that write only in answer to a read: there the two
 * agree (but for a response still being written when the time runs out), and watching writes
 * costs a promise per write (about a fifth of the CPU per request of the RESP server at -P 16).
 */
export function addIdleTimeout(ch: Channel, seconds: number, watch: 'all' | 'reads' = 'all'): void {
  if (seconds <= 0) return
  const ms = Math.round(seconds * 1000)
  const handler = watch === 'reads' ? new IdleStateHandler(ms, 0, 0) : new IdleStateHandler(0, 0, ms)
  ch.pipeline.addFirst('idle', handler)
  // The protocol servers put the closing handler last (their handlers pass user events on): a
  // JS handler with an inbound method between the idle handler and a native codec would take
  // every read into JS and back before the codec sees it, and the requests it decodes would
  // wait for the loop's next iteration (HTTP hello at wrk -c 50: ~150 instead of ~1 500
  // iterations a second, and a quarter of the requests per second).
  if (watch === 'reads') ch.pipeline.addLast('closeWhenIdle', closeWhenIdle)
  else ch.pipeline.addAfter('idle', 'closeWhenIdle', closeWhenIdle)
}
