import test from 'ava'

import { EventLoopGroup } from '../index'
import { until } from './helpers'

test('next() hands out the loops round robin', async (t) => {
  for (const n of [3, 4]) {
    const group = new EventLoopGroup(n)
    t.is(group.size, n)
    const picked = Array.from({ length: 2 * n }, () => group.next())
    t.deepEqual(picked.slice(0, n), picked.slice(n))
    t.is(new Set(picked).size, n)
    await group.shutdownGracefully(0, 1000)
  }
})

test('a group shuts every loop down and is then terminated', async (t) => {
  const group = new EventLoopGroup(2)
  let ran = 0
  for (const loop of group.loops) loop.execute(() => ran++)
  t.false(group.isTerminated)
  await group.shutdownGracefully(0, 1000)
  t.true(group.isTerminated)
  t.is(ran, 2)
  await group.terminationFuture()
})

test('loops of a group run tasks independently', async (t) => {
  const group = new EventLoopGroup(2)
  t.teardown(() => group.shutdownGracefully(0, 1000))
  const seen: string[] = []
  group.next().execute(() => seen.push('first'))
  group.next().execute(() => seen.push('second'))
  await until(() => seen.length === 2)
  t.deepEqual([...seen].sort(), ['first', 'second'])
})

test('a negative loop count is rejected', (t) => {
  t.throws(() => new EventLoopGroup(-1), { code: 'ERR_OUT_OF_RANGE' })
})
