import test from 'ava'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import * as native from '../native'
import { EventLoop, NetloopError } from '../index'
import { until, withLoop } from './helpers'

const root = join(__dirname, '..')

test('every task accepted before shutdown runs, even past the first batch', async (t) => {
  const loop = new EventLoop()
  let ran = 0
  for (let i = 0; i < 1000; i++) loop.execute(() => ran++)
  await loop.shutdownGracefully(0, 1000)
  t.is(ran, 1000)
})

test('a task executed during termination either runs or is rejected at the call', async (t) => {
  const errors: unknown[] = []
  const loop = new EventLoop({ onTaskError: (e) => errors.push(e) })
  let accepted = 0
  let ran = 0
  const f = () => {
    ran++
    try {
      loop.execute(f)
      accepted++
    } catch (e) {
      t.true(e instanceof NetloopError)
      t.is((e as NetloopError).code, 'ERR_REJECTED_EXECUTION')
    }
  }
  for (let i = 0; i < 100; i++) loop.execute(f)
  await loop.shutdownGracefully(0, 200)
  t.is(ran, 100 + accepted)
  t.deepEqual(errors, [])
})

test('the shutdown timeout bounds a quiet period that tasks keep busy', async (t) => {
  const rejections: unknown[] = []
  const loop = new EventLoop({ onTaskError: (e) => rejections.push(e) })
  let running = true
  const f = () => {
    // Rejected once the timeout ends the shutdown: the chain stops there.
    if (running) loop.execute(f)
  }
  loop.execute(f)
  const started = Date.now()
  await loop.shutdownGracefully(100, 300)
  running = false
  const took = Date.now() - started
  t.true(took >= 250 && took < 3000, `terminated after ${took} ms`)
  t.true(rejections.every((e) => (e as NetloopError).code === 'ERR_REJECTED_EXECUTION'))
})

test('one-shot and periodic timers fire in deadline order', async (t) => {
  const loop = withLoop(t)
  const fired: string[] = []
  // Deadlines 60 ms apart: each is taken when its schedule call runs, so a pause of the
  // test's own thread between two calls (a loaded machine) must not reorder them.
  loop.schedule(() => fired.push('live'), 190)
  const periodic = loop.scheduleAtFixedRate(() => {
    fired.push('periodic')
    periodic.cancel()
  }, 130, 1000)
  loop.schedule(() => fired.push('last'), 10)
  loop.schedule(() => fired.push('wrapped'), 70)
  await until(() => fired.length === 4)
  t.deepEqual(fired, ['last', 'wrapped', 'periodic', 'live'])
})

test('non-finite and too small numbers are rejected with ERR_OUT_OF_RANGE', (t) => {
  const loop = withLoop(t)
  const e = t.throws(() => loop.schedule(() => {}, Infinity), { code: 'ERR_OUT_OF_RANGE', instanceOf: NetloopError })
  t.is(e?.message, 'The value of "delayMs" is out of range. It must be a finite number. Received Infinity')
  t.throws(() => loop.schedule(() => {}, -Infinity), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => loop.scheduleAtFixedRate(() => {}, Infinity, 1), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => loop.scheduleAtFixedRate(() => {}, 0, Infinity), { code: 'ERR_OUT_OF_RANGE' })
  const small = t.throws(() => loop.scheduleAtFixedRate(() => {}, 0, 1e-7), { code: 'ERR_OUT_OF_RANGE' })
  t.is(small?.message, 'The value of "periodMs" is out of range. It must be a finite number >= 0.001. Received 1e-7')
  t.throws(() => loop.scheduleWithFixedDelay(() => {}, 0, 0.0009), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => loop.shutdownGracefully(Infinity, Infinity), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => loop.shutdownGracefully(0, Infinity), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => loop.shutdownGracefully(-1, 10), { code: 'ERR_OUT_OF_RANGE' })
  const quiet = t.throws(() => loop.shutdownGracefully(200, 100), { code: 'ERR_OUT_OF_RANGE' })
  t.is(quiet?.message, 'The value of "quietPeriodMs" is out of range. It must be <= timeoutMs (100). Received 200')
  t.is(loop.state, 'started', 'a rejected call changes nothing')
})

test('the shortest period runs', async (t) => {
  const loop = withLoop(t)
  let runs = 0
  const task = loop.scheduleAtFixedRate(() => {
    if (++runs === 5) task.cancel()
  }, 0, 0.001)
  await until(() => runs === 5)
  t.true(task.isCancelled)
})

test('wrong types are rejected with ERR_INVALID_ARG_TYPE in Node style', (t) => {
  const loop = withLoop(t)
  const e = t.throws(() => loop.schedule(() => {}, '100' as unknown as number), { code: 'ERR_INVALID_ARG_TYPE', instanceOf: NetloopError })
  t.is(e?.message, `The "delayMs" argument must be of type number. Received type string ('100')`)
  t.throws(() => loop.schedule(undefined as unknown as () => void, 1), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => new EventLoop({ name: 42 as unknown as string }), { code: 'ERR_INVALID_ARG_TYPE', instanceOf: NetloopError })
  t.throws(() => new EventLoop({ ioRatio: '5' as unknown as number }), { code: 'ERR_INVALID_ARG_TYPE', instanceOf: NetloopError })
  t.throws(() => new EventLoop({ onTaskError: 1 as unknown as () => void }), { code: 'ERR_INVALID_ARG_TYPE', instanceOf: NetloopError })
  t.throws(() => new EventLoop(null as unknown as object), { code: 'ERR_INVALID_ARG_TYPE', instanceOf: NetloopError })
  t.throws(() => loop.shutdownGracefully('1' as unknown as number), { code: 'ERR_INVALID_ARG_TYPE' })
})

test('timers are rejected from the start of a graceful shutdown, tasks after it', async (t) => {
  const loop = new EventLoop()
  const done = loop.shutdownGracefully(100, 1000)
  t.throws(() => loop.schedule(() => {}, 0), { code: 'ERR_REJECTED_EXECUTION', instanceOf: NetloopError })
  t.throws(() => loop.scheduleAtFixedRate(() => {}, 0, 1), { code: 'ERR_REJECTED_EXECUTION' })
  let ran = false
  loop.execute(() => (ran = true))
  t.is(loop.shutdownGracefully(0, 0), done, 'a second call returns the same promise')
  await done
  t.true(ran)
  t.throws(() => loop.execute(() => {}), { code: 'ERR_REJECTED_EXECUTION', instanceOf: NetloopError })
  t.throws(() => loop.schedule(() => {}, 0), { code: 'ERR_REJECTED_EXECUTION', instanceOf: NetloopError })
  t.is(loop.state, 'terminated')
  t.is(loop.pendingTasks, 0)
})

test('an async task that rejects goes to onTaskError', async (t) => {
  const errors: unknown[] = []
  const loop = withLoop(t, { onTaskError: (e) => errors.push(e) })
  loop.execute(async () => {
    await null
    throw new Error('async task failed')
  })
  loop.schedule(async () => {
    throw new Error('async timer failed')
  }, 0)
  await until(() => errors.length === 2)
  t.deepEqual(errors.map((e) => (e as Error).message).sort(), ['async task failed', 'async timer failed'])
  t.is(loop.taskFailures, 2)
})

test('maxPendingTasks bounds the queue and pendingTasks counts it', async (t) => {
  const loop = withLoop(t, { maxPendingTasks: 3 })
  let ran = 0
  for (let i = 0; i < 3; i++) loop.execute(() => ran++)
  t.is(loop.pendingTasks, 3)
  t.throws(() => loop.execute(() => ran++), { code: 'ERR_REJECTED_EXECUTION', instanceOf: NetloopError })
  await until(() => ran === 3)
  t.is(loop.pendingTasks, 0)
  loop.execute(() => ran++)
  await until(() => ran === 4)
})

test('more timers due together than one dispatch runs keep their order', async (t) => {
  const loop = withLoop(t)
  const n = 3 * 1024 + 5
  const order: number[] = []
  for (let i = 0; i < n; i++) loop.schedule(() => order.push(i), 5)
  await until(() => order.length === n)
  t.deepEqual(order, [...Array(n).keys()])
})

test('a loop that cannot watch its rebuilt selector reports ERR_LOOP_FAILED and terminates', async (t) => {
  const errors: NetloopError[] = []
  const loop = new EventLoop({ onTaskError: (e) => errors.push(e as NetloopError) })
  loop._failNextRewatch()
  loop._injectSelectorFaults(600)
  for (let i = 0; i < 2000 && loop.state !== 'terminated'; i++) {
    await new Promise<void>((resolve) => {
      try {
        loop.execute(resolve)
      } catch {
        resolve()
      }
      setTimeout(resolve, 5)
    })
  }
  await loop.terminationFuture()
  t.is(errors.length, 1)
  t.is(errors[0].code, 'ERR_LOOP_FAILED')
})

test('test hooks are not in the published types and do nothing without NETLOOP_TEST_HOOKS', (t) => {
  const published = ['index.d.ts', 'src/loop.d.ts', 'src/timers.d.ts', 'src/group.d.ts', 'src/errors.d.ts', 'native.d.ts'].map((f) => readFileSync(join(root, f), 'utf8')).join('\n')
  for (const name of ['_postFromOtherThread', '_injectSelectorFaults', '_wakeups', '_markDone', '_onRemoteTask', '_selectorRebuilds', 'testHook', 'injectSelectorFaults', 'postFromOtherThread', '_timerLayout', '_pendingTimers', '_nativeTimers', 'TimerQueue', '_remove']) {
    t.false(published.includes(name), `${name} is published`)
  }
  const env = { ...process.env }
  delete env.NETLOOP_TEST_HOOKS
  const out = execFileSync(
    process.execPath,
    ['-e', `const { EventLoop } = require(${JSON.stringify(join(root, 'index.js'))}); const l = new EventLoop(); try { l._injectSelectorFaults(1); console.log('enabled') } catch (e) { console.log(e.code) } l.shutdownGracefully(0, 0)`],
    { encoding: 'utf8', env },
  )
  t.is(out.trim(), 'ERR_INVALID_ARG_VALUE')
})

test('periodic schedules reject a negative initial delay, as Netty does', (t) => {
  const loop = new EventLoop()
  t.teardown(() => loop.shutdownGracefully(0, 100))
  t.is(t.throws(() => loop.scheduleAtFixedRate(() => {}, -1, 10))?.code, 'ERR_OUT_OF_RANGE')
  t.is(t.throws(() => loop.scheduleWithFixedDelay(() => {}, -5, 10))?.code, 'ERR_OUT_OF_RANGE')
  t.notThrows(() => loop.schedule(() => {}, -1).cancel())
})
