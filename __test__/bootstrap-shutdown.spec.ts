// Binding or connecting on a loop or group that is shut down: a NetloopError
// ERR_REJECTED_EXECUTION that says so, whether or not the loops ever had a channel.
import test from 'ava'

import { Bootstrap, EventLoop, EventLoopGroup, NetloopError, ServerBootstrap } from '../index'

const shutDown = { instanceOf: NetloopError, code: 'ERR_REJECTED_EXECUTION', message: /shut down/ }

test('bind on a shut-down group whose loops never had a channel rejects with ERR_REJECTED_EXECUTION', async (t) => {
  const group = new EventLoopGroup(2)
  await group.shutdownGracefully(0, 1000)
  const b = new ServerBootstrap().group(group).childHandler(() => {})
  await t.throwsAsync(b.bind(0, '127.0.0.1'), shutDown)
})

test('bind on a group terminated after it served a server rejects with ERR_REJECTED_EXECUTION', async (t) => {
  const group = new EventLoopGroup(1)
  const server = await new ServerBootstrap().group(group).childHandler(() => {}).bind(0, '127.0.0.1')
  await server.close()
  await group.shutdownGracefully(0, 1000)
  const b = new ServerBootstrap().group(group).childHandler(() => {})
  await t.throwsAsync(b.bind(0, '127.0.0.1'), shutDown)
})

test('bind with a running boss but shut-down child loops rejects with ERR_REJECTED_EXECUTION', async (t) => {
  const boss = new EventLoop()
  t.teardown(() => boss.shutdownGracefully(0, 1000))
  const workers = new EventLoopGroup(1)
  await workers.shutdownGracefully(0, 1000)
  const b = new ServerBootstrap().group(boss, workers).childHandler(() => {})
  await t.throwsAsync(b.bind(0, '127.0.0.1'), shutDown)
})

test('connect on a shut-down loop rejects with ERR_REJECTED_EXECUTION', async (t) => {
  const loop = new EventLoop()
  await loop.shutdownGracefully(0, 1000)
  await t.throwsAsync(new Bootstrap().group(loop).handler(() => {}).connect(9, '127.0.0.1'), shutDown)
})
