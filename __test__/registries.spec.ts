import test from 'ava'

import * as native from '../native'
import { EventLoop, EventLoopGroup } from '../index'
import { dial, serve, until } from './channel-helpers'

// The binding's registries are process-wide and per thread: the tests here run one at a time.

test.serial('no registry entry outlives its loop: loops, hubs, bridges and channels leave when the loop terminates', async (t) => {
  const before = native.registrySizes()
  const loop = new EventLoop()
  const { port, children } = await serve({ teardown: () => {} }, loop, () => {})
  const client = await dial(loop, port, () => {})
  await until(() => children.length === 1)
  const during = native.registrySizes()
  t.is(during.loops, before.loops + 1)
  t.is(during.hubs, before.hubs + 1)
  t.is(during.bridges, before.bridges + 1)
  t.is(during.channels, before.channels + 3, 'the server, the client and the accepted channel')
  t.true(client.isOpen)
  // No close: terminating the loop alone must empty the registries (no wait for GC).
  await loop.shutdownGracefully(0, 1000)
  const after = native.registrySizes()
  t.is(after.loops, before.loops)
  t.is(after.hubs, before.hubs)
  t.is(after.channels, before.channels)
  // The bridge closes its libuv handles at the end of the iteration that told JS.
  await until(() => native.registrySizes().bridges === before.bridges)
})

test.serial('a closed channel leaves the registry while its loop goes on', async (t) => {
  const loop = new EventLoop()
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  const { port, server, children } = await serve(t, loop, () => {})
  const before = native.registrySizes()
  const client = await dial(loop, port, () => {})
  await until(() => children.length === 1)
  t.is(native.registrySizes().channels, before.channels + 2)
  await client.close()
  await children[0].closeFuture
  await until(() => native.registrySizes().channels === before.channels)
  t.true(server.isOpen)
})

test.serial('the loops of a group leave the registry when the group terminates', async (t) => {
  const before = native.registrySizes()
  const group = new EventLoopGroup(2)
  const { port, children } = await serve({ teardown: () => {} }, group.next(), () => {})
  await dial(group.next(), port, () => {})
  await until(() => children.length === 1)
  t.true(native.registrySizes().loops >= before.loops + 1)
  await group.shutdownGracefully(0, 1000)
  const after = native.registrySizes()
  t.is(after.loops, before.loops)
  t.is(after.hubs, before.hubs)
  t.is(after.channels, before.channels)
  t.is(after.bridges, before.bridges)
})
