import test from 'ava'
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import * as net from 'node:net'
import { join } from 'node:path'

import { assertLibraryBuilt, root } from './example-helpers'
import { until } from './helpers'
import { keptAliveGet } from './http-helpers'

/** Starts an example under tsx with PORT=0; resolves with the port it printed. */
async function start(t: { teardown(fn: () => unknown): void }, file: string, env: Record<string, string> = {}): Promise<number> {
  assertLibraryBuilt()
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(root, file)], { env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => child.kill('SIGKILL'))
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  await until(() => /listening on 127\.0\.0\.1:(\d+)/.test(out), 20_000)
  return Number(/listening on 127\.0\.0\.1:(\d+)/.exec(out)![1])
}

test('the guide shows its examples verbatim', (t) => {
  const guide = readFileSync(join(root, 'docs', 'guide.md'), 'utf8')
  for (const f of ['first-server.mts', 'mixed-pipeline.mts', 'tls-server.mts', 'node-http.mts', 'websocket.mts', 'http-client.mts', 'static-files.mts']) {
    const code = readFileSync(join(root, 'examples', 'guide', f), 'utf8')
    t.true(guide.includes(code), `docs/guide.md does not contain examples/guide/${f}`)
  }
})

test('the pipeline event-flow diagram is drawn once: the guide shows the one at the top of src/pipeline.ts', (t) => {
  const guide = readFileSync(join(root, 'docs', 'guide.md'), 'utf8')
  const header = readFileSync(join(root, 'src', 'pipeline.ts'), 'utf8').split(' * Ground rules:')[0]
  const lines = header.split('\n')
  const from = lines.findIndex((l) => l.startsWith(' * Event flow')) + 2
  const diagram = lines
    .slice(from, lines.length - 2)
    .map((l) => l.replace(/^ \* ?/, ''))
    .join('\n')
  t.true(diagram.includes('══'), 'the diagram marks where the boundary is crossed')
  t.true(guide.includes('```text\n' + diagram + '\n```'), 'docs/guide.md does not show the diagram of src/pipeline.ts')
})

test('guide: the first server greets and shouts back', async (t) => {
  const port = await start(t, 'examples/guide/first-server.mts')
  const s = net.connect(port, '127.0.0.1')
  let got = ''
  s.on('data', (d) => (got += d))
  s.write('quiet please\n')
  await until(() => got.includes('QUIET PLEASE'))
  t.is(got, 'hello, shout at me\nQUIET PLEASE\n')
  s.destroy()
})

test('guide: the mixed pipeline answers length-prefixed JSON and reports bad frames', async (t) => {
  const port = await start(t, 'examples/guide/mixed-pipeline.mts')
  const s = net.connect(port, '127.0.0.1')
  const frame = (v: string) => {
    const body = Buffer.from(v)
    const head = Buffer.alloc(4)
    head.writeUInt32BE(body.length)
    return Buffer.concat([head, body])
  }
  let buf = Buffer.alloc(0)
  const replies: unknown[] = []
  s.on('data', (d) => {
    buf = Buffer.concat([buf, d])
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
      replies.push(JSON.parse(buf.subarray(4, 4 + buf.readUInt32BE(0)).toString()))
      buf = buf.subarray(4 + buf.readUInt32BE(0))
    }
  })
  s.write(Buffer.concat([frame(JSON.stringify({ op: 'add', a: 2, b: 40 })), frame('{not json'), frame(JSON.stringify({ op: 'mul', a: 1, b: 1 }))]))
  await until(() => replies.length === 3)
  t.deepEqual(replies[0], { ok: true, sum: 42 })
  t.is((replies[1] as { ok: boolean }).ok, false)
  t.deepEqual(replies[2], { ok: false, error: 'unknown op mul' })
  s.destroy()
})

test('guide: the TLS server greets over TLS 1.3 with its ALPN protocol and shouts back', async (t) => {
  const { certsDir } = await import('./tls-helpers')
  const tls = await import('node:tls')
  const port = await start(t, 'examples/guide/tls-server.mts', { CERTS_DIR: certsDir() })
  const s = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: readFileSync(join(certsDir(), 'ca.pem')), ALPNProtocols: ['greeting/1'] })
  t.teardown(() => s.destroy())
  let got = ''
  s.on('data', (d) => (got += d))
  await until(() => got.includes('\n'))
  s.write('quiet please\n')
  await until(() => got.includes('QUIET PLEASE'))
  t.is(got, 'hello over TLSv1.3 (greeting/1)\nQUIET PLEASE\n')
})

test('guide: node:http on netloop channels answers a keep-alive client and counts an upload', async (t) => {
  const http = await import('node:http')
  const port = await start(t, 'examples/guide/node-http.mts')
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const sockets = new Set<unknown>()
  const request = (method: string, path: string, body?: Buffer) =>
    new Promise<string>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path, agent }, (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () => resolve(text))
      })
      req.on('socket', (s) => sockets.add(s))
      req.on('error', reject)
      req.end(body)
    })
  t.is(await request('GET', '/hello'), 'GET /hello: 0 bytes from 127.0.0.1\n')
  t.is(await request('POST', '/upload', Buffer.alloc(3 << 20, 1)), `POST /upload: ${3 << 20} bytes from 127.0.0.1\n`)
  t.is(sockets.size, 1, 'both requests went over one kept-alive connection')
})

test('guide: the static file server sends its directory\'s files whole, and 404 for missing files and escapes', async (t) => {
  const port = await start(t, 'examples/guide/static-files.mts')
  const get = await keptAliveGet(t, port)
  const own = readFileSync(join(root, 'examples', 'guide', 'static-files.mts'))
  const got = await get('/static-files.mts')
  t.is(got.status, 200)
  t.true(got.body.equals(own))
  const head = await get('/static-files.mts', 'HEAD')
  t.is(head.length, String(own.length))
  t.is(head.body.length, 0)
  t.is((await get('/missing.txt')).status, 404)
  t.is((await get('/%2e%2e/%2e%2e/package.json')).status, 404)
  t.is((await get('/')).status, 404)
  t.true(readFileSync(join(root, 'examples', 'guide', 'first-server.mts')).equals((await get('/first-server.mts')).body))
})

test('guide: WebSocket behind the native HTTP codec echoes over ws, plain HTTP still answered', async (t) => {
  const { default: WebSocket } = await import('ws')
  const port = await start(t, 'examples/guide/websocket.mts')
  const plain = await fetch(`http://127.0.0.1:${port}/`)
  t.is(await plain.text(), 'try ws://\n')
  const ws = new WebSocket(`ws://127.0.0.1:${port}/echo`)
  t.teardown(() => ws.terminate())
  const messages: string[] = []
  ws.on('message', (d) => messages.push(String(d)))
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  ws.send('round trip')
  await until(() => messages.length === 2)
  t.deepEqual(messages, ['hello 127.0.0.1', 'round trip'], "the greeting reads req.socket's address")
})

test('guide: the HTTP client pipelines GETs on one connection and prints each response in order', async (t) => {
  const http = await import('node:http')
  const { once } = await import('node:events')
  const { execFile } = await import('node:child_process')
  const connections = new Set<unknown>()
  const server = http.createServer((req, res) => {
    connections.add(req.socket)
    res.setHeader('content-type', req.url === '/big' ? 'application/octet-stream' : 'text/plain')
    res.end(req.url === '/big' ? Buffer.alloc(200_000, 1) : `page ${req.url}`)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const port = (server.address() as net.AddressInfo).port
  const out = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['--import', 'tsx', join(root, 'examples/guide/http-client.mts'), '127.0.0.1', String(port), '/a', '/big', '/c'], { timeout: 30_000 }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    ),
  )
  t.is(out, '200 OK text/plain 7 bytes\n200 OK application/octet-stream 200000 bytes\n200 OK text/plain 7 bytes\n')
  t.is(connections.size, 1)
})
