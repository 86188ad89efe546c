// WebSocket topics (src/ws-topics.ts): `ws` clients subscribe through a server whose
// connections take text commands (fixtures/ws-topics-module.ts); one publish reaches every
// subscriber, on one loop and across the two loops of a worker group; unsubscribing and
// closing take channels out; a subscriber that does not read drops messages (counted)
// while the others get every one.
import test from 'ava'
import { join } from 'node:path'
import WebSocket from 'ws'
import { EventLoop, EventLoopGroup, type NetloopError, ServerBootstrap, publish, subscribe, subscriberCount, topicStats, unsubscribe } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { childHandler } from './fixtures/ws-topics-module'

const topicsModule = join(__dirname, 'fixtures', 'ws-topics-module.ts')

/** A `ws` client that keeps what it receives. */
class Client {
  readonly got: Array<{ text: string; binary: boolean }> = []
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data, binary) => this.got.push({ text: String(data), binary }))
  }
  static open(t: { teardown(fn: () => unknown): void }, port: number): Promise<Client> {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`)
    t.teardown(() => ws.terminate())
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Client(ws)))
      ws.once('error', reject)
    })
  }
  texts(): string[] {
    return this.got.map((m) => m.text)
  }
  /** Sends a command and waits for the reply that starts with `answer`. */
  async ask(command: string, answer: string): Promise<string> {
    const from = this.got.length
    this.ws.send(command)
    await until(() => this.got.slice(from).some((m) => m.text.startsWith(answer)))
    return this.got.slice(from).find((m) => m.text.startsWith(answer))!.text
  }
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve())
      this.ws.close()
    })
  }
}

async function server(t: { teardown(fn: () => unknown): void }): Promise<number> {
  const { port } = await serve(t, loopFor(t), childHandler)
  return port
}

test.serial('one publish reaches every subscriber once; unsubscribing and closing take channels out', async (t) => {
  const port = await server(t)
  const topic = `room-${process.pid}-1`
  const [a, b, c] = await Promise.all([Client.open(t, port), Client.open(t, port), Client.open(t, port)])
  for (const cl of [a, b, c]) await cl.ask(`sub ${topic}`, 'subscribed')
  await a.ask(`sub ${topic}`, 'subscribed') // twice: still one subscription
  t.is(subscriberCount(topic), 3)
  const before = topicStats()

  a.ws.send(`pub ${topic} hello`)
  await until(() => [a, b, c].every((cl) => cl.texts().includes('hello')))
  const after = topicStats()
  t.is(after.encoded - before.encoded, 1, 'encoded once')
  t.is(after.delivered - before.delivered, 3)

  t.is(await c.ask(`unsub ${topic}`, 'unsubscribed'), `unsubscribed ${topic} true`)
  t.is(await c.ask(`unsub ${topic}`, 'unsubscribed'), `unsubscribed ${topic} false`)
  t.is(subscriberCount(topic), 2)
  b.ws.send(`pubbin ${topic} bytes`)
  await until(() => [a, b].every((cl) => cl.got.some((m) => m.text === 'bytes' && m.binary)))
  t.false(c.texts().includes('bytes'), 'unsubscribed: nothing more')

  await b.close()
  await until(() => subscriberCount(topic) === 1)
  await a.close()
  await until(() => subscriberCount(topic) === 0)
  t.is(publish(topic, 'nobody'), 0)
  for (const cl of [a, b, c]) t.is(cl.texts().filter((x) => x === 'hello').length, 1, 'exactly once each')
})

test.serial('publish from the thread of the loop, outside any handler, as text or binary', async (t) => {
  const port = await server(t)
  const topic = `room-${process.pid}-2`
  const [a, b] = await Promise.all([Client.open(t, port), Client.open(t, port)])
  for (const cl of [a, b]) await cl.ask(`sub ${topic}`, 'subscribed')
  t.is(publish(topic, 'from a timer'), 2)
  t.is(publish(topic, new Uint8Array([104, 105])), 2)
  t.is(publish(topic, 'as bytes', { binary: true }), 2)
  t.is(publish(topic, Buffer.from('as text'), { binary: false }), 2)
  await until(() => [a, b].every((cl) => cl.got.length >= 1 + 4))
  for (const cl of [a, b]) {
    t.deepEqual(cl.got.slice(-4), [
      { text: 'from a timer', binary: false },
      { text: 'hi', binary: true },
      { text: 'as bytes', binary: true },
      { text: 'as text', binary: false },
    ])
  }
  const bad = t.throws(() => publish(topic, Buffer.from([0xff]), { binary: false })) as NetloopError
  t.is(bad.code, 'ERR_INVALID_ARG_VALUE', 'text must be UTF-8')
  t.is((t.throws(() => publish(1 as never, 'x')) as NetloopError).code, 'ERR_INVALID_ARG_TYPE')
})

test.serial('only WebSocket channels subscribe: a plain TCP channel gets ERR_INVALID_STATE', async (t) => {
  const errors: string[] = []
  const { port } = await serve(t, loopFor(t), (ch) => {
    ch.pipeline.addLast('app', {
      channelActive(ctx) {
        try {
          subscribe(ctx.channel, 'plain')
        } catch (e) {
          errors.push((e as NetloopError).code)
        }
        t.false(unsubscribe(ctx.channel, 'plain'))
        ctx.close()
      },
    })
  })
  const s = (await import('node:net')).connect(port, '127.0.0.1')
  s.on('error', () => {})
  await until(() => errors.length === 1)
  s.destroy()
  t.deepEqual(errors, ['ERR_INVALID_STATE'])
  t.is(subscriberCount('plain'), 0)
})

test.serial('worker group: a publish on one worker reaches the subscribers of both workers; closed channels leave', async (t) => {
  const workers = new EventLoopGroup({ threads: 2, module: topicsModule })
  t.teardown(() => workers.shutdownGracefully(0, 2000))
  const boss = new EventLoop()
  t.teardown(() => boss.shutdownGracefully(0, 1000))
  const srv = await new ServerBootstrap().group(boss, workers).bind(0, '127.0.0.1')
  t.teardown(() => srv.close())
  const port = srv.localAddress!.port
  const topic = `room-${process.pid}-3`
  const clients = await Promise.all(Array.from({ length: 4 }, () => Client.open(t, port)))
  const threads = new Set<string>()
  for (const cl of clients) threads.add((await cl.ask(`sub ${topic}`, 'subscribed')).split(' ')[2])
  t.is(threads.size, 2, 'subscribers on both workers')
  t.is(subscriberCount(topic), 4, 'counted across threads')

  clients[0].ws.send(`pub ${topic} across`)
  await until(() => clients.every((cl) => cl.texts().includes('across')))
  t.is(publish(topic, 'from main'), 4, 'from a thread whose loop has no subscriber: one task per worker loop')
  await until(() => clients.every((cl) => cl.texts().includes('from main')))

  await Promise.all(clients.map((cl) => cl.close()))
  await until(() => subscriberCount(topic) === 0)
  t.is(publish(topic, 'gone'), 0)
})

test.serial('a subscriber that does not read drops messages (counted) while the others get every one', async (t) => {
  const port = await server(t)
  const topic = `room-${process.pid}-4`
  const [slow, fast] = await Promise.all([Client.open(t, port), Client.open(t, port)])
  for (const cl of [slow, fast]) await cl.ask(`sub ${topic}`, 'subscribed')
  const socket = (slow.ws as unknown as { _socket: import('node:net').Socket })._socket
  socket.pause()
  const before = topicStats()
  const big = 'x'.repeat(64 * 1024)
  const n = 300
  for (let i = 0; i < n; i++) {
    const from = fast.got.length
    publish(topic, big)
    await until(() => fast.got.length > from)
  }
  const after = topicStats()
  t.is(fast.got.length, 1 + n, 'the reader got every message')
  const dropped = after.dropped - before.dropped
  t.true(dropped > 0, 'the one that does not read dropped some')
  t.true(dropped < n, `but not all: the socket buffers took some (${dropped} of ${n})`)
  socket.resume()
  await until(() => slow.got.length === 1 + n - dropped)
  t.is(publish(topic, 'after'), 2, 'drained: it receives again')
  await until(() => slow.texts().includes('after'))
})

test.serial('a worker group shut down with subscribers connected leaves no subscription behind', async (t) => {
  const workers = new EventLoopGroup({ threads: 2, module: topicsModule })
  const boss = new EventLoop()
  t.teardown(() => boss.shutdownGracefully(0, 1000))
  const srv = await new ServerBootstrap().group(boss, workers).bind(0, '127.0.0.1')
  const topic = `room-${process.pid}-5`
  const clients = await Promise.all(Array.from({ length: 4 }, () => Client.open(t, srv.localAddress!.port)))
  for (const cl of clients) await cl.ask(`sub ${topic}`, 'subscribed')
  t.is(subscriberCount(topic), 4)
  await srv.close()
  await workers.shutdownGracefully(0, 2000)
  t.is(subscriberCount(topic), 0, 'the loops closed their channels, which left their topics')
  t.is(publish(topic, 'to nobody'), 0)
})

test.serial('a worker that exits takes its subscriptions with it; the other worker still gets publishes', async (t) => {
  const workers = new EventLoopGroup({ threads: 2, module: topicsModule })
  t.teardown(() => workers.shutdownGracefully(0, 2000))
  const ended: number[] = []
  workers.on('loopTerminated', (info) => ended.push(info.index))
  const boss = new EventLoop()
  t.teardown(() => boss.shutdownGracefully(0, 1000))
  const srv = await new ServerBootstrap().group(boss, workers).bind(0, '127.0.0.1')
  t.teardown(() => srv.close())
  const topic = `room-${process.pid}-6`
  const clients = await Promise.all(Array.from({ length: 4 }, () => Client.open(t, srv.localAddress!.port)))
  const threadOf = new Map<Client, string>()
  for (const cl of clients) threadOf.set(cl, (await cl.ask(`sub ${topic}`, 'subscribed')).split(' ')[2])
  const doomed = threadOf.get(clients[0])!
  const survivors = clients.filter((cl) => threadOf.get(cl) !== doomed)
  t.is(survivors.length, 2)
  clients[0].ws.send('exit')
  await until(() => ended.length === 1)
  await until(() => subscriberCount(topic) === 2)
  t.is(publish(topic, 'still here'), 2)
  await until(() => survivors.every((cl) => cl.texts().includes('still here')))
})
