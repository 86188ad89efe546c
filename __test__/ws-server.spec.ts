// WebSocketServer (src/ws-server.ts) and its server-side WebSocket objects against real
// clients: the `ws` package's, Python's `websockets` (when installed), raw node:net sockets for
// what no library does (not answering a close frame, a truncated frame), and `handleUpgrade`
// inside a netloop HTTP pipeline of one's own.
import test from 'ava'
import { execFile } from 'node:child_process'
import * as crypto from 'node:crypto'
import { once } from 'node:events'
import * as net from 'node:net'
import { promisify } from 'node:util'
import WsClient from 'ws'
import { EventLoop, HttpRequest, HttpResponse, HttpServerCodec, ServerBootstrap, WebSocket, WebSocketServer, type WebSocketRequest } from '../index'
import { pem, serverContext } from './tls-helpers'

const within = <T>(ms: number, p: Promise<T>, what: string): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timeout: ${what}`)), ms).unref())])

type Teardown = { teardown(fn: () => unknown): void }

/** A WebSocketServer on a free port of 127.0.0.1, on a loop of the test's; closed at teardown. */
async function server(t: Teardown, options: Partial<ConstructorParameters<typeof WebSocketServer>[0]> = {}): Promise<{ wss: WebSocketServer; port: number }> {
  const loop = new EventLoop()
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', group: loop, ...options })
  t.teardown(async () => {
    for (const c of wss.clients ?? []) c.terminate()
    await new Promise<void>((r) => wss.close(() => r()))
    await loop.shutdownGracefully(0, 1000)
  })
  await within(10_000, once(wss, 'listening'), 'listening')
  return { wss, port: wss.address()!.port }
}

function client(port: number, path = '/', protocols?: string[]): Promise<WsClient> {
  return within(10_000, new Promise((resolve, reject) => {
    const w = new WsClient(`ws://127.0.0.1:${port}${path}`, protocols)
    w.once('open', () => resolve(w))
    w.once('error', reject)
  }), 'open')
}

const connection = (wss: WebSocketServer): Promise<[WebSocket, WebSocketRequest]> => within(10_000, once(wss, 'connection') as Promise<[WebSocket, WebSocketRequest]>, 'connection')
const closeOf = (ws: { once(e: 'close', l: (code: number, reason: Buffer) => void): unknown }): Promise<[number, string]> =>
  within(10_000, new Promise((resolve) => ws.once('close', (code, reason) => resolve([code, String(reason)]))), 'close')

/** A raw client after a valid handshake: the socket and the bytes read after the 101. */
async function rawClient(port: number): Promise<{ s: net.Socket; read: () => Buffer; ended: Promise<void> }> {
  const s = net.connect(port, '127.0.0.1')
  let buf = Buffer.alloc(0)
  let upgraded = false
  const ended = new Promise<void>((r) => s.on('close', () => r()))
  s.on('error', () => {})
  await within(10_000, new Promise<void>((resolve) => {
    s.on('connect', () => s.write(`GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`))
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      if (upgraded) return
      const at = buf.indexOf('\r\n\r\n')
      if (at < 0) return
      upgraded = true
      buf = buf.subarray(at + 4)
      resolve()
    })
  }), 'raw handshake')
  return { s, read: () => buf, ended }
}

test('the ws package\'s client: connection with the request, messages, pings and pongs both ways, its close code, readyState and clients', async (t) => {
  const { wss, port } = await server(t, { protocols: ['chat'] })
  const conn = connection(wss)
  const c = await client(port, '/room?id=7', ['chat'])
  const [ws, req] = await conn
  t.is(c.protocol, 'chat')
  t.is(ws.protocol, 'chat')
  t.deepEqual([req.url, req.headers.upgrade, req.socket.remoteAddress], ['/room?id=7', 'websocket', '127.0.0.1'])
  t.is(ws.readyState, WebSocket.OPEN)
  t.true(wss.clients!.has(ws))
  const messages: Array<[string, boolean]> = []
  ws.on('message', (d: Buffer, isBinary: boolean) => messages.push([isBinary ? d.toString('hex') : d.toString(), isBinary]))
  const twoMessages = within(10_000, new Promise<void>((r) => ws.on('message', () => messages.length === 2 && r())), 'messages')
  c.send('héllo')
  c.send(Buffer.from([1, 2, 255]))
  await twoMessages
  t.deepEqual(messages, [['héllo', false], ['0102ff', true]])
  const ping = within(10_000, once(ws, 'ping'), 'ping')
  c.ping('from client')
  t.is(String((await ping)[0]), 'from client')
  const serverPong = within(10_000, once(ws, 'pong'), 'pong')
  const clientPing = within(10_000, once(c, 'ping'), 'client ping')
  ws.ping('from server')
  t.is(String((await clientPing)[0]), 'from server')
  t.is(String((await serverPong)[0]), 'from server', 'the ws client answered; the pong reached JS')
  const got = within(10_000, once(c, 'message'), 'reply')
  ws.send('reply')
  t.is(String((await got)[0]), 'reply')
  const closed = closeOf(ws)
  c.close(4001, 'bye')
  t.deepEqual(await closed, [4001, 'bye'])
  t.is(ws.readyState, WebSocket.CLOSED)
  t.false(wss.clients!.has(ws))
})

test('bufferedAmount rises while the client does not read and falls to 0 once it has read everything', async (t) => {
  const { wss, port } = await server(t)
  const conn = connection(wss)
  const c = await client(port)
  const [ws] = await conn
  t.is(ws.bufferedAmount, 0)
  c.pause()
  const chunk = crypto.randomBytes(64 * 1024)
  const count = 300 // ~19 MiB: more than loopback's socket buffers hold
  let received = 0
  const all = within(10_000, new Promise<void>((r) => c.on('message', () => ++received === count && r())), 'all messages')
  for (let i = 0; i < count; i++) ws.send(chunk)
  await new Promise((r) => setImmediate(r))
  const high = ws.bufferedAmount
  t.true(high > 4 * 1024 * 1024, `bufferedAmount ${high}`)
  t.false(ws.channel!.isWritable)
  c.resume()
  await all
  t.is(ws.bufferedAmount, 0)
  t.true(ws.channel!.isWritable)
  ws.close()
})

test('terminate() ends the connection without a close frame: both sides see 1006', async (t) => {
  const { wss, port } = await server(t)
  const conn = connection(wss)
  const c = await client(port)
  const [ws] = await conn
  const clientClosed = closeOf(c)
  const serverClosed = closeOf(ws)
  ws.terminate()
  t.is(ws.readyState, WebSocket.CLOSING)
  t.is((await clientClosed)[0], 1006)
  t.is((await serverClosed)[0], 1006)
  t.is(ws.readyState, WebSocket.CLOSED)
})

test('close() waits for the peer\'s close frame: the ws client answers at once, a silent peer gets closeTimeout then 1006', async (t) => {
  const { wss, port } = await server(t, { closeTimeout: 400 })
  let conn = connection(wss)
  const c = await client(port)
  let [ws] = await conn
  const clientClosed = closeOf(c)
  let closed = closeOf(ws)
  ws.close(4003, 'server bye')
  t.is(ws.readyState, WebSocket.CLOSING)
  t.throws(() => ws.close(1005), { code: 'ERR_OUT_OF_RANGE' })
  t.deepEqual(await clientClosed, [4003, 'server bye'])
  t.deepEqual(await closed, [4003, 'server bye'], 'the peer\'s echo of the code')
  // A raw peer that never answers: the close frame goes, the connection waits, then ends.
  conn = connection(wss)
  const raw = await rawClient(port)
  ;[ws] = await conn
  closed = closeOf(ws)
  const started = Date.now()
  ws.close(4004)
  await within(10_000, new Promise<void>((r) => {
    const check = (): void => void (raw.read().length >= 4 ? r() : raw.s.once('data', check))
    check()
  }), 'close frame')
  t.deepEqual([raw.read()[0], raw.read().readUInt16BE(2)], [0x88, 4004])
  t.is(ws.readyState, WebSocket.CLOSING, 'still waiting for the answer')
  t.deepEqual(await closed, [1006, ''])
  t.true(Date.now() - started >= 350, `closed after ${Date.now() - started} ms`)
  await raw.ended
})

test('a truncated frame then the end of the connection: close 1006 and no message', async (t) => {
  const { wss, port } = await server(t)
  const conn = connection(wss)
  const raw = await rawClient(port)
  const [ws] = await conn
  const messages: unknown[] = []
  ws.on('message', (d) => messages.push(d))
  const closed = closeOf(ws)
  // A masked text frame announcing 10 bytes, only 4 of mask and 3 of payload sent.
  raw.s.end(Buffer.from([0x81, 0x8a, 1, 2, 3, 4, 0x61, 0x62, 0x63]))
  t.deepEqual(await closed, [1006, ''])
  t.deepEqual(messages, [])
})

test('a request that is not an upgrade is answered 426, as ws does', async (t) => {
  const { port } = await server(t)
  const res = await fetch(`http://127.0.0.1:${port}/`)
  t.is(res.status, 426)
})

test('handleProtocols chooses the subprotocol in JS (the handshake answered in JS)', async (t) => {
  const seen: string[][] = []
  const { wss, port } = await server(t, {
    handleProtocols: (offered: Set<string>) => {
      seen.push([...offered])
      return offered.has('b') ? 'b' : false
    },
  })
  const conn = connection(wss)
  const c = await client(port, '/', ['a', 'b'])
  const [ws] = await conn
  t.deepEqual(seen, [['a', 'b']])
  t.is(c.protocol, 'b')
  t.is(ws.protocol, 'b')
  const echo = within(10_000, once(c, 'message'), 'echo')
  ws.on('message', (d: Buffer, isBinary: boolean) => ws.send(d, { binary: isBinary }))
  c.send('via the JS handshake')
  t.is(String((await echo)[0]), 'via the JS handshake')
  const closed = closeOf(ws)
  c.close(1000)
  t.is((await closed)[0], 1000)
})

test('noServer: handleUpgrade inside a netloop HTTP pipeline; other requests stay with the application', async (t) => {
  const loop = new EventLoop()
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  const wss = new WebSocketServer({ noServer: true, path: '/ws' })
  const sockets: WebSocket[] = []
  const server = await new ServerBootstrap()
    .group(loop)
    .childHandler((ch) =>
      ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
        channelRead(ctx, req: HttpRequest) {
          if (req.upgrade && wss.shouldHandle(req)) {
            wss.handleUpgrade(req, ctx, (ws) => {
              sockets.push(ws)
              ws.on('message', (d: Buffer) => ws.send(`echo:${d}`))
            })
          } else if (req.upgrade) {
            ctx.writeAndFlush(new HttpResponse(404, [], 'no such socket').forRequest(req))
          } else {
            ctx.writeAndFlush(new HttpResponse(200, [['content-type', 'text/plain']], 'plain http').forRequest(req))
          }
        },
      }),
    )
    .bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  const port = server.localAddress!.port
  const res = await fetch(`http://127.0.0.1:${port}/`)
  t.deepEqual([res.status, await res.text()], [200, 'plain http'])
  const c = await client(port, '/ws')
  const echo = within(10_000, once(c, 'message'), 'echo')
  c.send('x')
  t.is(String((await echo)[0]), 'echo:x')
  t.is(sockets.length, 1)
  t.is(sockets[0].readyState, WebSocket.OPEN)
  const closed = closeOf(sockets[0])
  c.close(4005)
  t.is((await closed)[0], 4005)
  await t.throwsAsync(client(port, '/elsewhere'), { message: /404/ })
})

test('handleUpgrade takes the HTTP codec out after the 101: a frame sent with the request still reaches the socket', async (t) => {
  const loop = new EventLoop()
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  const wss = new WebSocketServer({ noServer: true })
  const names: string[][] = []
  const server = await new ServerBootstrap()
    .group(loop)
    .childHandler((ch) =>
      ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
        channelRead(ctx, req: HttpRequest) {
          wss.handleUpgrade(req, ctx, (ws) => {
            names.push(ctx.channel.pipeline.names())
            ws.on('message', (d: Buffer) => {
              names.push(ctx.channel.pipeline.names())
              ws.send(`echo:${d}`)
            })
          })
        },
      }),
    )
    .bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  // The upgrade request and a masked text frame in one write: the codec holds the frame's
  // bytes until the 101 goes out, then they must meet the frame handler.
  const key = [7, 1, 2, 9]
  const frame = Buffer.from([0x81, 0x80 | 5, ...key, ...Buffer.from('early').map((b, i) => b ^ key[i % 4])])
  const s = net.connect(server.localAddress!.port, '127.0.0.1')
  t.teardown(() => s.destroy())
  let buf = Buffer.alloc(0)
  const echoed = within(10_000, new Promise<string>((resolve) => {
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      const at = buf.indexOf('\r\n\r\n')
      if (at < 0) return
      const rest = buf.subarray(at + 4)
      if (rest.length >= 2 && rest.length >= 2 + (rest[1] & 0x7f)) resolve(String(rest.subarray(2, 2 + (rest[1] & 0x7f))))
    })
  }), 'echo')
  s.write(Buffer.concat([Buffer.from(`GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`), frame]))
  t.is(await echoed, 'echo:early')
  t.true(buf.subarray(0, 12).toString().includes('101'))
  t.deepEqual(names, [['ws', 'ws-app', 'app'], ['ws', 'ws-app', 'app']])
})

const python = ['python3', '/usr/bin/python3'].find((py) => {
  try {
    require('node:child_process').execFileSync(py, ['-c', 'import websockets'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})

test('Python\'s websockets client: text, binary, ping and the close handshake', async (t) => {
  if (python === undefined) {
    // In CI the peer must be there, unless apt said it cannot be had.
    const uninstallable = process.env.NETLOOP_UNINSTALLABLE_CLIENTS ?? ''
    t.true(process.env.CI === undefined || uninstallable.includes('python3-websockets'), 'python3-websockets missing in CI')
    t.log('skipped: no Python with websockets (apt-get install python3-websockets)')
    return
  }
  const { wss, port } = await server(t)
  wss.on('connection', (ws: WebSocket) => ws.on('message', (d: Buffer, isBinary: boolean) => ws.send(d, { binary: isBinary })))
  const closed = within(10_000, new Promise<[number, string]>((r) => wss.once('connection', (ws: WebSocket) => ws.once('close', (c: number, why: Buffer) => r([c, String(why)])))), 'close')
  const script = `
import asyncio, json, websockets
async def main():
    async with websockets.connect("ws://127.0.0.1:${port}/py") as ws:
        await ws.send("héllo")
        t = await ws.recv()
        await ws.send(bytes([0, 255]))
        b = await ws.recv()
        pong = await ws.ping(b"p")
        await asyncio.wait_for(pong, 5)
        await ws.close(code=4010, reason="py bye")
        print(json.dumps({"text": t, "binary": b.hex(), "code": ws.close_code}))
asyncio.run(asyncio.wait_for(main(), 10))
`
  const { stdout } = await promisify(execFile)(python, ['-c', script], { timeout: 15_000 })
  t.deepEqual(JSON.parse(stdout), { text: 'héllo', binary: '00ff', code: 4010 })
  t.deepEqual(await closed, [4010, 'py bye'])
})

test('a connection listener that throws is the server\'s error event; the connection and the server go on', async (t) => {
  const { wss, port } = await server(t)
  const errors: Error[] = []
  wss.on('error', (e: Error) => errors.push(e))
  // (events.once would reject on the 'error' event: listen by hand, before the throwing listener)
  const conn = within(10_000, new Promise<WebSocket>((r) => wss.on('connection', (ws: WebSocket) => r(ws))), 'connection')
  wss.once('connection', () => {
    throw new Error('listener bug')
  })
  const c = await client(port)
  const ws = await conn
  t.deepEqual(errors.map((e) => e.message), ['listener bug'])
  const echo = within(10_000, once(c, 'message'), 'echo')
  ws.on('message', (d: Buffer) => ws.send(d))
  c.send('still open')
  t.is(String((await echo)[0]), 'still open')
  c.close()
})

test('a protocol violation by the peer: an error event with its ERR_WS_* code, then close 1006; the server goes on', async (t) => {
  const { wss, port } = await server(t)
  const conn = connection(wss)
  const raw = await rawClient(port)
  const [ws] = await conn
  const errors: string[] = []
  ws.on('error', (e: { code: string }) => errors.push(e.code))
  const closed = closeOf(ws)
  raw.s.write(Buffer.from([0x81, 0x02, 0x68, 0x69])) // unmasked, from a client
  t.deepEqual(await closed, [1006, ''])
  t.deepEqual(errors, ['ERR_WS_BAD_MASK'])
  await raw.ended
  t.deepEqual([raw.read()[0], raw.read().readUInt16BE(2)], [0x88, 1002], 'the peer got close 1002')
  const next = connection(wss)
  const c = await client(port)
  t.is((await next)[0].readyState, WebSocket.OPEN)
  c.close()
})

test('wss: a WebSocketServer with tls, and the netloop client verifying it with the test CA', async (t) => {
  const { wss, port } = await server(t, { tls: serverContext() })
  wss.on('connection', (ws: WebSocket) => ws.on('message', (d: Buffer, isBinary: boolean) => ws.send(d, { binary: isBinary })))
  const ws = await within(10_000, WebSocket.connect(`wss://localhost:${port}/`, { ca: pem('ca.pem') }), 'connect')
  t.teardown(() => ws.terminate())
  const echo = within(10_000, once(ws, 'message'), 'echo')
  ws.send(Buffer.from('secret'))
  t.is(String((await echo)[0]), 'secret')
  const closed = closeOf(ws)
  ws.close(1000)
  t.is((await closed)[0], 1000)
})
