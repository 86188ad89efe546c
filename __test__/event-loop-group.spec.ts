import test from 'ava'

import { EventLoopGroup } from '../index'
import { until } from './helpers'

test('next() hands out the loops round robin, in order', async (t) => {
  for (const n of [1, 3, 4]) {
    const group = new EventLoopGroup(n)
    t.is(group.size, n)
    t.is(new Set(group.loops).size, n, 'the loops are distinct objects')
    for (let i = 0; i < 3 * n; i++) t.is(group.next(), group.loops[i % n], `pick ${i} of a group of ${n}`)
    t.deepEqual(group.loops.map((l) => l.name), Array.from({ length: n }, (_, i) => `netloop-${i}`))
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

test('shutdownGracefully returns the same termination promise on every call', async (t) => {
  const group = new EventLoopGroup(2)
  const first = group.shutdownGracefully(0, 1000)
  const second = group.shutdownGracefully(0, 1000)
  t.is(first, second, 'Netty: shutdownGracefully() returns terminationFuture()')
  t.is(first, group.terminationFuture())
  await first
  t.true(group.isTerminated)
  t.is(group.shutdownGracefully(), first, 'also after termination')
})

test('a group rejects a quiet period above the timeout before any loop shuts down', (t) => {
  const group = new EventLoopGroup(2)
  t.teardown(() => group.shutdownGracefully(0, 1000))
  t.throws(() => group.shutdownGracefully(200, 100), { code: 'ERR_OUT_OF_RANGE' })
  t.false(group.loops.some((l) => l.state === 'shutting-down' || l.state === 'terminated'))
})
