import test from 'ava'

import { NetloopError } from '../index'
import { withLoop } from './helpers'

test('getDelay and delay give the time left before a scheduled task runs', (t) => {
  const loop = withLoop(t)
  const task = loop.schedule(() => {}, 10_000)
  const d = task.getDelay()
  t.true(d > 9_000 && d <= 10_000, `${d}`)
  t.true(task.delay <= d)
  t.true(loop.schedule(() => {}, -5).getDelay() <= 0)
  task.cancel()
})

test('a scheduled task is a future: listeners and await get its result, in the order added', async (t) => {
  const loop = withLoop(t)
  const seen: string[] = []
  const task = loop.schedule(() => 42, 5)
  task.addListener((e, v) => seen.push(`first ${e} ${v}`)).addListener((e, v) => seen.push(`second ${e} ${v}`))
  t.is(await task, 42)
  t.deepEqual(seen, ['first null 42', 'second null 42'])
  t.is(await loop.schedule(async () => 'async', 0), 'async')
})

test('a failing task rejects its future (and still reaches onTaskError)', async (t) => {
  const reported: unknown[] = []
  const loop = withLoop(t, { onTaskError: (e) => reported.push(e) })
  const task = loop.schedule(() => {
    throw new Error('boom')
  }, 0)
  t.is((await t.throwsAsync(Promise.resolve(task)))?.message, 'boom')
  t.is((await t.throwsAsync(Promise.resolve(loop.schedule(async () => Promise.reject(new Error('later')), 0))))?.message, 'later')
  t.deepEqual(reported.map((e) => (e as Error).message).sort(), ['boom', 'later'])
})

test('a cancelled task, one-shot or periodic, fails its listeners with ERR_CANCELLED; removed listeners are not called', async (t) => {
  const loop = withLoop(t)
  const calls: string[] = []
  const once = loop.schedule(() => t.fail('cancelled'), 60_000)
  const periodic = loop.scheduleAtFixedRate(() => {}, 0, 1)
  const removed = () => calls.push('removed listener called')
  once.addListener(removed).addListener((e) => calls.push(`once ${(e as NetloopError).code}`))
  t.true(once.removeListener(removed))
  t.false(once.removeListener(removed))
  const rejected = t.throwsAsync(Promise.resolve(periodic), { code: 'ERR_CANCELLED', instanceOf: NetloopError })
  once.cancel()
  setTimeout(() => periodic.cancel(), 20)
  await rejected
  t.deepEqual(calls, ['once ERR_CANCELLED'])
})

test("a loop's shutdown cancels pending tasks: their futures fail with ERR_CANCELLED", async (t) => {
  const loop = withLoop(t)
  const task = loop.schedule(() => {}, 60_000)
  const outcome = Promise.resolve(task).then(
    () => 'ran',
    (e: NetloopError) => e.code,
  )
  await loop.shutdownGracefully(0, 1000)
  t.is(await outcome, 'ERR_CANCELLED')
})
