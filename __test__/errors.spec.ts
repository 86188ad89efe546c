import test from 'ava'
import * as os from 'node:os'

import { Bootstrap, EventLoop, NetloopError, ServerBootstrap } from '../index'
import { loopFor, serve } from './channel-helpers'
import { refusedPort } from './helpers'

test('a connect to a host name that does not resolve rejects with a NetloopError ENOTFOUND carrying the DNS fields', async (t) => {
  const loop = loopFor(t)
  const e = await t.throwsAsync(new Bootstrap().group(loop).handler(() => undefined).connect(80, 'no-such-host.invalid'), { instanceOf: NetloopError })
  t.is(e?.code, 'ENOTFOUND')
  t.is(e?.syscall, 'getaddrinfo')
  t.is(e?.hostname, 'no-such-host.invalid')
  t.is(typeof e?.errno, 'number')
})

test("a refused connect rejects like node:net's: code, errno, syscall, address and port", async (t) => {
  const loop = loopFor(t)
  const port = await refusedPort()
  const e = await t.throwsAsync(new Bootstrap().group(loop).handler(() => undefined).connect(port, '127.0.0.1'), { instanceOf: NetloopError })
  t.like(e, { code: 'ECONNREFUSED', errno: -os.constants.errno.ECONNREFUSED, syscall: 'connect', address: '127.0.0.1', port })
  t.is(e?.message, `connect ECONNREFUSED 127.0.0.1:${port}`)
})

test('a bind to a port in use rejects with EADDRINUSE, errno, syscall, address and port', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, () => undefined)
  const e = await t.throwsAsync(new ServerBootstrap().group(loop).childHandler(() => undefined).bind(port, '127.0.0.1'), { instanceOf: NetloopError })
  t.like(e, { code: 'EADDRINUSE', errno: -os.constants.errno.EADDRINUSE, syscall: 'bind', address: '127.0.0.1', port })
})

test('bind and connect on a terminated loop reject with a NetloopError ERR_REJECTED_EXECUTION', async (t) => {
  const loop = new EventLoop()
  await loop.shutdownGracefully(0, 100)
  await t.throwsAsync(new Bootstrap().group(loop).handler(() => undefined).connect(1, '127.0.0.1'), { instanceOf: NetloopError, code: 'ERR_REJECTED_EXECUTION' })
  await t.throwsAsync(new ServerBootstrap().group(loop).childHandler(() => undefined).bind(0, '127.0.0.1'), { instanceOf: NetloopError, code: 'ERR_REJECTED_EXECUTION' })
})

test('options of a closed channel, and a low water mark above the high one, throw NetloopErrors', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, () => undefined)
  const ch = await new Bootstrap().group(loop).handler(() => undefined).connect(port, '127.0.0.1')
  const marks = t.throws(() => (ch.config.writeBufferLowWaterMark = 1 << 20), { instanceOf: NetloopError })
  t.regex(marks!.code, /^ERR_(INVALID_ARG_VALUE|OUT_OF_RANGE)$/)
  await t.throwsAsync(
    new Bootstrap().group(loop).option('writeBufferHighWaterMark', 1024).option('writeBufferLowWaterMark', 4096).handler(() => undefined).connect(port, '127.0.0.1'),
    { instanceOf: NetloopError },
  )
  await ch.close()
  t.throws(() => ch.setOption('tcpNoDelay', true), { instanceOf: NetloopError, code: 'ERR_CHANNEL_CLOSED' })
  t.throws(() => ch.getOption('tcpNoDelay'), { instanceOf: NetloopError, code: 'ERR_CHANNEL_CLOSED' })
  t.throws(() => ch.setUserDefinedWritability(1, false), { instanceOf: NetloopError, code: 'ERR_CHANNEL_CLOSED' })
})
