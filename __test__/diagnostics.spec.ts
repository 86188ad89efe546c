// diagnostics_channel tracing: netloop:server.listen, netloop:server.socket,
// netloop:client.socket, netloop:channel.close and the netloop:connect TracingChannel.
import test from 'ava'
import { AsyncLocalStorage } from 'node:async_hooks'
import dc from 'node:diagnostics_channel'
import * as net from 'node:net'
import { Bootstrap, Channel, type ConnectContext, ServerBootstrap, diagnostics } from '../index'
import { refusedPort, until, withLoop } from './helpers'

/** Subscribes `fn` to channel `name` for the rest of the test. */
function on(t: { teardown(fn: () => unknown): void }, name: string, fn: (msg: unknown) => void): void {
  const sub = (msg: unknown) => fn(msg)
  dc.subscribe(name, sub)
  t.teardown(() => dc.unsubscribe(name, sub))
}

async function nodeServer(t: { teardown(fn: () => unknown): void }, onSocket: (s: net.Socket) => void = () => undefined): Promise<number> {
  const server = net.createServer((s) => {
    s.on('error', () => undefined)
    onSocket(s)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  return (server.address() as net.AddressInfo).port
}

test.serial('netloop:server.listen and netloop:server.socket publish the server and each accepted channel', async (t) => {
  const listens: Array<{ server: unknown; port: number; host: string }> = []
  const accepted: Channel[] = []
  const initialized: Channel[] = []
  let pipelineAtPublish: string[] | undefined
  on(t, 'netloop:server.listen', (m) => listens.push(m as (typeof listens)[0]))
  on(t, 'netloop:server.socket', (m) => {
    const { channel } = m as { channel: Channel }
    accepted.push(channel)
    pipelineAtPublish ??= channel.pipeline.names()
  })
  const loop = withLoop(t)
  const server = await new ServerBootstrap()
    .group(loop)
    .childHandler((ch) => {
      initialized.push(ch)
      ch.pipeline.addLast('app', {})
    })
    .bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  t.is(listens.length, 1)
  t.is(listens[0].server, server)
  t.is(listens[0].port, 0)
  t.is(listens[0].host, '127.0.0.1')
  const s = net.connect(server.localAddress!.port, '127.0.0.1')
  t.teardown(() => s.destroy())
  await until(() => initialized.length === 1)
  t.is(accepted.length, 1)
  t.is(accepted[0], initialized[0])
  t.true(accepted[0] instanceof Channel)
  t.is(accepted[0].parent, server as Channel)
  t.deepEqual(pipelineAtPublish, [], 'published before the child initializer, as net.server.socket before the connection listeners')
})

test.serial('netloop:client.socket publishes the client channel before its initializer and connect', async (t) => {
  const port = await nodeServer(t)
  const seen: Array<{ channel: Channel; names: string[]; active: boolean }> = []
  on(t, 'netloop:client.socket', (m) => {
    const { channel } = m as { channel: Channel }
    seen.push({ channel, names: channel.pipeline.names(), active: channel.isActive })
  })
  const loop = withLoop(t)
  const ch = await new Bootstrap()
    .group(loop)
    .handler((ch) => void ch.pipeline.addLast('app', {}))
    .connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  t.is(seen.length, 1)
  t.is(seen[0].channel, ch)
  t.deepEqual(seen[0].names, [])
  t.false(seen[0].active)
})

test.serial('netloop:channel.close publishes each closed channel with the cause of the close', async (t) => {
  const closes: Array<{ channel: Channel; cause: unknown }> = []
  on(t, 'netloop:channel.close', (m) => closes.push(m as (typeof closes)[0]))
  let peer: net.Socket | undefined
  const port = await nodeServer(t, (s) => (peer = s))
  const loop = withLoop(t)
  const connect = () =>
    new Bootstrap()
      .group(loop)
      .handler((ch) => void ch.pipeline.addLast('quiet', { exceptionCaught: () => undefined }))
      .connect(port, '127.0.0.1')
  const a = await connect()
  await a.close()
  await until(() => closes.some((c) => c.channel === a))
  t.is(closes.find((c) => c.channel === a)!.cause, undefined, 'a plain close has no cause')

  const b = await connect()
  await until(() => peer !== undefined && peer.remotePort === b.localAddress!.port)
  peer!.resetAndDestroy() // RST: the channel reads ECONNRESET and closes
  await b.closeFuture
  await until(() => closes.some((c) => c.channel === b))
  const cause = closes.find((c) => c.channel === b)!.cause as { code?: string } | undefined
  t.is(cause?.code, 'ECONNRESET')
})

test.serial('netloop:connect traces connect(): start and end around the call, asyncStart/asyncEnd with the channel', async (t) => {
  const port = await nodeServer(t)
  const events: Array<[string, ConnectContext, boolean]> = []
  const record = (k: string) => (ctx: ConnectContext) => void events.push([k, ctx, ctx.result !== undefined])
  const handlers = { start: record('start'), end: record('end'), asyncStart: record('asyncStart'), asyncEnd: record('asyncEnd'), error: record('error') }
  diagnostics.connect.subscribe(handlers)
  t.teardown(() => diagnostics.connect.unsubscribe(handlers))
  const loop = withLoop(t)
  const pending = new Bootstrap().group(loop).handler(() => undefined).connect(port, '127.0.0.1')
  t.deepEqual(events.map((e) => e[0]), ['start', 'end'], 'start and end run synchronously around the call')
  const ch = await pending
  t.teardown(() => ch.close())
  t.deepEqual(events.map((e) => e[0]), ['start', 'end', 'asyncStart', 'asyncEnd'])
  const ctx = events[0][1]
  t.true(events.every((e) => e[1] === ctx), 'one context object for the whole connect')
  t.is(ctx.port, port)
  t.is(ctx.host, '127.0.0.1')
  t.is(ctx.result, ch)
  t.false(events[1][2], 'no result at end (the connect is still pending)')
})

/** A port nothing listens on (it was free a moment ago). */
test.serial('netloop:connect publishes error for a refused connect', async (t) => {
  const port = await refusedPort()
  const names: string[] = []
  let failed: ConnectContext | undefined
  const handlers = {
    start: () => names.push('start'),
    end: () => names.push('end'),
    asyncStart: () => names.push('asyncStart'),
    asyncEnd: () => names.push('asyncEnd'),
    error: (ctx: ConnectContext) => {
      names.push('error')
      failed = ctx
    },
  }
  diagnostics.connect.subscribe(handlers)
  t.teardown(() => diagnostics.connect.unsubscribe(handlers))
  const loop = withLoop(t)
  const err = await t.throwsAsync(new Bootstrap().group(loop).handler(() => undefined).connect(port, '127.0.0.1'))
  t.is((err as { code?: string }).code, 'ECONNREFUSED')
  t.deepEqual(names, ['start', 'end', 'error', 'asyncStart', 'asyncEnd'])
  t.is(failed!.error, err)
})

test.serial("an AsyncLocalStorage store set around connect() is seen by the TracingChannel's handlers; a store bound to start reaches the channel's events", async (t) => {
  const port = await nodeServer(t, (s) => s.write('hello'))
  const als = new AsyncLocalStorage<string>()
  const span = new AsyncLocalStorage<{ port: number }>()
  const seen: Record<string, string | undefined> = {}
  const handlers = {
    start: () => (seen.start = als.getStore()),
    end: () => (seen.end = als.getStore()),
    asyncStart: () => (seen.asyncStart = als.getStore()),
    asyncEnd: () => (seen.asyncEnd = als.getStore()),
    error: () => (seen.error = als.getStore()),
  }
  diagnostics.connect.subscribe(handlers)
  // What an APM does: a span for the connect, bound as the async context of everything it starts.
  diagnostics.connect.start.bindStore(span, (ctx) => ({ port: (ctx as ConnectContext).port }))
  t.teardown(() => {
    diagnostics.connect.unsubscribe(handlers)
    diagnostics.connect.start.unbindStore(span)
  })
  on(t, 'netloop:client.socket', () => (seen.clientSocket = als.getStore()))
  const loop = withLoop(t)
  let spanInRead: { port: number } | undefined
  let storeInRead: string | undefined
  const ch = await als.run('request-42', () =>
    new Bootstrap()
      .group(loop)
      .handler((ch) =>
        void ch.pipeline.addLast('app', {
          channelRead: () => {
            spanInRead = span.getStore()
            storeInRead = als.getStore()
          },
        }),
      )
      .connect(port, '127.0.0.1'),
  )
  t.teardown(() => ch.close())
  t.deepEqual(seen, { start: 'request-42', end: 'request-42', asyncStart: 'request-42', asyncEnd: 'request-42', clientSocket: 'request-42' })
  await until(() => spanInRead !== undefined)
  t.deepEqual(spanInRead, { port })
  t.is(storeInRead, 'request-42')
})

test.serial('without subscribers nothing is published and connect() is not traced', async (t) => {
  const port = await nodeServer(t)
  const channels = [diagnostics.serverListen, diagnostics.serverSocket, diagnostics.clientSocket, diagnostics.channelClose]
  for (const c of channels) t.false(c.hasSubscribers)
  let published = 0
  const originals = channels.map((c) => c.publish)
  for (const c of channels) c.publish = () => void published++
  const tracePromise = diagnostics.connect.tracePromise
  let traced = 0
  diagnostics.connect.tracePromise = ((...args: Parameters<typeof tracePromise>) => (traced++, tracePromise.apply(diagnostics.connect, args))) as typeof tracePromise
  t.teardown(() => {
    channels.forEach((c, i) => (c.publish = originals[i]))
    diagnostics.connect.tracePromise = tracePromise
  })
  const loop = withLoop(t)
  let accepted = 0
  const server = await new ServerBootstrap().group(loop).childHandler(() => void accepted++).bind(0, '127.0.0.1')
  const peer = net.connect(server.localAddress!.port, '127.0.0.1')
  t.teardown(() => peer.destroy())
  await until(() => accepted === 1)
  const ch = await new Bootstrap().group(loop).handler(() => undefined).connect(port, '127.0.0.1')
  await ch.close()
  await server.close()
  t.is(published, 0)
  t.is(traced, 0)
})
