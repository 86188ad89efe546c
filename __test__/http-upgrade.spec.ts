// Protocol upgrades through the native HttpServerCodec: WebSocket with `ws`, a 101 written
// through the codec, a declined upgrade, and a CONNECT tunnel, each against node:http's client.
import test from 'ava'
import * as http from 'node:http'
import * as net from 'node:net'
import { once } from 'node:events'
import WebSocket, { WebSocketServer } from 'ws'
import { Bootstrap, type Channel, HttpRequest, HttpResponse, HttpServerCodec, SslHandler, type ChannelHandler, type ChannelHandlerContext } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { checkWsEcho } from './duplex-helpers'
import { has, run } from './example-helpers'
import { pem, serverContext } from './tls-helpers'

/** Answers plain requests with 200; hands upgrade requests to `onUpgrade`; echoes raw Buffers after a switch. */
function app(onUpgrade: (ctx: ChannelHandlerContext, req: HttpRequest) => void): ChannelHandler {
  return {
    channelRead: (ctx, msg: unknown) => {
      if (Buffer.isBuffer(msg)) return void ctx.writeAndFlush(Buffer.concat([Buffer.from('echo:'), msg]))
      const req = msg as HttpRequest
      if (req.upgrade) return onUpgrade(ctx, req)
      ctx.writeAndFlush(new HttpResponse(200, { 'content-type': 'text/plain' }, `plain ${req.url}`))
    },
    exceptionCaught: () => {},
  }
}

async function httpServer(t: Parameters<typeof loopFor>[0], onUpgrade: (ctx: ChannelHandlerContext, req: HttpRequest) => void) {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', app(onUpgrade)))
  return port
}

test('ws: a WebSocket server takes over from the native codec and exchanges messages', async (t) => {
  const wss = new WebSocketServer({ noServer: true })
  t.teardown(() => wss.close())
  const seen: HttpRequest[] = []
  const port = await httpServer(t, (ctx, req) => {
    seen.push(req)
    // Netty's way: the codec leaves the pipeline (and this handler too); ws writes its own 101.
    ctx.pipeline.remove(HttpServerCodec)
    ctx.pipeline.remove(ctx.name)
    wss.handleUpgrade(req as unknown as http.IncomingMessage, ctx.channel.toDuplex(), Buffer.alloc(0), (ws) => {
      ws.on('message', (data, isBinary) => ws.send(isBinary ? data : `echo: ${data.toString()}`, { binary: isBinary }))
    })
  })
  // A plain request on its own connection still gets HTTP.
  const plain = await fetch(`http://127.0.0.1:${port}/hello`)
  t.is(await plain.text(), 'plain /hello')
  const ws = new WebSocket(`ws://127.0.0.1:${port}/chat`)
  t.teardown(() => ws.terminate())
  await once(ws, 'open')
  t.is(seen[0].url, '/chat')
  t.is(seen[0].headers.upgrade, 'websocket')
  await checkWsEcho(t, ws)
})

test('a 101 written through the codec hands the connection over, bytes sent with the request included', async (t) => {
  const port = await httpServer(t, (ctx) => ctx.writeAndFlush(new HttpResponse(101, { upgrade: 'echo/1', connection: 'Upgrade' })))
  const req = http.request({ port, host: '127.0.0.1', path: '/up', headers: { connection: 'Upgrade', upgrade: 'echo/1' } })
  req.end('early') // written right behind the head, before the 101 (node sends it with the request)
  const [res, socket, head] = (await once(req, 'upgrade')) as [http.IncomingMessage, net.Socket, Buffer]
  t.teardown(() => socket.destroy())
  t.is(res.statusCode, 101)
  t.is(res.headers.upgrade, 'echo/1')
  t.is(res.headers.connection, 'Upgrade')
  t.is(res.headers.date, undefined, 'nothing the codec adds to a 101')
  let got = head.toString('latin1')
  socket.on('data', (d: Buffer) => (got += d.toString('latin1')))
  await until(() => got.includes('echo:early'))
  socket.write('GET / HTTP/1.1\r\n\r\n')
  await until(() => got.includes('echo:GET / HTTP/1.1'))
  t.is(got, 'echo:earlyecho:GET / HTTP/1.1\r\n\r\n', 'after the switch nothing is parsed as HTTP')
})

test('an upgrade answered with an ordinary response is declined and HTTP goes on', async (t) => {
  const port = await httpServer(t, (ctx, req) => ctx.writeAndFlush(new HttpResponse(426, { 'content-type': 'text/plain' }, `no ${req.headers.upgrade}`)))
  const s = net.connect(port, '127.0.0.1')
  t.teardown(() => s.destroy())
  let got = ''
  s.on('data', (d) => (got += d.toString('latin1')))
  s.write('GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nGET /after HTTP/1.1\r\nHost: h\r\n\r\n')
  await until(() => got.includes('plain /after'))
  const responses = got.split(/(?=HTTP\/1\.1 )/)
  t.is(responses.length, 2)
  t.regex(responses[0], /^HTTP\/1\.1 426 /)
  t.regex(responses[0], /\r\n\r\nno websocket$/)
  t.regex(responses[1], /^HTTP\/1\.1 200 /)
})

test('CONNECT answered 200 opens a tunnel (node:http client)', async (t) => {
  const seen: string[] = []
  const port = await httpServer(t, (ctx, req) => {
    seen.push(`${req.method} ${req.url}`)
    ctx.writeAndFlush(new HttpResponse(200))
  })
  const req = http.request({ port, host: '127.0.0.1', method: 'CONNECT', path: 'example.test:443' })
  req.end()
  const [res, socket, head] = (await once(req, 'connect')) as [http.IncomingMessage, net.Socket, Buffer]
  t.teardown(() => socket.destroy())
  t.is(res.statusCode, 200)
  t.is(res.headers['content-length'], undefined, 'no framing fields in a 2xx to CONNECT')
  t.deepEqual(seen, ['CONNECT example.test:443'])
  let got = head.toString('latin1')
  socket.on('data', (d: Buffer) => (got += d.toString('latin1')))
  socket.write('\x16\x03\x01tunnelled')
  await until(() => got.includes('tunnelled'))
  t.is(got, 'echo:\x16\x03\x01tunnelled')
})

test('wss: the same hand-over behind SslHandler (TLS stays below the WebSocket)', async (t) => {
  const wss = new WebSocketServer({ noServer: true })
  t.teardown(() => wss.close())
  const loop = loopFor(t)
  const ctx = serverContext()
  const onUpgrade = (c: ChannelHandlerContext, req: HttpRequest) => {
    c.pipeline.remove(HttpServerCodec)
    c.pipeline.remove(c.name)
    wss.handleUpgrade(req as unknown as http.IncomingMessage, c.channel.toDuplex(), Buffer.alloc(0), (ws) => {
      ws.on('message', (data) => ws.send(`secure echo: ${data.toString()}`))
    })
  }
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('tls', new SslHandler(ctx)).addLast('http', new HttpServerCodec()).addLast('app', app(onUpgrade)))
  const ws = new WebSocket(`wss://localhost:${port}/secure`, { ca: pem('ca.pem') })
  t.teardown(() => ws.terminate())
  await once(ws, 'open')
  const reply = once(ws, 'message')
  ws.send('hi')
  t.is(String((await reply)[0]), 'secure echo: hi')
  const closed = once(ws, 'close')
  ws.close(1000)
  t.is((await closed)[0], 1000)
})

test('curl through a CONNECT proxy on the native codec (curl -p -x) reaches the target', async (t) => {
  if (!has(t, 'curl')) return
  const target = http.createServer((req, res) => res.end(`target saw ${req.method} ${req.url}\n`))
  target.listen(0, '127.0.0.1')
  await once(target, 'listening')
  t.teardown(() => target.close())
  const targetPort = (target.address() as net.AddressInfo).port
  const loop = loopFor(t)
  const seen: string[] = []
  const { port } = await serve(t, loop, (ch) => {
    let tunnel: Channel | undefined
    ch.pipeline.addLast('http', new HttpServerCodec()).addLast('proxy', {
      async channelRead(ctx, msg: unknown) {
        if (Buffer.isBuffer(msg)) return void tunnel?.writeAndFlush(Buffer.from(msg))
        const req = msg as HttpRequest
        if (req.method !== 'CONNECT') return void ctx.writeAndFlush(new HttpResponse(405, {}, 'CONNECT only\n'))
        seen.push(req.url)
        const [host, p] = [req.url.slice(0, req.url.lastIndexOf(':')), Number(req.url.slice(req.url.lastIndexOf(':') + 1))]
        const inbound = ctx.channel
        tunnel = await new Bootstrap()
          .group(inbound.eventLoop)
          .handler((out) => void out.pipeline.addLast('back', { channelRead: (_c, m: Buffer) => void inbound.writeAndFlush(Buffer.from(m)), channelInactive: () => void inbound.close() }))
          .connect(p, host)
        ctx.writeAndFlush(new HttpResponse(200)) // hands the connection over: bytes pass from now on
      },
      channelInactive: () => void tunnel?.close(),
      exceptionCaught: () => {},
    } satisfies ChannelHandler)
  })
  const { stdout } = await run('curl', ['-s', '-p', '-x', `http://127.0.0.1:${port}`, `http://127.0.0.1:${targetPort}/through`])
  t.is(stdout, 'target saw GET /through\n')
  t.deepEqual(seen, [`127.0.0.1:${targetPort}`])
})
