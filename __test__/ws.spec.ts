// WebSocket through the TS API: examples/ws-echo.ts (HttpServerCodec, then
// WebSocketServerProtocolHandler, then a JS echo, or the native WebSocketEchoHandler with
// --native) driven by the `ws` package's client, and raw sockets for bad frames.
import test from 'ava'
import * as crypto from 'node:crypto'
import * as net from 'node:net'
import WebSocket from 'ws'
import { BinaryWebSocketFrame, HttpRequest, HttpResponse, HttpServerCodec, TextWebSocketFrame, WebSocketEchoHandler, WebSocketServerProtocolHandler, type Channel, type NetloopError } from '../index'
import { loopFor, serve } from './channel-helpers'
import { startExample } from './example-helpers'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { certsDir } from './tls-helpers'

const within = <T>(ms: number, p: Promise<T>, what: string): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timeout: ${what}`)), ms).unref())])

function open(port: number, path = '/echo', protocols: string[] = [], headers: Record<string, string> = {}): Promise<WebSocket> {
  return within(10_000, new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, protocols, { headers })
    ws.once('open', () => resolve(ws))
    ws.once('error', reject)
  }), 'open')
}

const next = (ws: WebSocket) => within(10_000, new Promise<{ data: Buffer; isBinary: boolean }>((resolve) => ws.once('message', (data, isBinary) => resolve({ data: data as Buffer, isBinary }))), 'message')

/** Sends `frame` after a valid handshake on a raw socket; the close code the server sends. */
function closeCodeFor(port: number, frame: Buffer, path = '/'): Promise<number | undefined> {
  return within(10_000, new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1')
    let buf = Buffer.alloc(0)
    let upgraded = false
    s.on('connect', () => s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`))
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      if (!upgraded) {
        const at = buf.indexOf('\r\n\r\n')
        if (at < 0) return
        upgraded = true
        buf = buf.subarray(at + 4)
        s.write(frame)
      }
    })
    s.on('error', () => {})
    s.on('close', () => resolve(buf.length >= 4 && (buf[0] & 0x0f) === 8 ? buf.readUInt16BE(2) : undefined))
  }), 'close')
}

for (const args of [[], ['--native'], ['--threads', '2']]) {
  const label = args.length ? ` ${args.join(' ')}` : ''
  test.serial(`ws-echo${label}: text, binary, fragmented messages come back; pings are answered; the close code is echoed`, async (t) => {
    const ex = await startExample(t, 'ws-echo', args)
    const ws = await open(ex.port)
    ws.send('héllo')
    let m = await next(ws)
    t.deepEqual([m.data.toString(), m.isBinary], ['héllo', false])
    ws.send(Buffer.from([0, 1, 255]))
    m = await next(ws)
    t.deepEqual([m.data, m.isBinary], [Buffer.from([0, 1, 255]), true])
    const big = crypto.randomBytes(300_000)
    ws.send(big)
    m = await next(ws)
    t.true(m.data.equals(big))
    ws.send('frag', { fin: false })
    ws.send('ment', { fin: true })
    m = await next(ws)
    t.is(m.data.toString(), 'fragment')
    const pong = within(10_000, new Promise<Buffer>((resolve) => ws.once('pong', resolve)), 'pong')
    ws.ping('p')
    t.is((await pong).toString(), 'p')
    const closed = within(10_000, new Promise<number>((resolve) => ws.once('close', resolve)), 'close')
    ws.close(4001)
    t.is(await closed, 4001)
  })
}

test.serial('ws-echo: an unmasked frame is answered with close 1002, invalid UTF-8 with 1007, and the server goes on', async (t) => {
  const ex = await startExample(t, 'ws-echo')
  t.is(await closeCodeFor(ex.port, Buffer.from([0x81, 0x02, 0x68, 0x69])), 1002)
  const key = [1, 2, 3, 4]
  const bad = Buffer.from([0x68, 0xff].map((b, i) => b ^ key[i % 4]))
  t.is(await closeCodeFor(ex.port, Buffer.concat([Buffer.from([0x81, 0x82, ...key]), bad])), 1007)
  const ws = await open(ex.port)
  ws.send('still here')
  t.is((await next(ws)).data.toString(), 'still here')
  ws.close()
  t.is(ex.stderr(), '', 'protocol errors are not logged as failures')
})

test('a JS handler gets { text } and { binary } frames; strings it writes are text messages, Buffers binary; errors arrive typed', async (t) => {
  const loop = loopFor(t)
  const errors: NetloopError[] = []
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline
      .addLast('http', new HttpServerCodec())
      .addLast('ws', new WebSocketServerProtocolHandler('/ws', { subprotocols: ['chat'] }))
      .addLast('app', {
        channelRead: (ctx, msg: unknown) => {
          if (msg instanceof TextWebSocketFrame) ctx.writeAndFlush(`text:${msg.text}`)
          else if (msg instanceof BinaryWebSocketFrame) ctx.writeAndFlush(Buffer.concat([Buffer.from([9]), msg.binary]))
        },
        exceptionCaught: (_ctx, e) => void errors.push(e as NetloopError),
      }),
  )
  const ws = await within(10_000, new Promise<WebSocket>((resolve, reject) => {
    const w = new WebSocket(`ws://127.0.0.1:${port}/ws`, ['chat'])
    w.once('open', () => resolve(w))
    w.once('error', reject)
  }), 'open')
  t.teardown(() => ws.terminate())
  t.is(ws.protocol, 'chat')
  ws.send('a')
  let m = await next(ws)
  t.deepEqual([m.data.toString(), m.isBinary], ['text:a', false])
  ws.send(Buffer.from([1, 2]))
  m = await next(ws)
  t.deepEqual([m.data, m.isBinary], [Buffer.from([9, 1, 2]), true])
  t.is(await closeCodeFor(port, Buffer.from([0x81, 0x02, 0x68, 0x69]), '/ws'), 1002)
  t.deepEqual(errors.map((e) => e.code), ['ERR_WS_BAD_MASK'])
})

test('the handshake takes HttpServerCodec out of the pipeline (as Netty), and the JS view of the pipeline follows', async (t) => {
  const loop = loopFor(t)
  const codec = new HttpServerCodec()
  const protocol = new WebSocketServerProtocolHandler('/ws')
  const echo = new WebSocketEchoHandler()
  let channel: Channel | undefined
  const { port } = await serve(t, loop, (ch) => {
    channel = ch
    ch.pipeline.addLast('http', codec).addLast('ws', protocol).addLast('echo', echo)
  })
  const ws = await within(10_000, new Promise<WebSocket>((resolve, reject) => {
    const w = new WebSocket(`ws://127.0.0.1:${port}/ws`)
    w.once('open', () => resolve(w))
    w.once('error', reject)
  }), 'open')
  t.teardown(() => ws.terminate())
  ws.send('a')
  t.is((await next(ws)).data.toString(), 'a') // by then the codec's task has run
  const p = channel!.pipeline
  t.deepEqual(p.names(), ['ws', 'echo'])
  t.is(p.get('http'), undefined)
  t.is(p.get(HttpServerCodec), undefined)
  t.is(p.get('echo'), echo, 'native handlers are still found, by name and by class')
  t.is(p.get(WebSocketEchoHandler), echo)
  t.throws(() => p.remove('http'), { code: 'ERR_NO_SUCH_HANDLER' })
  // the pipeline can still be changed around the native handlers
  p.addAfter('ws', 'before-echo', new WebSocketEchoHandler()).addLast('last', {})
  t.deepEqual(p.names(), ['ws', 'before-echo', 'echo', 'last'])
  p.remove('before-echo')
  t.deepEqual(p.names(), ['ws', 'echo', 'last'])
  ws.send('b')
  t.is((await next(ws)).data.toString(), 'b')
})

test('frames a JS handler fires on reach the native handler after it as frames (echoed), whatever their size', async (t) => {
  const loop = loopFor(t)
  const seen: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline
      .addLast('http', new HttpServerCodec())
      .addLast('ws', new WebSocketServerProtocolHandler('/echo'))
      .addLast('spy', {
        channelRead: (ctx, msg: unknown) => {
          if (msg instanceof TextWebSocketFrame) seen.push(`text ${msg.text.length}`)
          else if (msg instanceof BinaryWebSocketFrame) seen.push(`binary ${msg.binary.length}`)
          ctx.fireChannelRead(msg)
        },
      })
      .addLast('echo', new WebSocketEchoHandler()),
  )
  const ws = await open(port)
  t.teardown(() => ws.terminate())
  ws.send('a')
  t.deepEqual([(await next(ws)).data.toString()], ['a'])
  const big = Buffer.alloc(200_000, 7) // past the op arena: passed on as a big chunk
  ws.send(big)
  const m = await next(ws)
  t.true(m.isBinary)
  t.true(m.data.equals(big))
  t.deepEqual(seen, ['text 1', 'binary 200000'])
})

/** The status of the answer to a WebSocket request that is not upgraded. */
function refusal(port: number, path: string, headers: Record<string, string> = {}): Promise<number> {
  return within(10_000, new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers })
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0)
      ws.terminate()
    })
    ws.once('open', () => reject(new Error('upgraded')))
    ws.once('error', () => {})
  }), 'refusal')
}

test('an auth handler in JS between HttpServerCodec and the handshake passes the request on after an asynchronous check: the upgrade and echo work, and what it refuses it answers', async (t) => {
  const loop = loopFor(t)
  const seen: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline
      .addLast('http', new HttpServerCodec())
      .addLast('auth', {
        channelRead: (ctx, msg: unknown) => {
          if (!(msg instanceof HttpRequest)) return void ctx.fireChannelRead(msg)
          // The check takes a turn of the event loop (a token service, say): the request is
          // passed on after its delivery returned.
          setImmediate(() => {
            seen.push(`${msg.method} ${msg.url} ${msg.header('authorization')}`)
            if (msg.header('authorization') !== 'Bearer ok') ctx.writeAndFlush(new HttpResponse(401))
            else ctx.fireChannelRead(msg)
          })
        },
      })
      .addLast('ws', new WebSocketServerProtocolHandler('/echo'))
      .addLast('echo', new WebSocketEchoHandler()),
  )
  t.is(await refusal(port, '/echo'), 401)
  const ws = await open(port, '/echo?x=1', [], { authorization: 'Bearer ok' })
  t.teardown(() => ws.terminate())
  ws.send('a')
  t.is((await next(ws)).data.toString(), 'a')
  const big = Buffer.alloc(100_000, 3)
  ws.send(big)
  t.true((await next(ws)).data.equals(big))
  t.deepEqual(seen, ['GET /echo undefined', 'GET /echo?x=1 Bearer ok'])
})

test('a request a JS handler changes before passing it on is what the native handshake gets: headers set and deleted, url', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline
      .addLast('http', new HttpServerCodec())
      .addLast('rewrite', {
        channelRead: (ctx, msg: unknown) => {
          if (msg instanceof HttpRequest) {
            if (msg.url === '/old') msg.url = '/echo'
            const prefer = msg.headers['x-prefer']
            if (typeof prefer === 'string') msg.headers['sec-websocket-protocol'] = prefer
            if (msg.headers['x-drop-key'] !== undefined) delete msg.headers['sec-websocket-key']
          }
          ctx.fireChannelRead(msg)
        },
      })
      .addLast('ws', new WebSocketServerProtocolHandler('/echo', { subprotocols: ['a', 'b'] }))
      .addLast('echo', new WebSocketEchoHandler()),
  )
  // Unchanged: the first offer the server speaks.
  const plain = await open(port, '/echo', ['a', 'b'])
  t.teardown(() => plain.terminate())
  t.is(plain.protocol, 'a')
  // The offer rewritten by the handler.
  const preferred = await open(port, '/echo', ['a', 'b'], { 'x-prefer': 'b' })
  t.teardown(() => preferred.terminate())
  t.is(preferred.protocol, 'b')
  preferred.send('p')
  t.is((await next(preferred)).data.toString(), 'p')
  // The path rewritten: accepted at the handler's path.
  const moved = await open(port, '/old')
  t.teardown(() => moved.terminate())
  moved.send('m')
  t.is((await next(moved)).data.toString(), 'm')
  // The key deleted: the handshake refuses the request (400).
  t.is(await refusal(port, '/echo', { 'x-drop-key': '1' }), 400)
})

test('a refused handshake leaves HttpServerCodec in the pipeline', async (t) => {
  const loop = loopFor(t)
  let channel: Channel | undefined
  const { port } = await serve(t, loop, (ch) => {
    channel = ch
    ch.pipeline.addLast('http', new HttpServerCodec()).addLast('ws', new WebSocketServerProtocolHandler('/ws')).addLast('echo', new WebSocketEchoHandler())
  })
  const answer = await within(10_000, new Promise<string>((resolve) => {
    const s = net.connect(port, '127.0.0.1')
    let got = ''
    s.on('connect', () => s.write('GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n'))
    s.on('data', (d) => {
      got += d
      if (got.includes('\r\n\r\n')) {
        resolve(got)
        s.destroy()
      }
    })
  }), 'answer')
  t.regex(answer, /^HTTP\/1\.1 426 /)
  t.deepEqual(channel!.pipeline.names(), ['http', 'ws', 'echo'])
})

test.serial('ws-echo --tls --threads 2: a wss: client verified with the test CA exchanges messages', async (t) => {
  const dir = certsDir()
  const ex = await startExample(t, 'ws-echo', ['--tls', '--cert', join(dir, 'server.pem'), '--key', join(dir, 'server.key'), '--threads', '2'])
  const ws = await within(10_000, new Promise<WebSocket>((resolve, reject) => {
    const w = new WebSocket(`wss://localhost:${ex.port}/`, { ca: readFileSync(join(dir, 'ca.pem')) })
    w.once('open', () => resolve(w))
    w.once('error', reject)
  }), 'open')
  t.teardown(() => ws.terminate())
  ws.send('over tls')
  t.is((await next(ws)).data.toString(), 'over tls')
  const closed = within(10_000, new Promise<number>((resolve) => ws.once('close', resolve)), 'close')
  ws.close(1000)
  t.is(await closed, 1000)
})
