// WebSocketServer (src/ws-server.ts) and its server-side WebSocket objects against real
// clients: the `ws` package's, Python's `websockets` (when installed), raw node:net sockets for
// what no library does (not answering a close frame, a truncated frame). The handshake answered
// in JS (`handleProtocols`, `handleUpgrade`) is in ws-server-upgrade.spec.ts.
import test from 'ava'
import { execFile } from 'node:child_process'
import * as crypto from 'node:crypto'
import { once } from 'node:events'
import { promisify } from 'node:util'
import { WebSocket } from '../index'
import { pem, serverContext } from './tls-helpers'
import { client, closeOf, connection, rawClient, server, within } from './ws-server-helpers'

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
