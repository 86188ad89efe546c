// netloop's loop.execute(fn) / loop.schedule(fn, 0) against setImmediate and setTimeout(fn, 0),
// measured in the same run. Two shapes: a chain (each callback queues the next: latency of one
// hop) and a burst (N queued at once: throughput).
//
//   node benches/node/schedule.mjs [N]
import netloop from '../../index.js'

const { EventLoop } = netloop
const N = Number(process.argv[2] ?? 100_000)
const ROUNDS = 5
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

const queues = {
  'loop.execute(fn)': (fn) => loop.execute(fn),
  'loop.schedule(fn, 0)': (fn) => loop.schedule(fn, 0),
  'setImmediate(fn)': (fn) => setImmediate(fn),
  'setTimeout(fn, 0)': (fn) => setTimeout(fn, 0),
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

const rows = []
for (const [shape, make] of [['chain', chain], ['burst', burst]]) {
  const n = shape === 'chain' && make === chain ? N : N
  for (const [name, queue] of Object.entries(queues)) {
    if (name === 'setTimeout(fn, 0)' && shape === 'chain') {
      // setTimeout(0) is clamped to 1 ms per hop: measure a shorter chain.
      const saved = N
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
      rows.push({ shape, queue: name, nsPerOp: Math.round(best) })
      void saved
      continue
    }
    rows.push({ shape, queue: name, nsPerOp: Math.round(await measure(make(queue))) })
    void n
  }
}
const base = (shape) => rows.find((r) => r.shape === shape && r.queue === 'setImmediate(fn)').nsPerOp
for (const r of rows) r['vs setImmediate'] = (r.nsPerOp / base(r.shape)).toFixed(2) + 'x'
console.table(rows)
await loop.shutdownGracefully(0, 1000)
