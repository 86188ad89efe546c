// Test hooks (cross-thread posts, fault injection, counters) work only on loops made with
// NETLOOP_TEST_HOOKS=1; child processes and workers inherit it. Set before any loop is made.
process.env.NETLOOP_TEST_HOOKS = '1'

import { EventLoop, type EventLoopOptions } from '../index'

/** Resolves after `ms` of real time (only as a generous upper bound, never as an assertion). */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Resolves once `pred()` holds, polling every few ms; rejects after `timeoutMs`. */
export async function until(pred: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await sleep(2)
  }
}

/** A loop that is shut down when the test ends. */
export function withLoop(t: { teardown(fn: () => unknown): void }, options: EventLoopOptions = {}): EventLoop {
  const loop = new EventLoop(options)
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  return loop
}

/** Counts turns of Node's event loop (one setImmediate callback a turn) until stopped. */
export function countTurns(): { readonly turns: number; stop(): void } {
  let turns = 0
  let on = true
  const tick = () => {
    turns++
    if (on) setImmediate(tick)
  }
  setImmediate(tick)
  return {
    get turns() {
      return turns
    },
    stop: () => void (on = false),
  }
}
