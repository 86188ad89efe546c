// shutdownGracefully({ signal }) on EventLoop and EventLoopGroup: an already-aborted signal
// rejects at once and starts nothing; aborting during the shutdown skips the rest of the quiet
// period and timeout, and the promise rejects with an AbortError at once.
import test from 'ava'
import { getEventListeners } from 'node:events'
import { EventLoop, EventLoopGroup } from '../index'
import { join } from 'node:path'
import { until } from './helpers'

const LONG_QUIET = 60_000
const LONG_TIMEOUT = 120_000

test('an already-aborted signal rejects at once with an AbortError whose cause is the reason, and the loop goes on', async (t) => {
  const loop = new EventLoop()
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  const reason = new Error('stop')
  const err = await t.throwsAsync(loop.shutdownGracefully(0, 1000, { signal: AbortSignal.abort(reason) }))
  t.is(err!.name, 'AbortError')
  t.is((err as { code?: string }).code, 'ABORT_ERR')
  t.is(err!.cause, reason)
  t.is(loop.state, 'started', 'nothing was shut down')
  let ran = false
  loop.execute(() => void (ran = true))
  await until(() => ran)
  t.pass('the loop still runs tasks')
})

test('aborting during the quiet period rejects at once and the loop terminates without waiting it out', async (t) => {
  const loop = new EventLoop()
  const ac = new AbortController()
  let ran = false
  loop.execute(() => void (ran = true))
  const started = performance.now()
  const p = loop.shutdownGracefully(LONG_QUIET, LONG_TIMEOUT, { signal: ac.signal })
  t.is(loop.state, 'shutting-down')
  const reason = new Error('deploy')
  setTimeout(() => ac.abort(reason), 20)
  const err = await t.throwsAsync(p)
  t.is(err!.name, 'AbortError')
  t.is(err!.cause, reason)
  await loop.terminationFuture()
  t.is(loop.state, 'terminated')
  t.true(ran, 'the task accepted before the shutdown ran')
  t.true(performance.now() - started < 10_000, 'did not wait out the 60 s quiet period')
})

test('shutdownGracefully({ signal }) takes the default durations; a signal that never aborts resolves and leaves no listener', async (t) => {
  const loop = new EventLoop()
  const ac = new AbortController()
  const p = loop.shutdownGracefully({ signal: ac.signal })
  t.is(getEventListeners(ac.signal, 'abort').length, 1)
  ac.abort() // skips the 2 s default quiet period
  await t.throwsAsync(p, { name: 'AbortError' })
  await loop.terminationFuture()

  const loop2 = new EventLoop()
  const ac2 = new AbortController()
  await loop2.shutdownGracefully(0, 1000, { signal: ac2.signal })
  t.is(loop2.state, 'terminated')
  t.is(getEventListeners(ac2.signal, 'abort').length, 0, 'the listener went with the shutdown')
})

test('a bad signal is ERR_INVALID_ARG_TYPE', (t) => {
  const loop = new EventLoop()
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  t.throws(() => loop.shutdownGracefully(0, 1000, { signal: 'no' as never }), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => loop.shutdownGracefully(0, 1000, 5 as never), { code: 'ERR_INVALID_ARG_TYPE' })
  t.is(loop.state, 'started')
})

test('a group: an aborted signal rejects at once; aborting during the quiet period ends every loop promptly', async (t) => {
  const group = new EventLoopGroup(3)
  await t.throwsAsync(group.shutdownGracefully(0, 1000, { signal: AbortSignal.abort() }), { name: 'AbortError' })
  t.true(group.loops.every((l) => l.state === 'started'))
  const ac = new AbortController()
  const started = performance.now()
  const p = group.shutdownGracefully(LONG_QUIET, LONG_TIMEOUT, { signal: ac.signal })
  t.true(group.loops.every((l) => l.state === 'shutting-down'))
  setTimeout(() => ac.abort(), 20)
  await t.throwsAsync(p, { name: 'AbortError', code: 'ABORT_ERR' })
  await group.terminationFuture()
  t.true(group.isTerminated)
  t.true(performance.now() - started < 10_000)
})

test('a worker group: aborting during the quiet period makes every worker thread end promptly too', async (t) => {
  const group = new EventLoopGroup({ threads: 2, module: join(__dirname, 'fixtures', 'echo-module.ts') })
  const ac = new AbortController()
  const started = performance.now()
  const p = group.shutdownGracefully(LONG_QUIET, LONG_TIMEOUT, { signal: ac.signal })
  setTimeout(() => ac.abort(), 200)
  await t.throwsAsync(p, { name: 'AbortError' })
  // Without the workers' expedite, they would sit out the 60 s quiet period.
  const ended = await Promise.race([group.terminationFuture().then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 15_000).unref())])
  t.true(ended, 'every worker exited')
  t.true(group.isTerminated)
  t.true(performance.now() - started < 15_000)
})
