// netloop's loop.execute(fn) / loop.schedule(fn, 0) against setImmediate and setTimeout(fn, 0),
// measured in the same run. Shapes: a chain (each callback queues the next: latency of one
// hop), a burst (N queued at once: throughput), and schedule+cancel (N timers made and
// cancelled at once, none runs: the cost of a timer that is cancelled, as for timeouts that
// rarely fire). Best of 5 rounds, ns per callback (or per schedule+cancel pair).
//
//   node benches/node/schedule.mjs [N] [--quick] [--runs ROUNDS] [--addon FILE.node]
//
// N callbacks per shape (default 100 000; --quick: 30 000 and 3 rounds). --addon loads that
// addon (NAPI_RS_NATIVE_LIBRARY_PATH) instead of the repository's. Prints a markdown table.
import { addonUnderTest, flag, markdownTable, opt, positionals } from './harness.mjs'

const quick = flag('--quick')
const { addonId } = addonUnderTest() // before loading the library: --addon sets its path
const { default: netloop } = await import('../../index.js')
const { EventLoop } = netloop
const N = Number(positionals()[0] ?? (quick ? 30_000 : 100_000))
const ROUNDS = Number(opt('--runs', quick ? 3 : 5))
const id = addonId()
console.log(`addon ${id.file}: ${id.size} bytes, ${id.mtime}, sha256 ${id.sha256}; N = ${N}, best of ${ROUNDS} rounds; node ${process.version}\n`)
const loop = new EventLoop({ name: 'bench' })

const chain = (queue) => () =>
  new Promise((resolve) => {
    let left = N
    const step = () => (--left === 0 ? resolve() : queue(step))
    queue(step)
  })

const burst = (queue) => () =>
  new Promise((resolve) => {
    let left = N
    const step = () => --left === 0 && resolve()
    for (let i = 0; i < N; i++) queue(step)
  })

const never = () => {
  throw new Error('a cancelled timer ran')
}

/** `pair(fn)` makes one timer and cancels it; then wait one turn (the loop applies its state). */
const cancelled = (pair) => () =>
  new Promise((resolve) => {
    for (let i = 0; i < N; i++) pair(never)
    setImmediate(resolve)
  })

const queues = {
  'loop.execute(fn)': (fn) => loop.execute(fn),
  'loop.schedule(fn, 0)': (fn) => loop.schedule(fn, 0),
  'setImmediate(fn)': (fn) => setImmediate(fn),
  'setTimeout(fn, 0)': (fn) => setTimeout(fn, 0),
}

const pairs = {
  'loop.schedule(fn, 1000).cancel()': (fn) => loop.schedule(fn, 1000).cancel(),
  'clearTimeout(setTimeout(fn, 1000))': (fn) => clearTimeout(setTimeout(fn, 1000)),
}

async function measure(run) {
  let best = Infinity
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint()
    await run()
    best = Math.min(best, Number(process.hrtime.bigint() - t0))
  }
  return best / N
}

/** setTimeout(0) is clamped to 1 ms per hop: a chain of it is measured on 200 hops. */
async function setTimeoutChain() {
  const short = () =>
    new Promise((resolve) => {
      let left = 200
      const step = () => (--left === 0 ? resolve() : setTimeout(step, 0))
      setTimeout(step, 0)
    })
  let best = Infinity
  for (let r = 0; r < 2; r++) {
    const t0 = process.hrtime.bigint()
    await short()
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 200)
  }
  return best
}

const rows = []
for (const [shape, make] of [['chain', chain], ['burst', burst]]) {
  for (const [name, queue] of Object.entries(queues)) {
    const nsPerOp = name === 'setTimeout(fn, 0)' && shape === 'chain' ? await setTimeoutChain() : await measure(make(queue))
    rows.push({ shape, queue: name, nsPerOp: Math.round(nsPerOp) })
  }
}
for (const [name, pair] of Object.entries(pairs)) {
  rows.push({ shape: 'schedule+cancel', queue: name, nsPerOp: Math.round(await measure(cancelled(pair))) })
}
const ns = (shape, queue) => rows.find((r) => r.shape === shape && r.queue === queue).nsPerOp
for (const r of rows) {
  const base = r.shape === 'schedule+cancel' ? ns(r.shape, 'clearTimeout(setTimeout(fn, 1000))') : ns(r.shape, 'setImmediate(fn)')
  r['vs base'] = (r.nsPerOp / base).toFixed(2) + 'x'
}
console.log(markdownTable(rows.map((r) => ({ shape: r.shape, queue: `\`${r.queue}\``, 'ns per op': r.nsPerOp, 'vs base': r['vs base'] }))))
console.log('\nbase: setImmediate(fn) for chain and burst, clearTimeout(setTimeout(fn, 1000)) for schedule+cancel\n')
const ratio = (a, b) => (a / b).toFixed(2) + 'x'
console.log(`burst: loop.schedule(fn, 0) vs setTimeout(fn, 0) = ${ratio(ns('burst', 'loop.schedule(fn, 0)'), ns('burst', 'setTimeout(fn, 0)'))} (target <= 1.5x)`)
console.log(
  `schedule+cancel vs setTimeout+clearTimeout = ${ratio(ns('schedule+cancel', 'loop.schedule(fn, 1000).cancel()'), ns('schedule+cancel', 'clearTimeout(setTimeout(fn, 1000))'))} (target <= 1x)`,
)
await loop.shutdownGracefully(0, 1000)
