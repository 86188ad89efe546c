// The native HTTP client codec from TypeScript, exchanging with node:http and the native server
// codec: keep-alive, pipelining, bodies (chunked, aggregated, streamed, close-delimited), HEAD,
// interim responses. TLS, upgrades and failures: http-client-edges.spec.ts.
import test from 'ava'
import * as net from 'node:net'
import { createHash } from 'node:crypto'
import { HttpClientRequest, HttpContent, HttpResponse, HttpServerCodec } from '../index'
import { loopFor, pattern, serve, until } from './channel-helpers'
import { client, nodeServer, rawServer } from './http-client-helpers'

test('keep-alive: three requests on one connection to node:http, each answered whole', async (t) => {
  const sockets = new Set<net.Socket>()
  const { port } = await nodeServer(t, (req, res) => {
    sockets.add(req.socket)
    res.setHeader('x-path', req.url!)
    res.setHeader('set-cookie', ['a=1', 'b=2'])
    res.end(`hello ${req.url} from ${req.headers.host}`)
  })
  const { ch, seen } = await client(t, port, { host: `127.0.0.1:${port}` })
  for (const path of ['/a', '/b?q=1', '/c']) {
    await ch.writeAndFlush(new HttpClientRequest('GET', path), ch.newPromise())
    await until(() => seen.responses.length === ['/a', '/b?q=1', '/c'].indexOf(path) + 1)
  }
  t.deepEqual(
    seen.responses.map((r) => [r.id, r.statusCode, r.statusMessage, r.httpVersion, r.keepAlive, r.body.toString()]),
    [
      [0, 200, 'OK', '1.1', true, `hello /a from 127.0.0.1:${port}`],
      [1, 200, 'OK', '1.1', true, `hello /b?q=1 from 127.0.0.1:${port}`],
      [2, 200, 'OK', '1.1', true, `hello /c from 127.0.0.1:${port}`],
    ],
  )
  const r = seen.responses[1]
  t.is(r.header('X-Path'), '/b?q=1')
  t.deepEqual(r.headers['set-cookie'], ['a=1', 'b=2'])
  t.is(r.headers['content-length'], String(r.body.length))
  t.true(r.rawHeaders.includes('x-path'))
  t.is(sockets.size, 1, 'one connection for the three')
  t.deepEqual(seen.errors, [])
})

test('pipelined requests are answered in request order, each naming its request', async (t) => {
  const { port } = await nodeServer(t, (req, res) => {
    // The first answer is the slowest: order must still hold.
    setTimeout(() => res.end(`#${req.url}`), req.url === '/0' ? 30 : 0)
  })
  const { ch, seen } = await client(t, port, { host: 'localhost' })
  for (let i = 0; i < 20; i++) ch.write(new HttpClientRequest('GET', `/${i}`))
  ch.flush()
  await until(() => seen.responses.length === 20)
  t.deepEqual(
    seen.responses.map((r) => `${r.id}${r.body.toString()}`),
    Array.from({ length: 20 }, (_, i) => `${i}#/${i}`),
  )
})

test('a chunked response is aggregated, and a body above aggregateLimit streams as HttpContent', async (t) => {
  const big = pattern(300_000, 7)
  const { port } = await nodeServer(t, (req, res) => {
    res.setHeader('trailer', 'x-sum')
    const body = req.url === '/big' ? big : Buffer.from('small body')
    // Several writes: chunked, pieces of various sizes.
    for (let at = 0; at < body.length; at += 40_000) res.write(body.subarray(at, at + 40_000))
    res.addTrailers({ 'x-sum': createHash('sha256').update(body).digest('hex') })
    res.end()
  })
  const { ch, seen } = await client(t, port, { host: 'localhost' })
  ch.write(new HttpClientRequest('GET', '/small'))
  await ch.writeAndFlush(new HttpClientRequest('GET', '/big'), ch.newPromise())
  await until(() => seen.contents.some((c) => c.last))
  const [small, large] = seen.responses
  t.is(small.body.toString(), 'small body')
  t.false(small.streaming)
  t.is(small.headers['transfer-encoding'], 'chunked')
  t.is(small.trailers['x-sum'], createHash('sha256').update('small body').digest('hex'))
  t.true(large.streaming)
  t.is(large.body.length, 0)
  t.true(seen.contents.every((c) => c.requestId === 1))
  const got = Buffer.concat(seen.contents.map((c) => c.data))
  t.is(got.length, big.length)
  t.true(got.equals(big))
  t.true(seen.contents.length > 1, 'delivered in pieces')
})

test('a POST body and a streamed (chunked) request body reach node:http whole', async (t) => {
  const { port } = await nodeServer(t, async (req, res) => {
    const parts: Buffer[] = []
    for await (const p of req) parts.push(p as Buffer)
    const body = Buffer.concat(parts)
    res.end(`${req.method} ${req.headers['content-length'] ?? '-'} ${req.headers['transfer-encoding'] ?? '-'} ${createHash('sha256').update(body).digest('hex')}`)
  })
  const { ch, seen } = await client(t, port, { host: 'localhost' })
  const upload = pattern(200_000, 3)
  ch.write(new HttpClientRequest('POST', '/whole', { 'content-type': 'application/octet-stream' }, upload))
  ch.write(new HttpClientRequest('PUT', '/empty'))
  ch.write(new HttpClientRequest('POST', '/stream').streamed())
  for (let at = 0; at < upload.length; at += 50_000) ch.write(new HttpContent(upload.subarray(at, at + 50_000)))
  await ch.writeAndFlush(new HttpContent(Buffer.alloc(0), true), ch.newPromise())
  await until(() => seen.responses.length === 3)
  const sum = createHash('sha256').update(upload).digest('hex')
  const empty = createHash('sha256').update('').digest('hex')
  t.deepEqual(
    seen.responses.map((r) => r.body.toString()),
    [`POST 200000 - ${sum}`, `PUT 0 - ${empty}`, `POST - chunked ${sum}`],
  )
})

test('HEAD is answered without a body even with a Content-Length, and the next response still parses', async (t) => {
  const { port } = await nodeServer(t, (req, res) => {
    res.setHeader('content-length', '5')
    res.end(req.method === 'HEAD' ? undefined : 'hello')
  })
  const { ch, seen } = await client(t, port, { host: 'localhost' })
  ch.write(new HttpClientRequest('HEAD', '/'))
  await ch.writeAndFlush(new HttpClientRequest('GET', '/'), ch.newPromise())
  await until(() => seen.responses.length === 2)
  t.deepEqual(
    seen.responses.map((r) => [r.statusCode, r.headers['content-length'], r.body.toString()]),
    [
      [200, '5', ''],
      [200, '5', 'hello'],
    ],
  )
})

test('interim 100 Continue comes first as an informational response of the same request', async (t) => {
  const port = await rawServer(t, (s, got) => {
    if (got().endsWith('\r\n\r\n')) s.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n')
  })
  const { ch, seen } = await client(t, port, { host: 'localhost' })
  await ch.writeAndFlush(new HttpClientRequest('GET', '/'), ch.newPromise())
  await until(() => seen.responses.length === 2)
  t.deepEqual(
    seen.responses.map((r) => [r.id, r.statusCode, r.informational, r.keepAlive]),
    [
      [0, 100, true, true],
      [0, 204, false, true],
    ],
  )
})

test('a body that ends with the connection (no framing, HTTP/1.0) is delivered at the close', async (t) => {
  const port = await rawServer(t, (s, got) => {
    if (!got().endsWith('\r\n\r\n')) return
    s.write('HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil ')
    setTimeout(() => s.end('the end'), 20)
  })
  const { ch, seen } = await client(t, port)
  const req = new HttpClientRequest('GET', '/', { host: 'x' })
  req.httpVersion = '1.0'
  await ch.writeAndFlush(req, ch.newPromise())
  await until(() => seen.responses.length === 1 && seen.closed)
  const r = seen.responses[0]
  t.is(r.httpVersion, '1.0')
  t.false(r.keepAlive)
  t.is(r.body.toString(), 'until the end')
  t.deepEqual(seen.errors, [])
})

for (const [what, reply, code] of [
  ['differing Content-Length fields', 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy', 'HPE_UNEXPECTED_CONTENT_LENGTH'],
  ['a bad chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n', 'HPE_INVALID_CHUNK_SIZE'],
  ['a status line that is not HTTP', 'SSH-2.0-OpenSSH_9.2\r\n\r\n', undefined],
] as const) {
  test(`a response with ${what} reaches exceptionCaught with its code and closes the connection`, async (t) => {
    const port = await rawServer(t, (s, got) => {
      if (got().endsWith('\r\n\r\n')) s.write(reply)
    })
    const { ch, seen } = await client(t, port, { host: 'localhost' })
    await ch.writeAndFlush(new HttpClientRequest('GET', '/'), ch.newPromise())
    await until(() => seen.closed)
    t.is(seen.errors.length, 1)
    if (code) t.is(seen.errors[0].code, code)
    else t.regex(seen.errors[0].code ?? '', /^HPE_/)
    t.deepEqual(seen.responses, [], 'nothing of it delivered')
  })
}

test('native on both sides: 1,000 pipelined requests to HttpServerCodec, answered in order', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
      channelRead: (ctx, req: { url: string; body: Buffer }) => ctx.write(new HttpResponse(200, { 'content-type': 'text/plain' }, `${req.url}:${req.body.length}`)),
      channelReadComplete: (ctx) => ctx.flush(),
    })
  })
  const { ch, seen } = await client(t, port, { host: 'localhost' })
  for (let i = 0; i < 1000; i++) ch.write(i % 2 ? new HttpClientRequest('POST', `/${i}`, {}, pattern(i, i)) : new HttpClientRequest('GET', `/${i}`))
  ch.flush()
  await until(() => seen.responses.length === 1000, 20_000)
  t.true(seen.responses.every((r, i) => r.id === i && r.body.toString() === `/${i}:${i % 2 ? i : 0}`))
  t.true(seen.responses.every((r) => typeof r.headers.date === 'string'))
})
