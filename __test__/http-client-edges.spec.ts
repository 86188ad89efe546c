// The native HTTP client codec from TypeScript at its edges: behind an SslHandler (node:https,
// openssl s_server), upgrades, connections that end early, bad arguments, early refusals.
import test from 'ava'
import * as http from 'node:http'
import * as https from 'node:https'
import * as net from 'node:net'
import { HttpClientCodec, HttpClientRequest, NetloopError } from '../index'
import { until } from './channel-helpers'
import { opensslServer, pem } from './tls-helpers'
import { listenNode } from './http-helpers'
import { client, nodeServer, rawServer } from './http-client-helpers'

test('a connection that ends inside a Content-Length body reports ECONNRESET', async (t) => {
  const port = await rawServer(t, (s, got) => {
    if (got().endsWith('\r\n\r\n')) s.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part')
  })
  const { ch, seen } = await client(t, port, { host: 'localhost' })
  await ch.writeAndFlush(new HttpClientRequest('GET', '/'), ch.newPromise())
  await until(() => seen.closed && seen.errors.length > 0)
  t.is(seen.errors[0].code, 'ECONNRESET')
  t.deepEqual(seen.responses, [])
})

test('behind an SslHandler the codec talks HTTPS to node:https', async (t) => {
  const server = https.createServer({ cert: pem('server.pem'), key: pem('server.key') }, (req, res) => res.end(`secure ${req.url}`))
  const { ch, seen } = await client(t, await listenNode(t, server), { host: 'localhost' }, true)
  await ch.writeAndFlush(new HttpClientRequest('GET', '/tls'), ch.newPromise())
  await until(() => seen.responses.length === 1)
  t.is(seen.responses[0].body.toString(), 'secure /tls')
  t.is(ch.tls?.protocol, 'TLSv1.3')
})

test('openssl s_server -www: its HTTP/1.0 page, ended by the close, over TLS 1.2', async (t) => {
  const port = await opensslServer(t, ['-tls1_2', '-www'])
  const { ch, seen } = await client(t, port, { host: 'localhost' }, true)
  await ch.writeAndFlush(new HttpClientRequest('GET', '/'), ch.newPromise())
  await until(() => seen.responses.length === 1 && seen.closed)
  const r = seen.responses[0]
  t.is(r.statusCode, 200)
  t.is(r.httpVersion, '1.0')
  t.false(r.keepAlive)
  t.regex(r.header('content-type') ?? '', /text\/html/)
  t.regex(r.body.toString(), /Protocol +: TLSv1\.2/)
  t.deepEqual(seen.errors, [])
})

test('101 Switching Protocols: the response says upgraded, then bytes pass through both ways', async (t) => {
  const { server, port } = await nodeServer(t, (_req, res) => res.end('no'))
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket) => {
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${req.headers.upgrade}\r\n\r\nfirst`)
    socket.on('data', (d) => socket.write(Buffer.concat([Buffer.from('echo:'), d])))
  })
  const { ch, seen } = await client(t, port, { host: 'localhost' })
  await ch.writeAndFlush(new HttpClientRequest('GET', '/up', { connection: 'Upgrade', upgrade: 'echo/1' }), ch.newPromise())
  await until(() => seen.responses.length === 1 && seen.raw.length > 0)
  t.true(seen.responses[0].upgraded)
  t.is(seen.responses[0].statusCode, 101)
  await ch.writeAndFlush(Buffer.from('GET / HTTP/1.1\r\n\r\n'), ch.newPromise())
  await until(() => Buffer.concat(seen.raw).toString().includes('echo:'))
  t.is(Buffer.concat(seen.raw).toString(), 'firstecho:GET / HTTP/1.1\r\n\r\n', 'nothing after the switch is parsed as HTTP')
})

test('bad arguments throw NetloopErrors; a request the codec cannot encode fails only its own write', async (t) => {
  t.throws(() => new HttpClientCodec({ maxHeadSize: -1 }), { instanceOf: NetloopError, code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new HttpClientCodec({ host: 42 as unknown as string }), { instanceOf: NetloopError, code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => new HttpClientRequest(1 as unknown as string, '/'), { instanceOf: NetloopError, code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => new HttpClientRequest('GET', '/a b'), { instanceOf: NetloopError, code: 'ERR_UNESCAPED_CHARACTERS' })
  t.throws(() => new HttpClientRequest('GET', '/', {}, 5 as unknown as string), { instanceOf: NetloopError, code: 'ERR_INVALID_ARG_TYPE' })
  const { port } = await nodeServer(t, (req, res) => res.end(`ok ${req.url}`))
  const { ch, seen } = await client(t, port, { host: 'localhost' })
  const bad = ch.writeAndFlush(new HttpClientRequest('GE T', '/'), ch.newPromise())
  const badHeader = ch.writeAndFlush(new HttpClientRequest('GET', '/', { 'x-a': 'line\r\nbreak' }), ch.newPromise())
  await t.throwsAsync(bad, { code: 'ERR_INVALID_HTTP_TOKEN' })
  await t.throwsAsync(badHeader, { code: 'ERR_INVALID_CHAR' })
  await ch.writeAndFlush(new HttpClientRequest('GET', '/fine'), ch.newPromise())
  await until(() => seen.responses.length === 1)
  t.is(seen.responses[0].body.toString(), 'ok /fine')
  t.is(seen.responses[0].id, 2, 'every request written takes a number, a refused one too')
})

test('a server that refuses an upload early: the client reads its 413 before the failed write closes', async (t) => {
  // node:http answers at once and closes with the upload unread (a reset), as many servers do;
  // the 413 is in the client's socket before its writes fail.
  const { port } = await nodeServer(t, (_req, res) => {
    res.writeHead(413, { connection: 'close' })
    res.end('too large')
  })
  for (let i = 0; i < 3; i++) {
    const { ch, seen } = await client(t, port, { host: 'x' })
    ch.writeAndFlush(new HttpClientRequest('POST', '/up', { 'content-length': String(50e6) }, Buffer.alloc(50e6)))
    await until(() => seen.closed, 10_000)
    t.deepEqual(seen.responses.map((r) => [r.statusCode, r.body.toString()]), [[413, 'too large']])
  }
})
