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

/**
 * A port of 127.0.0.1 where nobody listens, checked with node:net. Taken below the kernel's
 * ephemeral range (where `listen(0)` and outgoing connections take theirs), so that a test
 * running at the same time cannot start listening there, or hold it as a client's own port,
 * between the check and the connect that is meant to be refused.
 */
export async function refusedPort(): Promise<number> {
  const net = await import('node:net')
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000)
    const refused = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1')
      s.once('connect', () => {
        s.destroy()
        resolve(false)
      })
      s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'))
    })
    if (refused) return port
  }
  throw new Error('no refused port found in 20000-29999 on 127.0.0.1')
}

/**
 * Runs `total` client sessions, `concurrency` at a time, each of a kind picked at random
 * from `kinds` (list a kind twice to make it twice as likely): the mixed load of the chaos specs.
 */
export async function runMixedClients(kinds: Array<() => Promise<unknown>>, total: number, concurrency: number): Promise<void> {
  let started = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started++
        await kinds[Math.floor(Math.random() * kinds.length)]()
      }
    }),
  )
}
