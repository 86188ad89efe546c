import test from 'ava'
import { spawn } from 'node:child_process'
import { stat } from 'node:fs'
import { join } from 'node:path'

import { EventLoop } from '../index'
import { countTurns } from './helpers'

const index = join(__dirname, '..', 'index.js')

/** An endless chain: every task queues the next one. */
function endlessChain(loop: EventLoop): { stop(): void; runs(): number } {
  let running = true
  let runs = 0
  const f = () => {
    runs++
    if (running) loop.execute(f)
  }
  loop.execute(f)
  return { stop: () => (running = false), runs: () => runs }
}

test.serial('an endless task chain leaves setImmediate, timers and fs callbacks their turn', async (t) => {
  const loop = new EventLoop()
  const chain = endlessChain(loop)
  const immediates = countTurns()
  let stats = 0
  let statOn = true
  const statOne = () =>
    stat(__filename, () => {
      stats++
      if (statOn) statOne()
    })
  statOne()
  const started = Date.now()
  let timeoutAfter = -1
  setTimeout(() => (timeoutAfter = Date.now() - started), 50)
  // A timer of the same 1 s, so the check does not itself depend on the loop being fair.
  await new Promise<void>((resolve) => setTimeout(resolve, 1000))
  immediates.stop()
  statOn = false
  chain.stop()
  await loop.shutdownGracefully(0, 2000)
  t.true(immediates.turns > 50, `setImmediate ran ${immediates.turns} times in 1 s`)
  t.true(stats > 20, `fs.stat called back ${stats} times in 1 s`)
  t.true(timeoutAfter >= 0 && timeoutAfter < 1000, `the 50 ms timeout fired after ${timeoutAfter} ms`)
  t.true(chain.runs() > 1000, `the chain ran ${chain.runs()} tasks`)
})

test.serial('queued JS tasks run one batch of 32 per loop iteration, with setImmediate turns in between', async (t) => {
  // One native marker per iteration runs one JS batch: nothing else bounds JS work per
  // iteration (the binding's own per-iteration marker bound is gone).
  const loop = new EventLoop({ ioRatio: 100 })
  const turns = countTurns()
  const seen: number[] = []
  await new Promise<void>((resolve) => {
    for (let i = 0; i < 32 * 10; i++) loop.execute(() => (seen.push(turns.turns), seen.length === 32 * 10 && resolve()))
  })
  turns.stop()
  await loop.shutdownGracefully(0, 2000)
  for (let b = 0; b < 10; b++) t.is(new Set(seen.slice(b * 32, b * 32 + 32)).size, 1, `batch ${b} ran within one iteration`)
  t.true(new Set(seen).size >= 10, `10 batches ran in ${new Set(seen).size} iterations`)
})

test.serial('an endless task chain of an ioRatio 100 loop leaves setImmediate its turn', async (t) => {
  const loop = new EventLoop({ ioRatio: 100 })
  const chain = endlessChain(loop)
  const immediates = countTurns()
  await new Promise<void>((resolve) => setTimeout(resolve, 500))
  immediates.stop()
  chain.stop()
  await loop.shutdownGracefully(0, 2000)
  t.true(immediates.turns > 25, `setImmediate ran ${immediates.turns} times in 0.5 s`)
})

test('a SIGINT handler runs while a task chain keeps the loop busy', async (t) => {
  const script = `
    const { EventLoop } = require(${JSON.stringify(index)})
    const loop = new EventLoop()
    process.on('SIGINT', () => { console.log('sigint'); process.exit(0) })
    let n = 0
    const f = () => { if (++n === 1000) console.log('busy'); loop.execute(f) }
    loop.execute(f)
  `
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (d: string) => {
    out += d
    if (out.includes('busy') && !out.includes('sent')) {
      out += 'sent'
      child.kill('SIGINT')
    }
  })
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
  clearTimeout(killer)
  t.is(code, 0, `output: ${out}`)
  t.true(out.includes('sigint'))
})

test.serial('a burst of slow due timers, an endless timer chain and a 1 µs fixed-rate timer leave setImmediate its turn', async (t) => {
  const loop = new EventLoop()
  let fired = 0
  const turns = countTurns()
  // 1000 due timers of 0.1 ms each: 100 ms of callbacks, cut by the time budget per dispatch.
  const busy = () => {
    const end = performance.now() + 0.1
    while (performance.now() < end) {}
    fired++
  }
  for (let i = 0; i < 1000; i++) loop.schedule(busy, 0)
  await new Promise<void>((resolve) => {
    const check = () => (fired === 1000 ? resolve() : setImmediate(check))
    check()
  })
  t.true(turns.turns > 5, `setImmediate ran ${turns.turns} times during 1000 due timers of 0.1 ms`)
  let chain = true
  const step = () => {
    if (chain) loop.schedule(step, 0)
  }
  loop.schedule(step, 0)
  let periodicRuns = 0
  const periodic = loop.scheduleAtFixedRate(() => periodicRuns++, 0, 0.001)
  const before = turns.turns
  await new Promise<void>((resolve) => setTimeout(resolve, 300))
  const immediates = turns.turns - before
  chain = false
  turns.stop()
  periodic.cancel()
  await loop.shutdownGracefully(0, 2000)
  t.true(immediates > 15, `setImmediate ran ${immediates} times in 0.3 s`)
  t.true(periodicRuns > 100, `the 1 µs timer ran ${periodicRuns} times`)
})
