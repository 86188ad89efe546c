// Trailer fields both ways through both HTTP codecs: read on a whole chunked body
// (`trailers` of the request or response) and on the last piece of a streamed one, and
// written on the last `HttpContent` of a streamed response or request; node:http on the other
// side each time.
import test from 'ava'
import * as http from 'node:http'
import { createHash } from 'node:crypto'
import { HttpClientCodec, HttpClientRequest, HttpClientResponse, HttpContent, HttpRequest, HttpResponse, HttpServerCodec } from '../index'
import { dial, loopFor, pattern, serve, until } from './channel-helpers'
import { listenNode } from './http-helpers'

type T = Parameters<typeof loopFor>[0]
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

const nodeServer = (t: T, handler: http.RequestListener) => listenNode(t, http.createServer(handler))

/** node:http's client sends `body` chunked with an `x-sum` trailer; resolves with the response text. */
function postWithTrailer(port: number, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { trailer: 'x-sum' } }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve(text))
    })
    req.on('error', reject)
    req.write(body)
    req.addTrailers({ 'x-sum': sha(body) })
    req.end()
  })
}

test('the server side reads a chunked request\'s trailers: on the request when whole, on the last piece when streamed', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => {
    let parts: Buffer[] = []
    ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
      channelRead: (ctx, m: HttpRequest | HttpContent) => {
        if (m instanceof HttpRequest && !m.streaming) {
          return void ctx.writeAndFlush(new HttpResponse(200, {}, `whole ${sha(m.body) === m.trailers['x-sum']}`))
        }
        if (m instanceof HttpRequest) return void (parts = [])
        parts.push(Buffer.from(m.data))
        if (m.last) ctx.writeAndFlush(new HttpResponse(200, {}, `streamed ${sha(Buffer.concat(parts)) === m.trailers['x-sum']}`))
      },
    })
  })
  t.is(await postWithTrailer(port, pattern(1000, 1)), 'whole true')
  t.is(await postWithTrailer(port, pattern(300_000, 2)), 'streamed true')
})

test('the server side writes trailers on the last piece of a streamed response; node:http reads them', async (t) => {
  const loop = loopFor(t)
  const body = pattern(100_000, 3)
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
      channelRead: (ctx) => {
        ctx.write(new HttpResponse(200, { trailer: 'x-sum, x-n' }).streamed())
        ctx.write(new HttpContent(body.subarray(0, 60_000)))
        ctx.writeAndFlush(new HttpContent(body.subarray(60_000), true, -1, { 'X-Sum': sha(body), 'x-n': '2' }))
      },
    }),
  )
  const res = await new Promise<http.IncomingMessage>((resolve) => http.get({ host: '127.0.0.1', port, path: '/' }, resolve))
  const parts: Buffer[] = []
  for await (const p of res) parts.push(p as Buffer)
  t.true(Buffer.concat(parts).equals(body))
  t.deepEqual({ ...res.trailers }, { 'x-sum': sha(body), 'x-n': '2' })
})

test('the client side reads a response\'s trailers: on the response when whole, on the last piece when streamed', async (t) => {
  const port = await nodeServer(t, (req, res) => {
    const body = req.url === '/big' ? pattern(200_000, 4) : Buffer.from('small')
    res.setHeader('trailer', 'x-sum')
    res.write(body)
    res.addTrailers({ 'x-sum': sha(body) })
    res.end()
  })
  const got: Array<HttpClientResponse | HttpContent> = []
  const ch = await dial(loopFor(t), port, (c) =>
    void c.pipeline.addLast('http', new HttpClientCodec({ host: 'x' })).addLast('app', { channelRead: (_ctx, m: HttpClientResponse | HttpContent) => void got.push(m) }),
  )
  t.teardown(() => ch.close())
  ch.write(new HttpClientRequest('GET', '/small'))
  ch.writeAndFlush(new HttpClientRequest('GET', '/big'))
  await until(() => got.some((m) => m instanceof HttpContent && m.last))
  const small = got[0] as HttpClientResponse
  t.is(small.trailers['x-sum'], sha(Buffer.from('small')))
  const pieces = got.filter((m): m is HttpContent => m instanceof HttpContent)
  t.is(pieces.at(-1)!.trailers['x-sum'], sha(Buffer.concat(pieces.map((p) => p.data))))
  t.true(pieces.length > 1 && pieces.slice(0, -1).every((p) => Object.keys(p.trailers).length === 0), 'only the last piece has them')
})

test('the client side writes trailers on the last piece of a streamed request; node:http reads them', async (t) => {
  const port = await nodeServer(t, async (req, res) => {
    const parts: Buffer[] = []
    for await (const p of req) parts.push(p as Buffer)
    res.end(`${sha(Buffer.concat(parts)) === req.trailers['x-sum']} ${req.trailers['x-n']}`)
  })
  const got: HttpClientResponse[] = []
  const ch = await dial(loopFor(t), port, (c) =>
    void c.pipeline.addLast('http', new HttpClientCodec({ host: 'x' })).addLast('app', { channelRead: (_ctx, m: HttpClientResponse) => void got.push(m) }),
  )
  t.teardown(() => ch.close())
  const body = pattern(150_000, 5)
  ch.write(new HttpClientRequest('POST', '/', { trailer: 'x-sum' }).streamed())
  ch.write(new HttpContent(body.subarray(0, 70_000)))
  ch.writeAndFlush(new HttpContent(body.subarray(70_000), true, -1, [['x-sum', sha(body)], ['x-n', '7']]))
  await until(() => got.length === 1)
  t.is(got[0].body.toString(), 'true 7')
})
