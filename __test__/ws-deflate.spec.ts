// permessage-deflate (RFC 7692) through the TS API: a netloop server with a JS echo and
// `perMessageDeflate` driven by the `ws` package's client (which offers it when its own
// `perMessageDeflate` is on) and, when installed, Python's `websockets` client (which offers
// it by default); a deflate bomb from a raw socket is closed with 1009.
import test, { type ExecutionContext } from 'ava'
import { spawn, spawnSync } from 'node:child_process'
import * as crypto from 'node:crypto'
import * as net from 'node:net'
import * as zlib from 'node:zlib'
import WebSocket from 'ws'
import { BinaryWebSocketFrame, HttpServerCodec, TextWebSocketFrame, WebSocketServerProtocolHandler, type NetloopError, type WebSocketServerProtocolOptions } from '../index'
import { loopFor, serve } from './channel-helpers'
import { startExample } from './example-helpers'

const within = <T>(ms: number, p: Promise<T>, what: string): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timeout: ${what}`)), ms).unref())])

type T = ExecutionContext

/** A server echoing every message from JS, with `options`; the errors it saw. */
async function echoServer(t: T, options: WebSocketServerProtocolOptions) {
  const errors: NetloopError[] = []
  const { port } = await serve(t, loopFor(t), (ch) =>
    void ch.pipeline
      .addLast('http', new HttpServerCodec())
      .addLast('ws', new WebSocketServerProtocolHandler('/', options))
      .addLast('app', {
        channelRead: (ctx, msg: unknown) => {
          if (msg instanceof TextWebSocketFrame || msg instanceof BinaryWebSocketFrame) ctx.writeAndFlush(msg)
        },
        exceptionCaught: (ctx, e) => {
          errors.push(e as NetloopError)
          ctx.close()
        },
      }),
  )
  return { port, errors }
}

/** A `ws` client; `extensions` is the server's Sec-WebSocket-Extensions answer ('' if none). */
function open(port: number, perMessageDeflate: WebSocket.ClientOptions['perMessageDeflate'] = true): Promise<WebSocket & { answer: string }> {
  return within(10_000, new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate }) as WebSocket & { answer: string }
    ws.answer = ''
    ws.once('upgrade', (res) => (ws.answer = String(res.headers['sec-websocket-extensions'] ?? '')))
    ws.once('open', () => resolve(ws))
    ws.once('error', reject)
  }), 'open')
}

const next = (ws: WebSocket) => within(10_000, new Promise<{ data: Buffer; isBinary: boolean }>((resolve) => ws.once('message', (data, isBinary) => resolve({ data: data as Buffer, isBinary }))), 'message')

/** Bytes the client's socket has read so far (what crossed the wire from the server). */
const bytesRead = (ws: WebSocket) => (ws as unknown as { _socket: net.Socket })._socket.bytesRead

function words(n: number): string {
  const vocabulary = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta']
  let x = 12345
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    out.push(vocabulary[(x >>> 16) % 8])
  }
  return out.join(' ')
}

/** Text, binary, a large compressible message and a run of equal ones, echoed; the bytes read per run. */
async function exchange(t: T, ws: WebSocket): Promise<number[]> {
  ws.send('héllo')
  let m = await next(ws)
  t.deepEqual([m.data.toString(), m.isBinary], ['héllo', false])
  const bin = Buffer.alloc(5000, 7)
  ws.send(bin)
  m = await next(ws)
  t.deepEqual([m.data, m.isBinary], [bin, true])
  const large = words(200_000) // about 1.2 MB
  let before = bytesRead(ws)
  ws.send(large)
  m = await next(ws)
  t.is(m.data.toString(), large)
  t.true(bytesRead(ws) - before < large.length / 3, `the echo came compressed (${bytesRead(ws) - before} bytes for ${large.length})`)
  // Random base64 (8000 characters): compressed alone to about 3/4, but the second time a
  // compressor that kept its window refers back to the first.
  const same = crypto.randomBytes(6000).toString('base64')
  const runs: number[] = []
  for (let i = 0; i < 3; i++) {
    before = bytesRead(ws)
    ws.send(same)
    t.is((await next(ws)).data.toString(), same)
    runs.push(bytesRead(ws) - before)
  }
  return runs
}

test('the ws client with perMessageDeflate: text, binary, large messages compressed both ways, the window kept', async (t) => {
  const { port, errors } = await echoServer(t, { perMessageDeflate: true })
  const ws = await open(port)
  t.teardown(() => ws.terminate())
  t.is(ws.answer, 'permessage-deflate')
  const runs = await exchange(t, ws)
  t.true(runs[1] < runs[0] / 2, `with context takeover an equal message costs less the second time: ${runs}`)
  const closed = within(10_000, new Promise<number>((resolve) => ws.once('close', resolve)), 'close')
  ws.close(1000)
  t.is(await closed, 1000)
  t.deepEqual(errors, [])
})

test('no context takeover either way: each message is compressed afresh, and still echoed', async (t) => {
  const { port, errors } = await echoServer(t, { perMessageDeflate: { serverNoContextTakeover: true, clientNoContextTakeover: true, threshold: 0 } })
  const ws = await open(port)
  t.teardown(() => ws.terminate())
  t.is(ws.answer, 'permessage-deflate; server_no_context_takeover; client_no_context_takeover')
  const runs = await exchange(t, ws)
  t.is(runs[1], runs[0], `without context takeover an equal message costs the same: ${runs}`)
  t.deepEqual(errors, [])
})

test('window bits: the server announces its window and limits the client’s', async (t) => {
  const { port } = await echoServer(t, { perMessageDeflate: { serverMaxWindowBits: 10, clientMaxWindowBits: 11 } })
  const ws = await open(port) // ws offers client_max_window_bits without a value
  t.teardown(() => ws.terminate())
  t.is(ws.answer, 'permessage-deflate; server_max_window_bits=10; client_max_window_bits=11')
  await exchange(t, ws)
})

test('off by default: an offer is declined and messages go uncompressed', async (t) => {
  const { port } = await echoServer(t, {})
  const ws = await open(port)
  t.teardown(() => ws.terminate())
  t.is(ws.answer, '')
  const large = words(20_000)
  const before = bytesRead(ws)
  ws.send(large)
  t.is((await next(ws)).data.toString(), large)
  t.true(bytesRead(ws) - before > large.length)
})

test('bad perMessageDeflate options are refused with typed errors', (t) => {
  const bad: [unknown, string][] = [
    ['yes', 'ERR_INVALID_ARG_TYPE'],
    [{ threshold: -1 }, 'ERR_OUT_OF_RANGE'],
    [{ serverMaxWindowBits: 8 }, 'ERR_OUT_OF_RANGE'],
    [{ clientMaxWindowBits: 16 }, 'ERR_OUT_OF_RANGE'],
    [{ serverNoContextTakeover: 1 }, 'ERR_INVALID_ARG_TYPE'],
  ]
  for (const [perMessageDeflate, code] of bad) {
    const e = t.throws(() => new WebSocketServerProtocolHandler('/', { perMessageDeflate } as WebSocketServerProtocolOptions))
    t.is((e as NetloopError).code, code, JSON.stringify(perMessageDeflate))
  }
})

/** The bytes of a compressed message as a peer sends it: raw DEFLATE, sync flush, tail removed. */
function deflated(data: Buffer): Buffer {
  const out = zlib.deflateRawSync(data, { finishFlush: zlib.constants.Z_SYNC_FLUSH })
  return out.subarray(0, out.length - 4)
}

/** A masked frame with RSV1 set. */
function compressedFrame(payload: Buffer): Buffer {
  const key = crypto.randomBytes(4)
  const len = payload.length
  const head = len < 126 ? Buffer.from([0xc2, 0x80 | len]) : len <= 0xffff ? Buffer.from([0xc2, 0x80 | 126, len >> 8, len & 0xff]) : Buffer.from([0xc2, 0x80 | 127, 0, 0, 0, 0, (len >>> 24) & 0xff, (len >> 16) & 0xff, (len >> 8) & 0xff, len & 0xff])
  const body = Buffer.from(payload.map((b, i) => b ^ key[i % 4]))
  return Buffer.concat([head, key, body])
}

test('a deflate bomb from a raw client is closed with 1009 and the connection ends', async (t) => {
  const { port, errors } = await echoServer(t, { perMessageDeflate: true, maxFrameSize: 1 << 20, maxMessageSize: 1 << 20 })
  const bomb = deflated(Buffer.alloc(64 << 20)) // 64 MiB of zeros in about 64 KiB
  t.true(bomb.length < 128 << 10)
  const result = await within(10_000, new Promise<{ extensions: string; closeCode?: number }>((resolve) => {
    const s = net.connect(port, '127.0.0.1')
    let buf = Buffer.alloc(0)
    let extensions = ''
    let upgraded = false
    s.on('connect', () => s.write(`GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n`))
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      if (upgraded) return
      const at = buf.indexOf('\r\n\r\n')
      if (at < 0) return
      upgraded = true
      extensions = /sec-websocket-extensions: ([^\r]*)/i.exec(buf.subarray(0, at).toString())?.[1] ?? ''
      buf = buf.subarray(at + 4)
      s.write(compressedFrame(bomb))
    })
    s.on('error', () => {})
    s.on('close', () => resolve({ extensions, closeCode: buf.length >= 4 && (buf[0] & 0x0f) === 8 ? buf.readUInt16BE(2) : undefined }))
  }), 'close')
  t.deepEqual(result, { extensions: 'permessage-deflate', closeCode: 1009 })
  t.deepEqual(errors.map((e) => e.code), ['ERR_WS_MESSAGE_TOO_LARGE'])
})

test.serial('ws-echo accepts permessage-deflate when a client offers it', async (t) => {
  const ex = await startExample(t, 'ws-echo')
  const ws = await open(ex.port)
  t.teardown(() => ws.terminate())
  t.is(ws.answer, 'permessage-deflate')
  const large = words(50_000)
  ws.send(large)
  t.is((await next(ws)).data.toString(), large)
  ws.close()
})

/** A Python that has `websockets`, or undefined. */
function pythonWithWebsockets(): string | undefined {
  return ['python3', '/usr/bin/python3'].find((py) => spawnSync(py, ['-c', 'import websockets'], { stdio: 'ignore' }).status === 0)
}

const PYTHON_PEER = `
import asyncio, json, sys
import websockets
async def main(port):
    async with websockets.connect(f"ws://127.0.0.1:{port}/", max_size=None) as ws:
        ext = ws.response.headers.get("Sec-WebSocket-Extensions") if hasattr(ws, "response") and ws.response is not None else ws.response_headers.get("Sec-WebSocket-Extensions")
        text = " ".join(["alpha", "beta", "gamma", "delta"] * 50000)
        await ws.send(text)
        back = await ws.recv()
        await ws.send(b"\\x00\\x01" * 3000)
        back_bin = await ws.recv()
        print(json.dumps({"extensions": ext, "text": back == text, "binary": back_bin == b"\\x00\\x01" * 3000}))
asyncio.run(main(int(sys.argv[1])))
`

test('Python’s websockets client offers permessage-deflate by default and gets its messages back', async (t) => {
  const python = pythonWithWebsockets()
  if (!python) {
    const uninstallable = process.env.NETLOOP_UNINSTALLABLE_CLIENTS ?? ''
    if (process.env.CI && !uninstallable.includes('python3-websockets')) t.fail('CI: no Python with websockets, and .ci/run did not say it could not install it')
    else t.log('skipped: no Python with websockets (apt-get install python3-websockets)')
    t.pass()
    return
  }
  const { port, errors } = await echoServer(t, { perMessageDeflate: true })
  const out = await within(20_000, new Promise<string>((resolve, reject) => {
    const child = spawn(python, ['-c', PYTHON_PEER, String(port)])
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d))
    child.stderr.on('data', (d: Buffer) => (stderr += d))
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`python exited ${code}: ${stderr}`))))
  }), 'python peer')
  const result = JSON.parse(out) as { extensions: string; text: boolean; binary: boolean }
  t.true(result.extensions.startsWith('permessage-deflate'), result.extensions)
  t.true(result.text && result.binary)
  t.deepEqual(errors, [])
})
