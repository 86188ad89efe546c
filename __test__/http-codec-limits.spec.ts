import test from 'ava'
import * as net from 'node:net'
import { once } from 'node:events'
import { HttpRequest, HttpResponse, HttpServerCodec, type ChannelHandlerContext } from '../index'
import { loopFor, serve, until } from './channel-helpers'

async function rawClient(port: number) {
  const s = net.connect(port, '127.0.0.1')
  await once(s, 'connect')
  let out = ''
  s.on('data', (d) => (out += d.toString('latin1')))
  return { s, got: () => out }
}

const okCount = (text: string) => (text.match(/HTTP\/1\.1 200 OK/g) ?? []).length

test('maxPipelinedRequests: requests beyond the limit wait unread until responses complete, then all are answered in order', async (t) => {
  const loop = loopFor(t)
  const waiting: Array<{ ctx: ChannelHandlerContext; req: HttpRequest }> = []
  const errors: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec({ maxPipelinedRequests: 2 })).addLast('app', {
      channelRead: (ctx, req: HttpRequest) => void waiting.push({ ctx, req }),
      exceptionCaught: (_c, e) => void errors.push((e as { code: string }).code),
    }),
  )
  const { s, got } = await rawClient(port)
  t.teardown(() => s.destroy())
  s.write(Array.from({ length: 6 }, (_, i) => `GET /${i} HTTP/1.1\r\nHost: h\r\n\r\n`).join(''))
  await until(() => waiting.length === 2)
  // an absence is only seen by waiting: the other four are in the codec's buffer, not in JS
  await new Promise((r) => setTimeout(r, 200))
  t.is(waiting.length, 2)
  for (let answered = 0; answered < 6; answered++) {
    await until(() => waiting.length > answered)
    const { ctx, req } = waiting[answered]
    t.is(req.url, `/${answered}`)
    ctx.writeAndFlush(new HttpResponse(200, {}, `r${req.id}`))
    t.true(waiting.length <= answered + 2, `at most 2 unanswered (${waiting.length - answered - 1} besides this one)`)
  }
  await until(() => okCount(got()) === 6)
  t.deepEqual(got().match(/r\d$|r\d(?=HTTP)/g), ['r0', 'r1', 'r2', 'r3', 'r4', 'r5'])
  t.deepEqual(errors, [], 'the limit is backpressure, not an error')
  t.false(s.destroyed)
})

test('requestTimeout: a body that stops arriving gets 408 Request Timeout and the close', async (t) => {
  const loop = loopFor(t)
  const seen: HttpRequest[] = []
  const errors: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec({ requestTimeout: 300, headerTimeout: 60_000 })).addLast('app', {
      channelRead: (_ctx, req: HttpRequest) => void seen.push(req),
      exceptionCaught: (_c, e) => void errors.push((e as { code: string }).code),
    }),
  )
  const { s, got } = await rawClient(port)
  t.teardown(() => s.destroy())
  const start = Date.now()
  s.write('POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nonly part of the body')
  await once(s, 'close')
  t.true(Date.now() - start >= 250, `closed after ${Date.now() - start} ms`)
  t.regex(got(), /^HTTP\/1\.1 408 Request Timeout\r\n/)
  t.regex(got(), /\r\nconnection: close\r\n/i)
  t.is(seen.length, 0)
  await until(() => errors.length > 0)
  t.deepEqual(errors, ['ERR_HTTP_REQUEST_TIMEOUT'])
})

test('requestTimeout and maxPipelinedRequests check their values', (t) => {
  t.throws(() => new HttpServerCodec({ requestTimeout: -1 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new HttpServerCodec({ maxPipelinedRequests: 0 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new HttpServerCodec({ maxPipelinedRequests: 1.5 }), { code: 'ERR_OUT_OF_RANGE' })
  t.notThrows(() => new HttpServerCodec({ requestTimeout: 0, maxPipelinedRequests: 1 }))
})

/** A node:http(s) client uploading `size` bytes to `port`: the status it got, or its error code. */
function uploadWithNode(port: number, size: number, tlsOpts?: { ca: Buffer }): Promise<string> {
  return new Promise((resolve) => {
    const opts = { port, host: '127.0.0.1', method: 'POST', path: '/up', headers: { 'content-length': size }, agent: false }
    const cb = (res: import('node:http').IncomingMessage) => {
      res.resume()
      resolve(String(res.statusCode))
    }
    const req = tlsOpts
      ? require('node:https').request({ ...opts, ...tlsOpts, servername: 'localhost' }, cb)
      : require('node:http').request(opts, cb)
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
    req.end(Buffer.alloc(size))
  })
}

for (const tls of [false, true]) {
  test(`lingering close: node's ${tls ? 'https' : 'http'} client still uploading gets the 413, not a reset`, async (t) => {
    const { SslHandler } = await import('../index')
    const { serverContext, pem } = await import('./tls-helpers')
    const ctx = tls ? serverContext() : undefined
    const closed: number[] = []
    const { port } = await serve(t, loopFor(t), (ch) => {
      if (ctx) ch.pipeline.addLast('tls', new SslHandler(ctx))
      ch.pipeline.addLast('http', new HttpServerCodec({ maxBodySize: 1024 })).addLast('app', {
        channelInactive: () => void closed.push(Date.now()),
        exceptionCaught: () => {},
      })
    })
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push(await uploadWithNode(port, 20e6, tls ? { ca: pem('ca.pem') } : undefined))
    t.deepEqual(statuses, ['413', '413', '413'])
    await until(() => closed.length === 3)
  })
}

test('lingerTimeout: the connection stays open until the client closes; 0 closes at once; bad values throw', async (t) => {
  for (const lingerTimeout of [undefined, 0]) {
    const children: Array<{ isOpen: boolean }> = []
    const { port } = await serve(t, loopFor(t), (ch) => {
      children.push(ch)
      ch.pipeline.addLast('http', new HttpServerCodec({ maxBodySize: 1024, lingerTimeout })).addLast('app', { exceptionCaught: () => {} })
    })
    // allowHalfOpen: the client keeps its side open after the server's FIN (node's default
    // would answer the FIN with its own, which ends the lingering at once).
    const s = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    t.teardown(() => s.destroy())
    let text = ''
    s.on('data', (d) => (text += d.toString('latin1')))
    const got = () => text
    s.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 50000000\r\n\r\n')
    await once(s, 'end') // the 413, then the FIN in both cases
    t.regex(got(), /^HTTP\/1\.1 413 /)
    if (lingerTimeout === 0) {
      await until(() => !children[0].isOpen)
    } else {
      await new Promise((r) => setTimeout(r, 200))
      t.true(children[0].isOpen, 'lingering while the client may still send')
      s.destroy()
      await until(() => !children[0].isOpen)
    }
  }
  t.throws(() => new HttpServerCodec({ lingerTimeout: -1 }), { code: 'ERR_OUT_OF_RANGE' })
})
