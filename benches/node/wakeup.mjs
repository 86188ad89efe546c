// Wake-up latency of an attached loop when a task arrives from another OS thread: a Rust
// thread posts tasks one at a time (50 µs apart) and each reports post-to-run nanoseconds.
//
//   node benches/node/wakeup.mjs [N]
import netloop from '../../index.js'

const { EventLoop } = netloop
const N = Number(process.argv[2] ?? 2000)
const loop = new EventLoop({ name: 'wakeup' })
const samples = []
// A loop waiting only for other threads does not keep the process alive unless ref()ed.
loop.ref()
await new Promise((resolve) => {
  loop._onRemoteTask = (ns) => {
    samples.push(ns)
    if (samples.length === N) resolve()
  }
  loop._postFromOtherThread(N, 10)
})
samples.sort((a, b) => a - b)
const pct = (p) => (samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))] / 1000).toFixed(1)
console.table([{ samples: N, 'p50 µs': pct(50), 'p90 µs': pct(90), 'p99 µs': pct(99), 'max µs': pct(100) }])
await loop.shutdownGracefully(0, 1000)
