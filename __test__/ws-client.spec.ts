// The netloop WebSocket client (src/ws-socket.ts, src/ws-client-connect.ts) against real
// servers: the `ws` package's (plain, and wss: over node:https with the test PKI) and
// netloop's WebSocketServer; raw node:net servers for the answers no library sends (a wrong
// Sec-WebSocket-Accept, a truncated frame).
import test from 'ava'
import * as crypto from 'node:crypto'
import { once } from 'node:events'
import * as https from 'node:https'
import * as net from 'node:net'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { WebSocketServer as WsServer, type WebSocket as WsSocket } from 'ws'
import {
  Bootstrap,
  CloseWebSocketFrame,
  EventLoop,
  HttpClientCodec,
  TextWebSocketFrame,
  WebSocket,
  WebSocketClientProtocolHandler,
  WebSocketHandshakeEvent,
  WebSocketServer,
  type NetloopError,
  type WhatwgEvent,
} from '../index'
import { pem } from './tls-helpers'

const within = <T>(ms: number, p: Promise<T>, what: string): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timeout: ${what}`)), ms).unref())])

type Message = { data: Buffer | ArrayBuffer; isBinary: boolean }
const nextMessage = (ws: WebSocket): Promise<Message> =>
  within(10_000, new Promise((resolve) => ws.once('message', (data: Buffer, isBinary: boolean) => resolve({ data, isBinary }))), 'message')
const closed = (ws: WebSocket): Promise<[number, string]> =>
  within(10_000, new Promise((resolve) => ws.once('close', (code: number, reason: Buffer) => resolve([code, reason.toString()]))), 'close')
const failed = (ws: WebSocket): Promise<NetloopError> => within(10_000, new Promise((resolve) => ws.once('error', resolve)), 'error')

/** A `ws` server on a free port: echoes, pings back the word "ping", closes with 4002 on "bye". */
/** The handler names of a client socket's channel. */
const pipelineNames = (ws: WebSocket): string[] => (ws as unknown as { _ch: { pipeline: { names(): string[] } } })._ch.pipeline.names()

async function wsServer(t: { teardown(fn: () => unknown): void }, extra: ConstructorParameters<typeof WsServer>[0] = {}): Promise<{ wss: WsServer; port: number }> {
  const wss = new WsServer({ port: 0, host: '127.0.0.1', ...extra })
  t.teardown(() => new Promise<void>((r) => {
    for (const c of wss.clients) c.terminate()
    wss.close(() => r())
  }))
  await once(wss, 'listening')
  wss.on('connection', (s: WsSocket) => {
    s.on('message', (d, isBinary) => {
      if (!isBinary && String(d) === 'bye') s.close(4002, 'server says bye')
      else if (!isBinary && String(d) === 'ping me') s.ping('from server')
      else s.send(d, { binary: isBinary })
    })
  })
  return { wss, port: (wss.address() as net.AddressInfo).port }
}

test('against the ws package: text and binary both ways, pings and pongs as events, the client\'s close code reaches the server', async (t) => {
  const { wss, port } = await wsServer(t, { handleProtocols: (p: Set<string>) => (p.has('chat') ? 'chat' : false) })
  const serverSide = once(wss, 'connection')
  const ws = new WebSocket(`ws://127.0.0.1:${port}/room?x=1`, ['chat', 'other'], { headers: { 'x-token': 'abc' } })
  t.is(ws.readyState, WebSocket.CONNECTING)
  await within(10_000, once(ws, 'open'), 'open')
  const [peer, req] = (await serverSide) as [WsSocket, { url: string; headers: Record<string, string> }]
  t.is(ws.readyState, ws.OPEN)
  t.deepEqual(pipelineNames(ws), ['ws', 'app'], 'the HTTP codec left after the 101')
  t.is(ws.protocol, 'chat')
  t.is(req.url, '/room?x=1')
  t.is(req.headers['x-token'], 'abc')
  ws.send('héllo')
  t.deepEqual(await nextMessage(ws), { data: Buffer.from('héllo'), isBinary: false })
  ws.send(new Uint8Array([0, 1, 255]))
  t.deepEqual(await nextMessage(ws), { data: Buffer.from([0, 1, 255]), isBinary: true })
  const big = crypto.randomBytes(200_000)
  let sent = false
  ws.send(big, () => (sent = true))
  t.true((await nextMessage(ws)).data.equals(big))
  t.true(sent, 'the send callback ran once written')
  const pong = within(10_000, once(ws, 'pong'), 'pong')
  ws.ping('p1')
  t.is(String((await pong)[0]), 'p1')
  const ping = within(10_000, once(ws, 'ping'), 'ping')
  ws.send('ping me')
  t.is(String((await ping)[0]), 'from server')
  const peerClosed = within(10_000, once(peer, 'close'), 'peer close')
  const done = closed(ws)
  ws.close(4000, 'client bye')
  t.is(ws.readyState, WebSocket.CLOSING)
  t.deepEqual(await done, [4000, 'client bye'], 'the server echoes the code; the client sees it')
  const [code, reason] = (await peerClosed) as [number, Buffer]
  t.deepEqual([code, String(reason)], [4000, 'client bye'])
  t.is(ws.readyState, WebSocket.CLOSED)
  t.is(ws.bufferedAmount, 0)
})

test('against the ws package: the server\'s close code and reason reach the client\'s close event', async (t) => {
  const { port } = await wsServer(t)
  const ws = await WebSocket.connect(`ws://127.0.0.1:${port}/`)
  const done = closed(ws)
  ws.send('bye')
  t.deepEqual(await done, [4002, 'server says bye'])
})

test('against netloop\'s WebSocketServer, in the WHATWG form: onopen, addEventListener, onmessage with binaryType arraybuffer, onclose', async (t) => {
  const loop = new EventLoop()
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', group: loop })
  await within(10_000, once(server, 'listening'), 'listening')
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  server.on('connection', (s: WebSocket) => s.on('message', (d: Buffer, isBinary: boolean) => s.send(d, { binary: isBinary })))
  const ws = new WebSocket(`ws://127.0.0.1:${server.address()!.port}/`, { group: loop })
  ws.binaryType = 'arraybuffer'
  const events: string[] = []
  const opened = new Promise<void>((r) => (ws.onopen = () => r()))
  await within(10_000, opened, 'open')
  const texts: unknown[] = []
  const text = new Promise<void>((r) => ws.addEventListener('message', (ev: WhatwgEvent) => {
    texts.push(ev.data)
    r()
  }, { once: true }))
  ws.send('abc')
  await within(10_000, text, 'text')
  t.deepEqual(texts, ['abc'], 'text arrives as a string')
  const binary = new Promise<unknown>((r) => (ws.onmessage = (ev: WhatwgEvent) => r(ev.data)))
  ws.send(Buffer.from([7, 8]))
  const data = await within(10_000, binary, 'binary')
  t.true(data instanceof ArrayBuffer)
  t.deepEqual([...new Uint8Array(data as ArrayBuffer)], [7, 8])
  const closeEvent = new Promise<WhatwgEvent>((r) => (ws.onclose = (ev: WhatwgEvent) => r(ev)))
  ws.onerror = () => events.push('error')
  ws.close(1000)
  const ev = await within(10_000, closeEvent, 'close')
  t.deepEqual([ev.code, ev.reason, ev.wasClean], [1000, '', true])
  t.deepEqual(events, [])
})

test('wss: against the ws package over node:https, verified with the test CA', async (t) => {
  const server = https.createServer({ cert: pem('server.pem'), key: pem('server.key') })
  const wss = new WsServer({ server })
  wss.on('connection', (s: WsSocket) => s.on('message', (d, isBinary) => s.send(d, { binary: isBinary })))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => {
    for (const c of wss.clients) c.terminate()
    wss.close()
    server.close(() => r())
  }))
  const port = (server.address() as net.AddressInfo).port
  const ws = await within(10_000, WebSocket.connect(`wss://localhost:${port}/secure`, { ca: pem('ca.pem') }), 'connect')
  t.deepEqual(pipelineNames(ws), ['tls', 'ws', 'app'], 'the HTTP codec left after the 101')
  ws.send('over tls')
  t.deepEqual(await nextMessage(ws), { data: Buffer.from('over tls'), isBinary: false })
  const done = closed(ws)
  ws.close(1000)
  t.deepEqual(await done, [1000, ''])
  // An untrusted server: the TLS error, then close 1006.
  const bad = new WebSocket(`wss://localhost:${port}/`)
  const badClose = closed(bad)
  const e = await failed(bad)
  t.regex(e.code, /CERT|VERIFY|ISSUER/, e.message)
  t.is((await badClose)[0], 1006)
})

test('a refused handshake is an error event with a NetloopError code, then close 1006', async (t) => {
  const { port } = await wsServer(t, { verifyClient: () => false })
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`)
  const done = closed(ws)
  const e = await failed(ws)
  t.is(e.code, 'ERR_WS_HANDSHAKE_STATUS')
  t.regex(e.message, /401/)
  t.deepEqual(await done, [1006, ''])
  t.is(ws.readyState, WebSocket.CLOSED)
  await t.throwsAsync(WebSocket.connect(`ws://127.0.0.1:${port}/`), { code: 'ERR_WS_HANDSHAKE_STATUS' })
})

/** A raw server: answers the handshake with `answer(key)`, then writes `after` and ends. */
async function rawServer(t: { teardown(fn: () => unknown): void }, answer: (accept: string) => string, after = Buffer.alloc(0)): Promise<number> {
  const server = net.createServer((s) => {
    let head = ''
    s.on('data', (d) => {
      head += d.toString('latin1')
      if (!head.includes('\r\n\r\n')) return
      const key = /sec-websocket-key: *(\S+)/i.exec(head)![1]
      const accept = crypto.createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64')
      s.write(answer(accept))
      s.end(after)
    })
    s.on('error', () => {})
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  return (server.address() as net.AddressInfo).port
}

const OK = (accept: string) => `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n`

test('a wrong Sec-WebSocket-Accept, a subprotocol or an extension not offered: each refused with its code', async (t) => {
  const cases: Array<[(a: string) => string, string]> = [
    (() => [() => 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n', 'ERR_WS_HANDSHAKE_ACCEPT'])(),
    [(a) => `${OK(a)}Sec-WebSocket-Protocol: nope\r\n\r\n`, 'ERR_WS_HANDSHAKE_PROTOCOL'],
    [(a) => `${OK(a)}Sec-WebSocket-Extensions: x-webkit-deflate-frame\r\n\r\n`, 'ERR_WS_HANDSHAKE_EXTENSION'],
    // Not offered (perMessageDeflate: false below for this case).
    [(a) => `${OK(a)}Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n`, 'ERR_WS_HANDSHAKE_EXTENSION'],
  ]
  for (const [answer, code] of cases) {
    const port = await rawServer(t, answer)
    const offer = !answer('').includes('permessage-deflate')
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, ['chat'], { perMessageDeflate: offer })
    const done = closed(ws)
    t.is((await failed(ws)).code, code)
    t.is((await done)[0], 1006)
  }
})

test('a truncated frame then the end of the connection: close 1006, no message', async (t) => {
  // A text frame announcing 10 bytes, only 3 sent.
  const port = await rawServer(t, (a) => `${OK(a)}\r\n`, Buffer.from([0x81, 0x0a, 0x61, 0x62, 0x63]))
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`)
  const messages: unknown[] = []
  ws.on('message', (d) => messages.push(d))
  await within(10_000, once(ws, 'open'), 'open')
  t.deepEqual(await closed(ws), [1006, ''])
  t.deepEqual(messages, [])
})

test('no server: ECONNREFUSED as the error, then close 1006; a bad URL throws ERR_INVALID_URL', async (t) => {
  const probe = net.createServer()
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
  const port = (probe.address() as net.AddressInfo).port
  await new Promise<void>((r) => probe.close(() => r()))
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`)
  const done = closed(ws)
  t.is((await failed(ws)).code, 'ECONNREFUSED')
  t.is((await done)[0], 1006)
  t.throws(() => new WebSocket('ftp://127.0.0.1/'), { code: 'ERR_INVALID_URL' })
  t.throws(() => new WebSocket('ws://127.0.0.1/#frag'), { code: 'ERR_INVALID_URL' })
  t.throws(() => new WebSocket('not a url'), { code: 'ERR_INVALID_URL' })
})

test('close() before the handshake completes aborts: error, then close 1006; so does the handshake timeout', async (t) => {
  // A server that accepts and never answers.
  const silent = net.createServer((c) => c.on('error', () => {}))
  const port = await new Promise<number>((resolve) => silent.listen(0, '127.0.0.1', () => resolve((silent.address() as net.AddressInfo).port)))
  t.teardown(() => void silent.close())
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`)
  const done = closed(ws)
  const error = failed(ws)
  t.throws(() => ws.send('too early'), { code: 'ERR_INVALID_STATE' })
  ws.close()
  t.is((await error).code, 'ERR_WS_HANDSHAKE_ABORTED')
  t.is((await done)[0], 1006)
  const slow = new WebSocket(`ws://127.0.0.1:${port}/`, { handshakeTimeout: 200 })
  const slowClosed = closed(slow)
  t.is((await failed(slow)).code, 'ERR_WS_HANDSHAKE_TIMEOUT')
  t.is((await slowClosed)[0], 1006)
})

test('netloop style: WebSocketClientProtocolHandler after HttpClientCodec, the handshake event, strings written as text', async (t) => {
  const { port } = await wsServer(t)
  const loop = new EventLoop()
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  const seen: unknown[] = []
  let done!: () => void
  const finished = new Promise<void>((r) => (done = r))
  const ch = await new Bootstrap()
    .group(loop)
    .handler((c) =>
      c.pipeline
        .addLast('http', new HttpClientCodec())
        .addLast('ws', new WebSocketClientProtocolHandler('/native', { host: `127.0.0.1:${port}`, headers: { origin: 'http://example.test' } }))
        .addLast('app', {
          userEventTriggered(ctx, ev) {
            if (!(ev instanceof WebSocketHandshakeEvent)) return
            seen.push([ev.url, ev.protocol, ev.headers.upgrade], ctx.pipeline.names())
            ctx.writeAndFlush('as text')
          },
          channelRead(ctx, msg) {
            if (msg instanceof TextWebSocketFrame) {
              seen.push(msg.text)
              ctx.writeAndFlush(new CloseWebSocketFrame(4006, 'done'))
            } else if (msg instanceof CloseWebSocketFrame) seen.push(msg.code)
          },
          channelInactive: () => done(),
        }),
    )
    .connect(port, '127.0.0.1')
  await within(10_000, finished, 'closed')
  t.false(ch.isOpen)
  // After the 101 the HTTP codec left (natively, the JS view following): frames only.
  t.deepEqual(seen, [['/native', '', 'websocket'], ['ws', 'app'], 'as text', 4006])
})

test('an open connection keeps the process alive, unref() lets it exit', async (t) => {
  const { port } = await wsServer(t)
  const script = `const { WebSocket } = require(${JSON.stringify(join(__dirname, '..', 'index'))});
const ws = new WebSocket('ws://127.0.0.1:${port}/');
ws.on('open', () => { console.log('open'); if (process.argv[1] === 'unref') ws.unref(); else setTimeout(() => { console.log('still alive'); ws.close() }, 300) });
ws.on('close', (code) => console.log('close', code));`
  const run = (mode: string) => promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script, mode], { timeout: 15_000 })
  t.is((await run('unref')).stdout, 'open\n')
  t.is((await run('ref')).stdout, 'open\nstill alive\nclose 1005\n')
})
