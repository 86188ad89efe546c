import test from 'ava'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

import { EventLoopGroup } from '../index'
import './helpers'

const index = join(__dirname, '..', 'index.js')

/** Runs a script in a fresh `node --expose-gc` (optionally under `ulimit -n`) and returns its stdout. */
function run(script: string, fdLimit?: number): string {
  const body = `
    const { EventLoop, EventLoopGroup } = require(${JSON.stringify(index)})
    const { readdirSync } = require('node:fs')
    const fds = () => readdirSync('/proc/self/fd').length
    const turn = () => new Promise((r) => setImmediate(r))
    ;(async () => { ${script} })().catch((e) => { console.log('failed', e && e.code, String(e)); process.exitCode = 1 })
  `
  const args = ['--expose-gc', '-e', body]
  if (fdLimit === undefined) return execFileSync(process.execPath, args, { encoding: 'utf8', timeout: 30_000 })
  return execFileSync('/bin/sh', ['-c', `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
  })
}

test('idle loops nobody references are collected and close their fds', (t) => {
  const out = run(`
    const before = fds()
    for (let i = 0; i < 3000; i++) new EventLoop()
    const made = fds()
    for (let i = 0; i < 5 && fds() > before + 10; i++) { global.gc(); await turn(); await turn() }
    console.log(JSON.stringify({ before, made, after: fds() }))
  `)
  const { before, made, after } = JSON.parse(out)
  t.true(made >= before + 2000, `made ${made - before} fds for 3000 loops (the test needs them open at first)`)
  t.true(after <= before + 10, `${after - before} fds left after gc (before ${before}, made ${made})`)
})

test('an unreferenced loop with a pending timer or task is not collected before it runs', (t) => {
  const out = run(`
    ;(() => {
      const a = new EventLoop()
      a.schedule(() => console.log('timer ran'), 50)
      const b = new EventLoop()
      b.execute(() => console.log('task ran'))
    })()
    global.gc()
    await turn()
    global.gc()
  `)
  t.is(out.split('\n').filter(Boolean).sort().join(','), 'task ran,timer ran')
})

test('an idle loop that is still referenced survives GC and keeps working', (t) => {
  const out = run(`
    const loop = new EventLoop()
    for (let i = 0; i < 5; i++) { global.gc(); await turn() }
    let ran = false
    loop.execute(() => (ran = true))
    await loop.shutdownGracefully(0, 100)
    console.log(ran, loop.state)
  `)
  t.is(out, 'true terminated\n')
})

test('a terminated loop releases its epoll fd and eventfd at termination, not at GC', (t) => {
  const out = run(`
    const before = fds()
    const kept = Array.from({ length: 200 }, () => new EventLoop())
    const made = fds()
    await Promise.all(kept.map((l) => l.shutdownGracefully(0, 100)))
    await turn()
    console.log(JSON.stringify({ before, made, after: fds(), states: [...new Set(kept.map((l) => l.state))] }))
  `)
  const { before, made, after, states } = JSON.parse(out)
  t.true(made >= before + 400, `made ${made - before} fds`)
  t.true(after <= before + 5, `${after - before} fds still open for 200 terminated loops`)
  t.deepEqual(states, ['terminated'])
})

test('a group bounds its size', (t) => {
  t.throws(() => new EventLoopGroup(1e9), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new EventLoopGroup(4097), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new EventLoopGroup(1.5), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new EventLoopGroup('2' as unknown as number), { code: 'ERR_INVALID_ARG_TYPE' })
})

test('a group that runs out of fds releases the loops it made and throws a NetloopError', (t) => {
  const out = run(
    `
    const before = fds()
    let error
    try { new EventLoopGroup(4000) } catch (e) { error = e }
    const after = fds()
    const loop = new EventLoop()
    await loop.shutdownGracefully(0, 100)
    console.log(JSON.stringify({ name: error && error.name, code: error && error.code, leaked: after - before }))
  `,
    256,
  )
  const { name, code, leaked } = JSON.parse(out)
  t.is(name, 'NetloopError')
  t.is(code, 'ERR_IO')
  t.true(leaked <= 2, `${leaked} fds kept by the failed group`)
})

test('pending JS timers keep the process alive; a process exits once its last timer is cancelled', (t) => {
  const started = Date.now()
  const out = run(`
    const loop = new EventLoop()
    const long = loop.schedule(() => console.log('must not run'), 60_000)
    let runs = 0
    const periodic = loop.scheduleAtFixedRate(() => {
      if (++runs === 3) { periodic.cancel(); long.cancel(); console.log('cancelled') }
    }, 10, 10)
  `)
  t.is(out, 'cancelled\n')
  t.true(Date.now() - started < 20_000)
})
