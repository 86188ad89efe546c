// permessage-deflate on netloop's client (`new WebSocket(url, protocols, { perMessageDeflate })`,
// offered by default as the `ws` package's client) and in `WebSocketServer`'s
// `perMessageDeflate`: against the `ws` package's server and client, and netloop to netloop.
// Compression is told by the bytes on the wire (a 100 KB compressible message crosses in far
// fewer bytes) and by what each side says was agreed.
import test from 'ava'
import { once } from 'node:events'
import type * as net from 'node:net'
import { WebSocketServer as WsServer, WebSocket as WsClient } from 'ws'
import { WebSocket, WebSocketServer, type NetloopError } from '../index'

const within = <T>(ms: number, p: Promise<T>, what: string): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timeout: ${what}`)), ms).unref())])

const message = (ws: { once(ev: 'message', fn: (data: Buffer, isBinary: boolean) => void): unknown }) =>
  within(10_000, new Promise<Buffer>((resolve) => ws.once('message', (data) => resolve(data))), 'message')

const BIG = 'netloop compresses this line again and again. '.repeat(2200) // ~100 KB

/** A `ws` server echoing every message; its server-side sockets. */
async function wsServer(t: { teardown(fn: () => unknown): void }, perMessageDeflate: boolean | object) {
  const wss = new WsServer({ port: 0, host: '127.0.0.1', perMessageDeflate })
  t.teardown(() => new Promise<void>((r) => {
    for (const c of wss.clients) c.terminate()
    wss.close(() => r())
  }))
  await once(wss, 'listening')
  wss.on('connection', (s) => s.on('message', (d, isBinary) => s.send(d, { binary: isBinary })))
  return { wss, port: (wss.address() as net.AddressInfo).port }
}

type Peer = WsClient & { _socket: net.Socket; _extensions: Record<string, { params: Record<string, unknown> }> }

test('the client offers permessage-deflate by default; with a ws server both directions travel compressed', async (t) => {
  const { wss, port } = await wsServer(t, { threshold: 1024 })
  const serverSide = once(wss, 'connection')
  const ws = await within(10_000, WebSocket.connect(`ws://127.0.0.1:${port}/`), 'open')
  const [peer, req] = (await serverSide) as [Peer, { headers: Record<string, string> }]
  t.regex(req.headers['sec-websocket-extensions'], /^permessage-deflate; client_max_window_bits$/)
  t.truthy(peer._extensions['permessage-deflate'], 'the ws server agreed')
  t.regex(ws.extensions, /^permessage-deflate/)
  const [read0, written0] = [peer._socket.bytesRead, peer._socket.bytesWritten]
  ws.send(BIG)
  t.is(String(await message(ws)), BIG, 'the echo inflates back to the message')
  const up = peer._socket.bytesRead - read0
  const down = peer._socket.bytesWritten - written0
  t.true(up < BIG.length / 10, `client → server: ${up} bytes on the wire for ${BIG.length}`)
  t.true(down < BIG.length / 10, `server → client: ${down} bytes on the wire for ${BIG.length}`)
  ws.send('short') // under the threshold: uncompressed, still fine
  t.is(String(await message(ws)), 'short')
  ws.close()
  await within(10_000, once(ws, 'close'), 'close')
})

test('perMessageDeflate: false offers nothing, and a declining server leaves the connection uncompressed', async (t) => {
  const on = await wsServer(t, true)
  const side = once(on.wss, 'connection')
  const plain = await within(10_000, WebSocket.connect(`ws://127.0.0.1:${on.port}/`, { perMessageDeflate: false }), 'open')
  const [, req] = (await side) as [Peer, { headers: Record<string, string> }]
  t.is(req.headers['sec-websocket-extensions'], undefined)
  t.is(plain.extensions, '')
  plain.terminate()

  const off = await wsServer(t, false)
  const side2 = once(off.wss, 'connection')
  const ws = await within(10_000, WebSocket.connect(`ws://127.0.0.1:${off.port}/`), 'open')
  const [peer] = (await side2) as [Peer]
  t.is(ws.extensions, '')
  const read0 = peer._socket.bytesRead
  ws.send(BIG)
  t.is(String(await message(ws)), BIG)
  t.true(peer._socket.bytesRead - read0 >= BIG.length, 'sent as it is')
  ws.terminate()
})

test('the client\'s options shape the offer and the agreement (no context takeover, window bits)', async (t) => {
  const { wss, port } = await wsServer(t, true)
  const side = once(wss, 'connection')
  const ws = await within(10_000, WebSocket.connect(`ws://127.0.0.1:${port}/`, { perMessageDeflate: { serverNoContextTakeover: true, clientNoContextTakeover: true, clientMaxWindowBits: 10, threshold: 16 } }), 'open')
  const [peer, req] = (await side) as [Peer, { headers: Record<string, string> }]
  t.is(req.headers['sec-websocket-extensions'], 'permessage-deflate; server_no_context_takeover; client_no_context_takeover; client_max_window_bits=10')
  t.like(peer._extensions['permessage-deflate'].params, { server_no_context_takeover: true, client_no_context_takeover: true, client_max_window_bits: 10 })
  for (let i = 0; i < 3; i++) {
    ws.send(BIG)
    t.is(String(await message(ws)), BIG)
  }
  ws.close()
  await within(10_000, once(ws, 'close'), 'close')
})

test('an answer the offer does not allow fails the handshake with ERR_WS_HANDSHAKE_EXTENSION', async (t) => {
  // A server answering with a client window above the one offered (no library does): raw.
  const { createServer } = await import('node:net')
  const { createHash } = await import('node:crypto')
  const server = createServer((s) => {
    s.once('data', (d) => {
      const key = /sec-websocket-key: *(\S+)/i.exec(String(d))![1]
      const accept = createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64')
      s.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=15\r\n\r\n`)
    })
  })
  t.teardown(() => void server.close())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as net.AddressInfo).port}/`, { perMessageDeflate: { clientMaxWindowBits: 12 } })
  const closed = within(10_000, new Promise<number>((r) => ws.once('close', r)), 'close')
  const err = (await within(10_000, once(ws, 'error'), 'error'))[0] as NetloopError
  t.is(err.code, 'ERR_WS_HANDSHAKE_EXTENSION')
  t.regex(err.message, /client_max_window_bits=15 above the offer/)
  t.is(await closed, 1006)
})

test('WebSocketServer perMessageDeflate: a ws client and the netloop client get compressed both ways; off by default', async (t) => {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: { threshold: 1024 } })
  t.teardown(() => new Promise<void>((r) => {
    for (const c of wss.clients!) c.terminate()
    wss.close(() => r())
  }))
  await within(10_000, once(wss, 'listening'), 'listening')
  wss.on('connection', (s: WebSocket) => s.on('message', (d: Buffer, isBinary: boolean) => s.send(d, { binary: isBinary })))
  const port = wss.address()!.port

  const client = new WsClient(`ws://127.0.0.1:${port}/`, { perMessageDeflate: true }) as Peer
  await within(10_000, once(client, 'open'), 'ws open')
  t.truthy(client._extensions['permessage-deflate'], 'the ws client sees it agreed')
  const [read0, written0] = [client._socket.bytesRead, client._socket.bytesWritten]
  client.send(BIG)
  t.is(String(await message(client)), BIG)
  t.true(client._socket.bytesWritten - written0 < BIG.length / 10, 'ws client → netloop server compressed')
  t.true(client._socket.bytesRead - read0 < BIG.length / 10, 'netloop server → ws client compressed')
  client.close()

  const ours = await within(10_000, WebSocket.connect(`ws://127.0.0.1:${port}/`), 'netloop open')
  t.regex(ours.extensions, /^permessage-deflate/)
  ours.send(BIG)
  t.is(String(await message(ours)), BIG)
  ours.close()
  await within(10_000, once(ours, 'close'), 'close')

  const plainServer = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  t.teardown(() => new Promise<void>((r) => plainServer.close(() => r())))
  await within(10_000, once(plainServer, 'listening'), 'listening')
  const declined = await within(10_000, WebSocket.connect(`ws://127.0.0.1:${plainServer.address()!.port}/`), 'open')
  t.is(declined.extensions, '', 'offered by default, not accepted by default')
  declined.terminate()
  await within(10_000, once(declined, 'close'), 'close')
})

test('bad perMessageDeflate options throw typed errors', (t) => {
  t.throws(() => new WebSocketServer({ noServer: true, perMessageDeflate: { serverMaxWindowBits: 20 } }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new WebSocket('ws://127.0.0.1:9/', { perMessageDeflate: 'yes' as never }), { code: 'ERR_INVALID_ARG_TYPE' })
})

test('handleUpgrade (the JS handshake) negotiates permessage-deflate by the native rules, then compresses natively', async (t) => {
  const servers = [
    new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: { serverMaxWindowBits: 12 } }),
    new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: { serverMaxWindowBits: 12 }, handleProtocols: () => false }),
  ]
  for (const wss of servers) {
    t.teardown(() => new Promise<void>((r) => {
      for (const c of wss.clients!) c.terminate()
      wss.close(() => r())
    }))
    wss.on('connection', (s: WebSocket) => {
      s.on('error', () => {})
      s.on('message', (d: Buffer, isBinary: boolean) => s.send(d, { binary: isBinary }))
    })
    await within(10_000, once(wss, 'listening'), 'listening')
  }
  /** The answer each server gives to a ws client's `offer`, and whether a message compresses both ways. */
  const answer = async (port: number, offer: object) => {
    const c = new WsClient(`ws://127.0.0.1:${port}/`, { perMessageDeflate: offer }) as Peer
    const res = once(c, 'upgrade')
    await within(10_000, once(c, 'open'), 'open')
    const header = String((((await res) as unknown[])[0] as { headers: Record<string, string> }).headers['sec-websocket-extensions'])
    const [read0, written0] = [c._socket.bytesRead, c._socket.bytesWritten]
    c.send(BIG)
    t.is(String(await message(c)), BIG)
    const compressed = c._socket.bytesWritten - written0 < BIG.length / 10 && c._socket.bytesRead - read0 < BIG.length / 10
    c.close()
    return { header, compressed }
  }
  const [native, js] = servers.map((s) => s.address()!.port)
  for (const offer of [{}, { serverNoContextTakeover: true, clientNoContextTakeover: true }, { serverMaxWindowBits: 10, clientMaxWindowBits: 11 }]) {
    const a = await answer(native, offer)
    const b = await answer(js, offer)
    t.deepEqual(b, a, `the same answer to ${JSON.stringify(offer)}`)
    t.true(b.compressed)
    t.regex(b.header, /^permessage-deflate/)
  }
})
