// WebSocketServer's handshake answered in JS: a request that is not an upgrade, `handleProtocols`,
// and `handleUpgrade` inside a netloop HTTP pipeline of one's own (noServer), against the `ws`
// package's client and raw node:net sockets.
import test from 'ava'
import * as crypto from 'node:crypto'
import { once } from 'node:events'
import * as net from 'node:net'
import { EventLoop, HttpRequest, HttpResponse, HttpServerCodec, ServerBootstrap, WebSocket, WebSocketServer } from '../index'
import { client, closeOf, connection, server, within } from './ws-server-helpers'

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
