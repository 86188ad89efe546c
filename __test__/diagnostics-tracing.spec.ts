// diagnostics_channel: the netloop:handler TracingChannel around JS handler calls, and
// netloop:loop.shutdown.
import test from 'ava'
import { AsyncLocalStorage } from 'node:async_hooks'
import dc from 'node:diagnostics_channel'
import * as net from 'node:net'
import { type Channel, EventLoop, type HandlerTraceContext, type LoopShutdownMessage, ServerBootstrap, diagnostics } from '../index'
import { until, withLoop } from './helpers'

type Ev = [phase: string, method: string, handler: string, message: unknown]

/** Subscribes to netloop:handler for the rest of the test; returns what it saw. */
function traceHandlers(t: { teardown(fn: () => unknown): void }, onStart?: (ctx: HandlerTraceContext) => void): Ev[] {
  const seen: Ev[] = []
  const rec = (phase: string) => (ctx: HandlerTraceContext) => void seen.push([phase, ctx.method, ctx.handler, ctx.message])
  const subs = {
    start: (ctx: HandlerTraceContext) => {
      rec('start')(ctx)
      onStart?.(ctx)
    },
    end: rec('end'),
    asyncStart: rec('asyncStart'),
    asyncEnd: rec('asyncEnd'),
    error: rec('error'),
  }
  diagnostics.handler.subscribe(subs)
  t.teardown(() => diagnostics.handler.unsubscribe(subs))
  return seen
}

/** A server on `loop` whose children get `handler` as 'app'; returns a connected node:net client. */
async function serve(t: { teardown(fn: () => unknown): void }, loop: EventLoop, handler: object): Promise<net.Socket> {
  const server = await new ServerBootstrap()
    .group(loop)
    .childHandler((ch) => void ch.pipeline.addLast('app', handler))
    .bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  const s = net.connect(server.localAddress!.port, '127.0.0.1')
  s.on('error', () => undefined)
  t.teardown(() => s.destroy())
  return s
}

test.serial('netloop:handler traces each JS handler call with start and end: channel, handler name, method and message', async (t) => {
  const seen = traceHandlers(t)
  const loop = withLoop(t)
  let channel: Channel | undefined
  const ctxs: HandlerTraceContext[] = []
  const sub = (ctx: unknown) => void ctxs.push(ctx as HandlerTraceContext)
  diagnostics.handler.start.subscribe(sub)
  t.teardown(() => diagnostics.handler.start.unsubscribe(sub))
  const s = await serve(t, loop, {
    channelActive(ctx: { channel: Channel }) {
      channel = ctx.channel
    },
    channelRead(ctx: { writeAndFlush(m: unknown): unknown }, m: unknown) {
      ctx.writeAndFlush(m)
    },
  })
  let echoed = ''
  s.on('data', (d) => (echoed += d))
  s.write('ping')
  await until(() => echoed === 'ping')
  const active = seen.filter((e) => e[1] === 'channelActive')
  t.deepEqual(active.map((e) => e[0]), ['start', 'end'])
  t.is(active[0][2], 'app')
  const reads = seen.filter((e) => e[1] === 'channelRead')
  t.deepEqual(reads.map((e) => e[0]).slice(0, 2), ['start', 'end'])
  t.is(Buffer.from(reads[0][3] as Uint8Array).toString(), 'ping', 'the message read')
  const c = ctxs.find((x) => x.method === 'channelRead')!
  t.is(c.channel, channel)
  t.false(seen.some((e) => e[0] === 'asyncStart' || e[0] === 'asyncEnd'), 'handler calls are synchronous')
})

test.serial('netloop:handler publishes error for a handler that throws, and the error still reaches exceptionCaught', async (t) => {
  const seen = traceHandlers(t)
  const loop = withLoop(t)
  const boom = new Error('boom')
  let caught: unknown
  const server = await new ServerBootstrap()
    .group(loop)
    .childHandler((ch) => {
      ch.pipeline.addLast('bad', {
        channelRead() {
          throw boom
        },
      })
      ch.pipeline.addLast('catcher', { exceptionCaught: (_ctx: unknown, e: unknown) => void (caught = e) })
    })
    .bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  const s = net.connect(server.localAddress!.port, '127.0.0.1')
  t.teardown(() => s.destroy())
  s.write('x')
  await until(() => caught !== undefined)
  t.is(caught, boom)
  const read = seen.filter((e) => e[1] === 'channelRead')
  t.deepEqual(read.map((e) => e[0]), ['start', 'error', 'end'])
  const exc = seen.filter((e) => e[1] === 'exceptionCaught')
  t.is(exc[0][2], 'catcher')
  t.is(exc[0][3], boom, "exceptionCaught's message is the error")
})

test.serial('netloop:handler traces outbound handler methods (write, flush, close)', async (t) => {
  const seen = traceHandlers(t)
  const loop = withLoop(t)
  const s = await serve(t, loop, {
    channelRead(ctx: { writeAndFlush(m: unknown): unknown; close(): unknown }) {
      ctx.writeAndFlush('bye')
      ctx.close()
    },
  })
  // An outbound JS handler in front of 'app' on the accepted channel: added by server.socket.
  const onSocket = (m: unknown) =>
    void (m as { channel: Channel }).channel.pipeline.addLast('out', {
      write: (ctx: { write(m: unknown, p: unknown): unknown }, m: unknown, p: unknown) => ctx.write(m, p),
      flush: (ctx: { flush(): unknown }) => ctx.flush(),
      close: (ctx: { close(p: unknown): unknown }, p: unknown) => ctx.close(p),
    })
  dc.subscribe('netloop:server.socket', onSocket)
  t.teardown(() => dc.unsubscribe('netloop:server.socket', onSocket))
  let got = ''
  s.on('data', (d) => (got += d))
  const closed = new Promise<void>((r) => s.on('close', () => r()))
  s.write('hi')
  await closed
  t.is(got, 'bye')
  const out = seen.filter((e) => e[2] === 'out' && e[0] === 'start').map((e) => e[1])
  t.deepEqual(out.slice(0, 3), ['write', 'flush', 'close'])
  t.is(seen.find((e) => e[2] === 'out' && e[1] === 'write')![3], 'bye', "write's message")
})

test.serial('a store bound to netloop:handler start is the async context of the handler method', async (t) => {
  const span = new AsyncLocalStorage<{ method: string; handler: string }>()
  diagnostics.handler.start.bindStore(span, (ctx) => ({ method: (ctx as HandlerTraceContext).method, handler: (ctx as HandlerTraceContext).handler }))
  t.teardown(() => diagnostics.handler.start.unbindStore(span))
  const loop = withLoop(t)
  const inside: Array<{ method: string; handler: string } | undefined> = []
  let after: { method: string; handler: string } | undefined | null = null
  const s = await serve(t, loop, {
    channelRead(ctx: { writeAndFlush(m: unknown): unknown }, m: unknown) {
      inside.push(span.getStore())
      // A promise the handler starts keeps the span (the async context of the call).
      void Promise.resolve().then(() => (after = span.getStore()))
      ctx.writeAndFlush(m)
    },
  })
  s.write('x')
  await until(() => inside.length > 0 && after !== null)
  t.deepEqual(inside[0], { method: 'channelRead', handler: 'app' })
  t.deepEqual(after, { method: 'channelRead', handler: 'app' })
})

test.serial('without a subscriber the pipeline never enters the netloop:handler TracingChannel', async (t) => {
  const loop = withLoop(t)
  let traced = 0
  const original = diagnostics.handler.traceSync
  diagnostics.handler.traceSync = function (this: unknown, ...args: Parameters<typeof original>) {
    traced++
    return original.apply(this, args)
  } as typeof original
  t.teardown(() => void (diagnostics.handler.traceSync = original))
  let reads = 0
  const s = await serve(t, loop, {
    channelRead(ctx: { writeAndFlush(m: unknown): unknown }, m: unknown) {
      reads++
      ctx.writeAndFlush(m)
    },
  })
  let echoed = ''
  s.on('data', (d) => (echoed += d))
  s.write('a')
  await until(() => echoed === 'a')
  t.is(reads, 1)
  t.is(traced, 0, 'no subscriber: handlers are called directly')
  const end = () => undefined
  diagnostics.handler.end.subscribe(end)
  t.teardown(() => diagnostics.handler.end.unsubscribe(end))
  s.write('b')
  await until(() => echoed === 'ab')
  t.true(traced >= 1, 'a subscriber on end alone turns tracing on')
})

test.serial('netloop:loop.shutdown publishes the start of a shutdown with its durations and the termination', async (t) => {
  const seen: Array<{ msg: LoopShutdownMessage; state: string }> = []
  const sub = (m: unknown) => void seen.push({ msg: { ...(m as LoopShutdownMessage) }, state: (m as LoopShutdownMessage).loop.state })
  dc.subscribe('netloop:loop.shutdown', sub)
  t.teardown(() => dc.unsubscribe('netloop:loop.shutdown', sub))
  const loop = new EventLoop()
  const done = loop.shutdownGracefully(0, 1000)
  t.is(seen.length, 1, 'start is published synchronously')
  t.deepEqual(seen[0].msg, { loop, phase: 'start', quietPeriodMs: 0, timeoutMs: 1000 })
  await done
  t.is(seen.length, 2)
  t.is(seen[1].msg.loop, loop)
  t.is(seen[1].msg.phase, 'end')
  t.is(seen[1].state, 'terminated')
  await loop.shutdownGracefully()
  t.is(seen.length, 2, 'a second call publishes nothing')
})
