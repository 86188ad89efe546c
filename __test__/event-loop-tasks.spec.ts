// Tasks on an attached loop: order, errors, shutdown, other threads, async context.
import test from 'ava'
import { AsyncLocalStorage } from 'node:async_hooks'

import { EventLoop } from '../index'
import { sleep, until, withLoop } from './helpers'

test('execute runs tasks later, in FIFO order, on the calling thread', async (t) => {
  const loop = withLoop(t)
  const order: string[] = []
  loop.execute(() => order.push('a'))
  loop.execute(() => order.push('b'))
  order.push('sync')
  t.true(loop.inEventLoop())
  await until(() => order.length === 3)
  t.deepEqual(order, ['sync', 'a', 'b'])
})

test('a task executed from a task runs in the next batch, after its microtasks and setImmediate, as setImmediate would', async (t) => {
  const loop = withLoop(t)
  const order: string[] = []
  loop.execute(() => {
    order.push('a')
    Promise.resolve().then(() => order.push('microtask'))
    process.nextTick(() => order.push('nextTick'))
    setImmediate(() => order.push('immediate'))
    loop.execute(() => order.push('b'))
  })
  await until(() => order.length === 5)
  t.deepEqual(order, ['a', 'nextTick', 'microtask', 'immediate', 'b'])
})

test('bad arguments throw typed errors', (t) => {
  const loop = withLoop(t)
  t.throws(() => loop.execute(42 as unknown as () => void), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => loop.schedule(() => {}, Number.NaN), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => loop.scheduleAtFixedRate(() => {}, 0, 0), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => loop.scheduleWithFixedDelay(() => {}, 0, -1), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new EventLoop({ ioRatio: 0 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new EventLoop({ ioRatio: 101 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new EventLoop({ maxPendingTasks: 0 }), { code: 'ERR_OUT_OF_RANGE' })
})

test('a task that throws is reported and the loop goes on', async (t) => {
  const errors: unknown[] = []
  const loop = withLoop(t, { onTaskError: (e) => errors.push(e) })
  const order: string[] = []
  loop.execute(() => {
    throw new Error('task failed')
  })
  loop.schedule(() => {
    throw new Error('timer failed')
  }, 0)
  loop.execute(() => order.push('after'))
  await until(() => errors.length === 2 && order.length === 1)
  t.deepEqual(
    errors.map((e) => (e as Error).message).sort(),
    ['task failed', 'timer failed'],
  )
  t.is(loop.taskFailures, 2)
})

test('shutdownGracefully terminates the loop, then tasks are rejected', async (t) => {
  const loop = new EventLoop()
  let ran = false
  loop.execute(() => (ran = true))
  const timer = loop.schedule(() => t.fail('cancelled by shutdown'), 10_000)
  t.is(loop.state, 'started')
  const done = loop.shutdownGracefully(0, 1000)
  t.is(loop.state, 'shutting-down')
  await done
  t.true(ran, 'a task accepted before shutdown still ran')
  t.is(loop.state, 'terminated')
  t.true(timer.isCancelled)
  t.throws(() => loop.execute(() => {}), { code: 'ERR_REJECTED_EXECUTION' })
  t.throws(() => loop.schedule(() => {}, 0), { code: 'ERR_REJECTED_EXECUTION' })
  await loop.terminationFuture()
})

test('the quiet period lets late tasks run before termination', async (t) => {
  const loop = new EventLoop()
  const order: string[] = []
  const done = loop.shutdownGracefully(100, 5000).then(() => order.push('terminated'))
  await sleep(20)
  loop.execute(() => order.push('late task'))
  await done
  t.deepEqual(order, ['late task', 'terminated'])
})

test('a task posted from another OS thread wakes the loop', async (t) => {
  const loop = withLoop(t)
  const latencies: number[] = []
  loop._onRemoteTask = (ns) => latencies.push(ns)
  const before = loop._wakeups
  loop._postFromOtherThread(5, 20)
  await until(() => latencies.length === 5)
  t.true(latencies.every((ns) => ns > 0))
  t.true(loop._wakeups > before)
})

test('tasks and timers run in the async context of the code that submitted them', async (t) => {
  const als = new AsyncLocalStorage<string>()
  const loop = als.run('loop', () => new EventLoop())
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  const seen = new Map<string, string | undefined>()
  const record = (label: string) => seen.set(label, als.getStore())
  als.run('a', () => loop.execute(() => record('task a')))
  als.run('b', () => {
    loop.execute(() => {
      record('task b')
      // A task executed from a task inherits the running task's context...
      loop.execute(() => record('task from b'))
      // ...unless the code around the call changed it.
      als.run('d', () => loop.execute(() => record('task d from b')))
    })
    loop.schedule(() => record('timer b'), 0)
  })
  loop.execute(() => record('task without context'))
  let periodicRuns = 0
  const periodic = als.run('c', () =>
    loop.scheduleAtFixedRate(() => {
      record(`periodic c ${periodicRuns}`)
      if (++periodicRuns === 2) periodic.cancel()
    }, 0, 1),
  )
  const asyncTask = als.run('e', () => new Promise<void>((resolve) => loop.execute(async () => {
    await null
    record('async e after await')
    resolve()
  })))
  await until(() => seen.size === 9)
  await asyncTask
  t.deepEqual(Object.fromEntries(seen), {
    'task a': 'a',
    'task b': 'b',
    'task from b': 'b',
    'task d from b': 'd',
    'timer b': 'b',
    'task without context': undefined,
    'periodic c 0': 'c',
    'periodic c 1': 'c',
    'async e after await': 'e',
  })
})

test('after a selector rebuild libuv watches the new selector and the loop keeps working', async (t) => {
  const loop = withLoop(t)
  loop._injectSelectorFaults(600)
  let iterations = 0
  // Each execute from outside the loop wakes it for one iteration (one poll, one fault).
  while (loop._selectorRebuilds === 0 && iterations < 2000) {
    await new Promise<void>((resolve) => loop.execute(resolve))
    iterations++
  }
  t.true(loop._selectorRebuilds >= 1, `no rebuild after ${iterations} iterations`)
  loop._injectSelectorFaults(0)
  const latencies: number[] = []
  loop._onRemoteTask = (ns) => latencies.push(ns)
  loop._postFromOtherThread(3, 5)
  await until(() => latencies.length === 3)
  let ran = false
  loop.schedule(() => (ran = true), 5)
  await until(() => ran)
  t.pass()
})

test('shutdownGracefully with no quiet period ends soon although tasks keep submitting tasks', async (t) => {
  const rejected: string[] = []
  const loop = new EventLoop({ onTaskError: (e) => void rejected.push((e as { code?: string }).code ?? String(e)) })
  let runs = 0
  const again = () => {
    runs++
    loop.execute(again)
  }
  loop.execute(again)
  await until(() => runs > 10)
  const started = performance.now()
  await loop.shutdownGracefully(0, 20_000)
  const took = performance.now() - started
  t.is(loop.state, 'terminated')
  t.true(took < 5000, `took ${Math.round(took)} ms: the timeout (20 s) must not be what ended it`)
  t.deepEqual(rejected, ['ERR_REJECTED_EXECUTION'], 'the chain ends with one rejected execute')
})
