import test from 'ava'

import { NetloopError } from '../index'
import { captureUnhandled, collect, dial, loopFor, netClient, recorder, serve, until } from './channel-helpers'
import { refusedPort } from './helpers'

test('an accepted channel sees registered, active, reads, readComplete, inactive, unregistered in order', async (t) => {
  const loop = loopFor(t)
  const log: string[] = []
  const { port } = await serve(t, loop, (ch) => ch.pipeline.addLast('rec', recorder(log)))
  const s = await netClient(t, port)
  s.write('hello')
  await until(() => log.includes('readComplete'))
  s.end()
  await until(() => log.includes('unregistered'))
  const compact = log.filter((e, i) => !(e === 'readComplete' && log[i - 1] === 'readComplete'))
  t.deepEqual(compact.slice(0, 2), ['registered', 'active'])
  t.is(compact.filter((e) => e.startsWith('read:')).join('').replace(/read:/g, ''), 'hello')
  t.deepEqual(compact.slice(-2), ['inactive', 'unregistered'])
  t.true(compact.indexOf('readComplete') > compact.indexOf('read:hello'))
})

test('a client channel sees registered then active before connect resolves, and the server reads what it writes', async (t) => {
  const loop = loopFor(t)
  const got: Buffer[] = []
  const { port } = await serve(t, loop, (ch) => ch.pipeline.addLast('sink', { channelRead: (_c, m: Buffer) => void got.push(Buffer.from(m)) }))
  const log: string[] = []
  const ch = await dial(loop, port, (c) => c.pipeline.addLast('rec', recorder(log)))
  t.deepEqual(log, ['registered', 'active'])
  t.true(ch.isActive)
  t.true(ch.isOpen)
  t.is(ch.remoteAddress?.port, port)
  t.is(ch.localAddress?.family, 'IPv4')
  ch.writeAndFlush('abc')
  ch.writeAndFlush(new Uint8Array([100, 101]))
  ch.writeAndFlush(Buffer.from('f'))
  await until(() => Buffer.concat(got).toString() === 'abcdef')
  await ch.close()
  t.false(ch.isOpen)
  await until(() => log.includes('unregistered'))
  t.deepEqual(log.slice(-2), ['inactive', 'unregistered'])
})

test('bind(0) reports the real port and a second bind on it fails with EADDRINUSE', async (t) => {
  const loop = loopFor(t)
  const { server, port } = await serve(t, loop, () => {})
  t.true(port > 0)
  t.is(server.localAddress?.address, '127.0.0.1')
  const err = await t.throwsAsync(serve(t, loop, () => {}).then(() => undefined).then(async () => {
    const { ServerBootstrap } = await import('../index')
    await new ServerBootstrap().group(loop).childHandler(() => {}).bind(port, '127.0.0.1')
  }))
  t.is((err as NetloopError).code, 'EADDRINUSE')
})

test('connecting to a port nobody listens on rejects with ECONNREFUSED', async (t) => {
  const loop = loopFor(t)
  const port = await refusedPort()
  const err = await t.throwsAsync(dial(loop, port, () => {}))
  t.is((err as NetloopError).code, 'ECONNREFUSED')
})

test('a connect that gets no answer fails with ETIMEDOUT after connectTimeoutMillis', async (t) => {
  const loop = loopFor(t)
  // A listener that never accepts, with a backlog of 1: once its queue is full the kernel
  // drops further SYNs, so the next connect hangs.
  const { ServerBootstrap } = await import('../index')
  const server = await new ServerBootstrap().group(loop).option('soBacklog', 1).option('autoRead', false).childHandler(() => {}).bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  const port = server.localAddress!.port
  const fillers = []
  for (let i = 0; i < 4; i++) fillers.push(dial(loop, port, () => {}, { connectTimeoutMillis: 300 }).catch((e) => e))
  const results = await Promise.all(fillers)
  const timedOut = results.filter((r) => r instanceof Error)
  t.true(timedOut.length > 0, 'the backlog never filled')
  for (const e of timedOut) t.is((e as NetloopError).code, 'ETIMEDOUT')
})

test.serial('a reset reaches the pipeline as ECONNRESET and the server keeps serving', async (t) => {
  const unhandled = captureUnhandled(t)
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => ch.pipeline.addLast('echo', { channelRead: (ctx, m) => ctx.writeAndFlush(m) }))
  const a = await netClient(t, port)
  a.resetAndDestroy()
  const b = await netClient(t, port)
  const c = collect(b)
  b.end('still here')
  await c.ended
  t.is(c.data().toString(), 'still here')
  await until(() => unhandled.length > 0)
  t.is((unhandled[0].error as NetloopError).code, 'ECONNRESET')
})

test('shutting a loop down closes its channels first: handlers see inactive, peers see EOF', async (t) => {
  const { EventLoop } = await import('../index')
  const loop = new EventLoop()
  const log: string[] = []
  const { port } = await serve({ teardown: () => {} }, loop, (ch) => ch.pipeline.addLast('rec', recorder(log)))
  const s = await netClient(t, port)
  const c = collect(s)
  await until(() => log.includes('active'))
  await loop.shutdownGracefully(0, 1000)
  await c.ended
  t.deepEqual(log.slice(-2), ['inactive', 'unregistered'])
  t.is(loop.state, 'terminated')
})

test('handlers run in the async context that made their channel: bind() for accepted ones, connect() for clients', async (t) => {
  const { AsyncLocalStorage } = await import('node:async_hooks')
  const als = new AsyncLocalStorage<string>()
  const loop = loopFor(t)
  const seen: Array<string | undefined> = []
  const { port } = await als.run('server', () =>
    serve(t, loop, (ch) => ch.pipeline.addLast('r', { channelRead: (ctx, m) => { seen.push(`child:${als.getStore()}`); ctx.writeAndFlush(m) } })),
  )
  const ch = await als.run('client', () =>
    dial(loop, port, (c) => c.pipeline.addLast('r', { channelRead: () => void seen.push(`client:${als.getStore()}`) })),
  )
  ch.writeAndFlush('x')
  await until(() => seen.length === 2)
  t.deepEqual(seen, ['child:server', 'client:client'])
  await ch.close()
})
