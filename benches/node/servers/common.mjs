// Shared bits of the benchmark servers: the compiled library from the repo root (no tsx), and
// the exit protocol of the harness (print the port on stdout; on SIGTERM print the loop's
// metrics as one JSON line on stderr, then exit).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
export const netloop = require('../../../index.js')

export function ready(port) {
  process.stdout.write(`${port}\n`)
}

/** The binding's count of calls into JS so far (every loop of the process); 0 if it has none. */
export const jsCrossings = () => require('../../../native.js').jsCrossings?.() ?? 0
const crossingsAtStart = jsCrossings()

/**
 * On SIGTERM: `{"metrics":{...},"jsCrossings":N}` on stderr (netloop servers; N: the calls
 * into JS since the server started), then exit.
 */
export function exitOnTerm(loop) {
  process.once('SIGTERM', () => {
    if (loop) process.stderr.write(`${JSON.stringify({ metrics: loop.metrics(), jsCrossings: jsCrossings() - crossingsAtStart })}\n`)
    process.exit(0)
  })
}

/** Quiet on peers that go away when a run ends. */
export const quiet = {
  exceptionCaught(ctx) {
    ctx.close()
  },
}

// With --expose-gc (benches/node/memory.mjs): SIGUSR2 runs a full collection, so that RSS
// read afterwards holds what the server keeps, not garbage a collection has yet to reclaim.
if (typeof globalThis.gc === 'function') process.on('SIGUSR2', () => globalThis.gc())
