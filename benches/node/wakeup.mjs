// Wake-up latency of a JS thread when work arrives from another thread, measured in the same
// run for netloop and for Node's own cross-thread path:
// - netloop: a Rust thread posts tasks to an attached loop one at a time (50 µs apart); each
//   reports post-to-run nanoseconds (eventfd → epoll fd → libuv → one loop iteration).
// - node: a worker_thread posts messages to the main thread through a MessagePort, sleeping
//   50 µs in between, each stamped with process.hrtime (uv_hrtime, one clock per process).
//
//   node benches/node/wakeup.mjs [N] [--quick] [--addon FILE.node]
//
// N samples per path (default 2000; --quick: 500). The poster is a test hook of the native
// loop, enabled for loops made with NETLOOP_TEST_HOOKS=1 (set here). --addon loads that addon
// (NAPI_RS_NATIVE_LIBRARY_PATH) instead of the repository's. Prints a markdown table.
import { Worker } from 'node:worker_threads'
import { addonUnderTest, flag, markdownTable, positionals } from './harness.mjs'

process.env.NETLOOP_TEST_HOOKS ||= '1' // read by the addon when a loop is made
const { addonId } = addonUnderTest() // before loading the library: --addon sets its path
const { default: netloop } = await import('../../index.js')
const { EventLoop } = netloop
const N = Number(positionals()[0] ?? (flag('--quick') ? 500 : 2000))
const id = addonId()
console.log(`addon ${id.file}: ${id.size} bytes, ${id.mtime}, sha256 ${id.sha256}; ${N} samples per path; node ${process.version}\n`)

async function netloopSamples() {
  const loop = new EventLoop({ name: 'wakeup' })
  loop.ref() // a loop waiting only for other threads does not keep the process alive otherwise
  const samples = []
  await new Promise((resolve) => {
    loop._onRemoteTask = (ns) => {
      samples.push(ns)
      if (samples.length === N) resolve()
    }
    loop._postFromOtherThread(N, 10)
  })
  await loop.shutdownGracefully(0, 1000)
  return samples
}

async function messagePortSamples() {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads')
     parentPort.once('message', (n) => {
       const nap = new Int32Array(new SharedArrayBuffer(4))
       for (let i = 0; i < n; i++) {
         Atomics.wait(nap, 0, 0, 0.05) // sleep 50 µs, as the Rust poster does
         parentPort.postMessage(process.hrtime.bigint())
       }
     })`,
    { eval: true },
  )
  const samples = []
  await new Promise((resolve) => {
    worker.on('message', (sent) => {
      samples.push(Number(process.hrtime.bigint() - sent))
      if (samples.length === N) resolve()
    })
    worker.postMessage(N)
  })
  await worker.terminate()
  return samples
}

const pct = (s, p) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] / 1000
const row = (name, s) => {
  s.sort((a, b) => a - b)
  return { path: name, samples: s.length, 'p50 µs': pct(s, 50), 'p90 µs': pct(s, 90), 'p99 µs': pct(s, 99), 'max µs': pct(s, 100) }
}
const a = row('netloop: Rust thread → attached loop', await netloopSamples())
const b = row('node: worker postMessage → main thread', await messagePortSamples())
for (const r of [a, b]) for (const k of Object.keys(r)) if (typeof r[k] === 'number' && k !== 'samples') r[k] = r[k].toFixed(1)
console.log(markdownTable([a, b]))
console.log()
console.log(`p50 ratio netloop / node: ${(a['p50 µs'] / b['p50 µs']).toFixed(2)}x (lower is better for netloop)`)
