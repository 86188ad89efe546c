import test from 'ava'
import * as net from 'node:net'
import { once } from 'node:events'
import { HttpContent, HttpRequest, HttpResponse, HttpServerCodec, type ChannelHandler } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { has, run } from './example-helpers'

function app(seen: HttpRequest[]): ChannelHandler {
  return {
    channelRead: (ctx, req: HttpRequest | HttpContent) => {
      if (!(req instanceof HttpRequest)) return
      seen.push(req)
      const body = `${req.method} ${req.url} ${req.httpVersion} host=${req.header('host')} body=${req.body.length}`
      ctx.write(new HttpResponse(200, { 'content-type': 'text/plain', 'x-id': String(req.id) }, body))
    },
    channelReadComplete: (ctx) => ctx.flush(),
    exceptionCaught: () => {},
  }
}

async function rawClient(port: number) {
  const s = net.connect(port, '127.0.0.1')
  await once(s, 'connect')
  let out = ''
  s.on('data', (d) => (out += d.toString('latin1')))
  return { s, got: () => out }
}

test('requests reach JS parsed natively; responses are framed natively and pipelined in order', async (t) => {
  const loop = loopFor(t)
  const seen: HttpRequest[] = []
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', app(seen)))
  const { s, got } = await rawClient(port)
  t.teardown(() => s.destroy())
  s.write('GET /a?x=1 HTTP/1.1\r\nHost: h\r\nX-Multi: 1\r\nx-multi: 2\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloHEAD /c HTTP/1.1\r\nHost: h\r\n\r\n')
  await until(() => (got().match(/HTTP\/1\.1 200 OK/g) ?? []).length === 3)
  const responses = got().split(/(?=HTTP\/1\.1 )/)
  t.regex(responses[0], new RegExp(`content-length: ${'GET /a?x=1 1.1 host=h body=0'.length}\r\n`, 'i'))
  t.regex(responses[0], /\r\n\r\nGET \/a\?x=1 1\.1 host=h body=0$/)
  t.regex(responses[1], /\r\n\r\nPOST \/b 1\.1 host=h body=5$/)
  t.regex(responses[2], new RegExp(`content-length: ${'HEAD /c 1.1 host=h body=0'.length}\r\n`, 'i'), 'HEAD keeps the length of the body it does not send')
  t.regex(responses[2], /\r\n\r\n$/)
  t.regex(responses[0], /\r\ndate: /i, 'a Date header is added')
  t.is(seen[0].headers['x-multi'], '1, 2')
  t.deepEqual(seen[0].rawHeaders.slice(0, 2), ['Host', 'h'])
  t.is(String(seen[1].body), 'hello')
  t.true(seen[0].keepAlive)
})

test('a smuggling attempt is refused natively with 400 and the connection closes', async (t) => {
  const loop = loopFor(t)
  const seen: HttpRequest[] = []
  const errors: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', { ...app(seen), exceptionCaught: (_c, e) => void errors.push((e as { code: string }).code) }),
  )
  const { s, got } = await rawClient(port)
  s.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')
  await once(s, 'close')
  t.regex(got(), /^HTTP\/1\.1 400 /)
  t.is(seen.length, 0)
  await until(() => errors.length > 0)
  t.truthy(errors[0])
})

test('a client that sends half a head then waits gets 408 Request Timeout and the close (headerTimeout)', async (t) => {
  const loop = loopFor(t)
  const seen: HttpRequest[] = []
  const errors: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline
      .addLast('http', new HttpServerCodec({ headerTimeout: 300 }))
      .addLast('app', { ...app(seen), exceptionCaught: (_c, e) => void errors.push((e as { code: string }).code) }),
  )
  const { s, got } = await rawClient(port)
  t.teardown(() => s.destroy())
  const start = Date.now()
  s.write('GET / HTTP/1.1\r\nHost: h\r\n')
  await once(s, 'close')
  t.true(Date.now() - start >= 250, `closed after ${Date.now() - start} ms`)
  t.regex(got(), /^HTTP\/1\.1 408 Request Timeout\r\n/)
  t.regex(got(), /\r\nconnection: close\r\n/i)
  t.is(seen.length, 0)
  await until(() => errors.length > 0)
  t.deepEqual(errors, ['ERR_HTTP_REQUEST_TIMEOUT'])
})

test('headerTimeout 0 turns the request-head timeout off', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('http', new HttpServerCodec({ headerTimeout: 0 })).addLast('app', app([])))
  const { s, got } = await rawClient(port)
  t.teardown(() => s.destroy())
  s.write('GET / HTTP/1.1\r\n')
  // an absence is only seen by waiting: 500 ms, longer than the 300 ms timeout above needs
  await new Promise((r) => setTimeout(r, 500))
  t.is(got(), '')
  s.write('Host: h\r\n\r\n')
  await until(() => got().includes('200 OK'))
  t.pass()
})

test('HTTP/1.0 closes after the response; Connection: close too', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', app([])))
  const a = await rawClient(port)
  a.s.write('GET / HTTP/1.0\r\n\r\n')
  await once(a.s, 'close')
  t.regex(a.got(), /^HTTP\/1\.1 200 OK\r\n[^]*connection: close\r\n/i) // node:http answers 1.0 with 1.1 too
  const b = await rawClient(port)
  b.s.write('GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n')
  await once(b.s, 'close')
  t.regex(b.got(), /connection: close/i)
})

test('a streamed response goes out chunked, and curl reads it with keep-alive', async (t) => {
  if (!has(t, 'curl')) return
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
      channelRead: (ctx, req: HttpRequest) => {
        if (req.url === '/stream') {
          ctx.write(new HttpResponse(200, { 'content-type': 'text/plain' }).streamed())
          ctx.write(new HttpContent(Buffer.from('part1,')))
          ctx.write(new HttpContent(Buffer.from('part2'), true))
        } else ctx.write(new HttpResponse(200, {}, 'plain'))
      },
      channelReadComplete: (ctx) => ctx.flush(),
    }),
  )
  const url = `http://127.0.0.1:${port}`
  const { stdout, stderr } = await run('curl', ['-sv', `${url}/stream`, `${url}/x`])
  t.is(stdout, 'part1,part2plain')
  t.regex(stderr, /transfer-encoding: chunked/i)
  t.regex(stderr, /Re-using existing connection/)
})

test('HttpServerCodec and HttpResponse check their arguments', (t) => {
  t.throws(() => new HttpServerCodec({ maxHeadSize: 1 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new HttpServerCodec({ headerTimeout: -1 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new HttpResponse(42), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new HttpResponse(200, {}, 5 as never), { code: 'ERR_INVALID_ARG_TYPE' })
})

test('a frozen response is framed per request like the same response unfrozen (keep-alive, HEAD, HTTP/1.0, Connection: close)', async (t) => {
  const loop = loopFor(t)
  const headers: Array<[string, string]> = [['Content-Type', 'text/plain'], ['Connection', 'keep-alive']]
  const frozen = new HttpResponse(200, headers, 'hello').freeze()
  const serveWith = (pick: () => HttpResponse) =>
    serve(t, loop, (ch) =>
      void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
        channelRead: (ctx, req: HttpRequest) => void (req instanceof HttpRequest && ctx.write(pick())),
        channelReadComplete: (ctx) => ctx.flush(),
      }),
    )
  const a = await serveWith(() => frozen)
  const b = await serveWith(() => new HttpResponse(200, headers, 'hello'))
  const requests = [
    'GET / HTTP/1.1\r\nHost: h\r\n\r\nHEAD / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n',
    'GET / HTTP/1.0\r\n\r\n',
    'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n',
  ]
  const withoutDate = (s: string) => s.replace(/\r\ndate: [^\r]*/gi, '')
  for (const text of requests) {
    const answers: string[] = []
    for (const { port } of [a, b]) {
      const c = await rawClient(port)
      c.s.write(text)
      if (text.includes('close') || text.endsWith('HTTP/1.0\r\n\r\n')) await once(c.s, 'close')
      else await until(() => (c.got().match(/HTTP\/1\.1 200/g) ?? []).length === 3)
      c.s.destroy()
      answers.push(withoutDate(c.got()))
    }
    t.is(answers[0], answers[1], JSON.stringify(text))
  }
  t.true(frozen.frozen)
  t.true(Object.isFrozen(frozen))
})

test('a frozen response written and flushed at once arrives whole and completes its promise, alone in a read or pipelined', async (t) => {
  const loop = loopFor(t)
  const frozen = new HttpResponse(200, [['Content-Type', 'text/plain']], 'fused').freeze()
  const outcomes: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
      channelRead: (ctx, req: HttpRequest) => {
        if (!(req instanceof HttpRequest)) return
        const p = ctx.newPromise()
        p.addListener((e) => void outcomes.push(`${req.url}:${e ? (e as { code: string }).code : 'ok'}`))
        ctx.writeAndFlush(frozen, p)
      },
    }),
  )
  const one = await rawClient(port)
  one.s.write('GET /a HTTP/1.1\r\nHost: h\r\n\r\n')
  await until(() => one.got().endsWith('fused'))
  await until(() => outcomes.length === 1)
  t.deepEqual(outcomes, ['/a:ok'])
  t.regex(one.got(), /^HTTP\/1\.1 200 OK\r\n/)
  t.regex(one.got(), /\r\ncontent-length: 5\r\n/i)
  one.s.write('GET /b HTTP/1.1\r\nHost: h\r\n\r\nGET /c HTTP/1.1\r\nHost: h\r\n\r\n')
  await until(() => (one.got().match(/fused/g) ?? []).length === 3)
  await until(() => outcomes.length === 3)
  t.deepEqual(outcomes, ['/a:ok', '/b:ok', '/c:ok'])
  t.is(one.got().split('HTTP/1.1 200 OK').length - 1, 3, 'three whole responses, in order')
  one.s.destroy()
})

test('freeze() checks the response at once; a frozen response cannot be changed or streamed', (t) => {
  t.throws(() => new HttpResponse(200, [['Bad Name', 'x']]).freeze(), { code: 'ERR_INVALID_HTTP_TOKEN' })
  t.throws(() => new HttpResponse(200, [['X', 'a\r\nSet-Cookie: evil']]).freeze(), { code: 'ERR_INVALID_CHAR' })
  t.throws(() => new HttpResponse(200).streamed().freeze(), { code: 'ERR_HTTP_FROZEN_STREAMING' })
  const frozen = new HttpResponse(200, {}, 'x').freeze()
  t.is(frozen.freeze(), frozen, 'freezing again is a no-op')
  t.throws(() => frozen.streamed(), { code: 'ERR_HTTP_FROZEN' })
  t.throws(() => frozen.forRequest({ id: 1 } as HttpRequest), { code: 'ERR_HTTP_FROZEN' })
})

test('a frozen response whose Content-Length does not match its body fails the write, except for HEAD', async (t) => {
  const loop = loopFor(t)
  const wrong = new HttpResponse(200, { 'content-length': '99' }, 'short').freeze()
  const failures: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
      channelRead: (ctx, req: HttpRequest) => {
        if (!(req instanceof HttpRequest)) return
        const p = ctx.newPromise()
        p.addListener((e) => void (e && failures.push((e as { code: string }).code)))
        ctx.write(wrong, p)
        if (req.method !== 'HEAD') ctx.write(new HttpResponse(500, {}, 'fallback'))
      },
      channelReadComplete: (ctx) => ctx.flush(),
    }),
  )
  const c = await rawClient(port)
  t.teardown(() => c.s.destroy())
  c.s.write('HEAD / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n')
  await until(() => /fallback$/.test(c.got()))
  t.regex(c.got(), /^HTTP\/1\.1 200 OK\r\n[^]*content-length: 99\r\n/i, 'HEAD: the length of what a GET would get')
  t.regex(c.got(), /HTTP\/1\.1 500 /)
  t.deepEqual(failures, ['ERR_HTTP_CONTENT_LENGTH_MISMATCH'])
})

test('large bodies leave JS without a copy into the layout and arrive intact, whole and streamed, pipelined', async (t) => {
  const http = await import('node:http')
  const { createHash } = await import('node:crypto')
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')
  const loop = loopFor(t)
  const big = Buffer.alloc(1 << 20)
  for (let i = 0; i < big.length; i++) big[i] = (i * 7 + 3) & 0xff
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
      channelRead: (ctx, req: HttpRequest) => {
        if (req.url === '/streamed') {
          ctx.write(new HttpResponse(200).streamed())
          ctx.write(new HttpContent(big.subarray(0, 300_000)))
          ctx.write(new HttpContent(big.subarray(300_000, 300_100)))
          ctx.writeAndFlush(new HttpContent(big.subarray(300_100), true))
        } else ctx.writeAndFlush(new HttpResponse(200, {}, big))
      },
    }),
  )
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const get = (path: string) =>
    new Promise<Buffer>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path, agent }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (d) => chunks.push(d))
          res.on('end', () => resolve(Buffer.concat(chunks)))
        })
        .on('error', reject)
    })
  const bodies = await Promise.all(['/a', '/streamed', '/b', '/streamed', '/c'].map(get))
  for (const b of bodies) t.is(sha(b), sha(big))
})
