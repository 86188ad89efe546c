// Topics on the ws-compatible surface (Bun's and uWebSockets.js' names): `ws.subscribe`,
// `ws.unsubscribe`, `ws.isSubscribed`, `ws.subscriptions`, `ws.publish` (every subscriber but
// the sender) and `wss.publish` (every subscriber), driven by `ws` package clients; on the
// native handshake's connections, the JS handshake's (`handleProtocols`), and with
// permessage-deflate agreed.
import test, { type ExecutionContext } from 'ava'
import { once } from 'node:events'
import { WebSocket as WsClient } from 'ws'
import { WebSocket as NetloopWebSocket, WebSocketServer, subscriberCount, type WebSocket, type WebSocketServerOptions } from '../index'

const within = <T>(ms: number, p: Promise<T>, what: string): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timeout: ${what}`)), ms).unref())])

/** A client whose messages queue up, read one at a time. */
function client(port: number, perMessageDeflate = false) {
  const ws = new WsClient(`ws://127.0.0.1:${port}/`, ['chat'], { perMessageDeflate })
  const queue: Array<[string, boolean]> = []
  let wake: (() => void) | undefined
  ws.on('message', (d, isBinary) => {
    queue.push([String(d), isBinary])
    wake?.()
  })
  const next = (): Promise<[string, boolean]> =>
    within(10_000, new Promise((resolve) => {
      const take = () => (queue.length > 0 ? resolve(queue.shift()!) : (wake = take))
      take()
    }), 'message')
  return { ws, next, opened: within(10_000, once(ws, 'open'), 'open') }
}

/** A server whose connections join `room`; a client's text "say X" is published by it to the others. */
async function roomServer(t: ExecutionContext, room: string, options: Partial<WebSocketServerOptions> = {}) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', protocols: ['chat'], ...options })
  const sockets: WebSocket[] = []
  t.teardown(() => new Promise<void>((r) => {
    for (const c of wss.clients!) c.terminate()
    wss.close(() => r())
  }))
  wss.on('connection', (s: WebSocket) => {
    sockets.push(s)
    s.on('error', () => {}) // a reset as the test's clients go
    s.subscribe(room)
    s.subscribe(room) // idempotent
    s.on('message', (d: Buffer) => {
      const text = String(d)
      if (text.startsWith('say ')) s.publish(room, text.slice(4))
      if (text === 'leave') s.send(String(s.unsubscribe(room)))
    })
  })
  await within(10_000, once(wss, 'listening'), 'listening')
  return { wss, port: wss.address()!.port, sockets }
}

async function exercise(t: ExecutionContext, room: string, options: Partial<WebSocketServerOptions>, deflate = false) {
  const { wss, port, sockets } = await roomServer(t, room, options)
  const [a, b, c] = [client(port, deflate), client(port, deflate), client(port, deflate)]
  await Promise.all([a.opened, b.opened, c.opened])
  await within(10_000, (async () => { while (sockets.length < 3) await new Promise((r) => setImmediate(r)) })(), 'connections')
  t.true(sockets.every((s) => s.isSubscribed(room) && !s.isSubscribed('other')))
  t.deepEqual(sockets[0].subscriptions, [room])
  t.is(subscriberCount(room), 3)

  const long = 'x'.repeat(5000) // over the deflate threshold
  a.ws.send(`say hello from a ${long}`)
  t.deepEqual(await b.next(), [`hello from a ${long}`, false])
  t.deepEqual(await c.next(), [`hello from a ${long}`, false])
  t.is(wss.publish(room, Buffer.from([1, 2, 3])), 3, 'the server publishes to all three')
  t.deepEqual(await a.next(), ['\u0001\u0002\u0003', true], 'a never got its own message: the binary one comes first')
  t.deepEqual(await b.next(), ['\u0001\u0002\u0003', true])
  t.deepEqual(await c.next(), ['\u0001\u0002\u0003', true])

  c.ws.send('leave')
  t.deepEqual(await c.next(), ['true', false])
  t.false(sockets[2].isSubscribed(room))
  t.is(wss.publish(room, 'after c left', { binary: false }), 2)
  t.deepEqual(await a.next(), ['after c left', false])
  t.deepEqual(await b.next(), ['after c left', false])
  c.ws.send('leave')
  t.deepEqual(await c.next(), ['false', false], 'c was not in it any more')

  const closed = once(sockets[0], 'close')
  a.ws.close()
  await within(10_000, closed, 'server-side close')
  t.false(sockets[0].isSubscribed(room))
  t.is(subscriberCount(room), 1)
  b.ws.close()
  c.ws.close()
}

test('connections of the native handshake: subscribe, publish to the others, wss.publish to all, unsubscribe, close leaves', (t) => exercise(t, 'native-room', {}))

test('connections of the JS handshake (handleProtocols) take part the same way', (t) => exercise(t, 'js-room', { handleProtocols: () => 'chat' }))

test('with permessage-deflate agreed, subscribers get published messages intact', (t) => exercise(t, 'deflate-room', { perMessageDeflate: true }, true))

test('a topic call on a bad argument or a client socket throws a typed error', async (t) => {
  const { port, sockets } = await roomServer(t, 'bad-room')
  const a = client(port)
  await a.opened
  await within(10_000, (async () => { while (sockets.length < 1) await new Promise((r) => setImmediate(r)) })(), 'connection')
  t.throws(() => sockets[0].subscribe(42 as never), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => sockets[0].publish('room', {} as never), { code: 'ERR_INVALID_ARG_TYPE' })
  const ours = await within(10_000, NetloopWebSocket.connect(`ws://127.0.0.1:${port}/`, { protocols: ['chat'] }), 'open')
  t.throws(() => ours.subscribe('room'), { code: 'ERR_INVALID_STATE' }, 'a client connection masks its frames: no shared frame fits it')
  t.false(ours.isSubscribed('room'))
  ours.on('error', () => {}) // the teardown may reset it before the close handshake ends
  ours.close()
  a.ws.close()
})

test('with serverNoContextTakeover, a published message reaches deflate subscribers compressed (once per publish)', async (t) => {
  const room = 'compressed-room'
  const { wss, port, sockets } = await roomServer(t, room, { perMessageDeflate: { serverNoContextTakeover: true } })
  const clients = [client(port, true), client(port, true)]
  await Promise.all(clients.map((c) => c.opened))
  await within(10_000, (async () => { while (sockets.length < 2) await new Promise((r) => setImmediate(r)) })(), 'connections')
  const big = 'every subscriber gets the same compressed bytes. '.repeat(2000)
  const socketOf = (c: ReturnType<typeof client>) => (c.ws as unknown as { _socket: { bytesRead: number } })._socket
  const before = clients.map((c) => socketOf(c).bytesRead)
  t.is(wss.publish(room, big), 2)
  for (const [i, c] of clients.entries()) {
    t.deepEqual(await c.next(), [big, false])
    const wire = socketOf(c).bytesRead - before[i]
    t.true(wire < big.length / 10, `subscriber ${i}: ${wire} bytes on the wire for ${big.length}`)
  }
  for (const c of clients) c.ws.close()
})
