// Good and misbehaving HTTP clients against one native HttpServerCodec (plain and behind TLS):
// pipelined requests, chunked and Content-Length bodies, mutated and truncated requests,
// garbage, connections abandoned mid-request, uploads refused as too large. Every good
// request is answered in order with the right body, every connection closes, only the codec's
// refusal codes reach exceptionCaught, and the server goes on serving.
import test from 'ava'
import * as net from 'node:net'
import * as tls from 'node:tls'
import { randomBytes } from 'node:crypto'
import { type Channel, type ChannelHandler, HttpRequest, HttpResponse, HttpServerCodec, SslHandler } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { runMixedClients } from './helpers'
import { pem, serverContext } from './tls-helpers'

const CLIENTS = 200
const CONCURRENCY = 20
const rnd = (n: number) => Math.floor(Math.random() * n)

/** A request whose answer names it: GET /n answers `n`, POST /echo echoes its body. */
const get = (n: number) => `GET /${n} HTTP/1.1\r\nHost: h\r\n\r\n`
const post = (body: string) => `POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: ${body.length}\r\n\r\n${body}`
const chunked = (body: string) => `POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`

for (const useTls of [false, true]) {
  test(`${useTls ? 'HTTPS' : 'HTTP'}: ${CLIENTS} good and misbehaving clients; good requests answered in order, every connection closed`, async (t) => {
    t.timeout(60_000)
    const ctx = useTls ? serverContext() : undefined
    const codes = new Map<string, number>()
    const app: ChannelHandler = {
      channelRead: (c, req: HttpRequest) => {
        const body = req.url === '/echo' ? req.body : Buffer.from(req.url!.slice(1))
        c.writeAndFlush(new HttpResponse(200, { 'content-type': 'text/plain' }, body).forRequest(req))
      },
      exceptionCaught: (_c, e) => {
        const code = (e as { code?: string }).code ?? String(e)
        codes.set(code, (codes.get(code) ?? 0) + 1)
      },
    }
    const { port, children } = await serve(t, loopFor(t), (ch) => {
      if (ctx) ch.pipeline.addLast('tls', new SslHandler(ctx))
      ch.pipeline.addLast('http', new HttpServerCodec({ maxBodySize: 64 * 1024, lingerTimeout: 500 })).addLast('app', app)
    })
    const ca = pem('ca.pem')
    const open = () => (useTls ? tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca }) : net.connect(port, '127.0.0.1'))
    const problems: string[] = []

    /** Sends `payload`, then (unless `abandonAfter`) ends; resolves with what came back. */
    const session = (payload: Buffer | string, abandonAfter?: number) =>
      new Promise<string>((resolve) => {
        const s = open()
        let got = ''
        s.on(useTls ? 'secureConnect' : 'connect', () => {
          s.write(payload)
          if (abandonAfter === undefined) s.end()
          else setTimeout(() => s.destroy(), abandonAfter)
        })
        s.on('data', (d: Buffer) => (got += d.toString('latin1')))
        s.on('error', () => {})
        s.on('close', () => resolve(got))
      })
    const bodies = (text: string) => text.split(/HTTP\/1\.1 200 OK\r\n/).slice(1).map((r) => r.slice(r.indexOf('\r\n\r\n') + 4))

    const pipelined = async () => {
      const n = 1 + rnd(12)
      const want = Array.from({ length: n }, (_, i) => (i % 3 === 2 ? `b${i}-${'x'.repeat(rnd(3000))}` : `${i}`))
      const payload = want.map((w, i) => (i % 3 === 2 ? (i % 2 ? post(w) : chunked(w)) : get(i))).join('')
      const got = bodies(await session(payload))
      if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`pipelined: got ${got.length}/${n}`)
    }
    const mutated = () => {
      const b = Buffer.from(get(1) + chunked('hello') + get(2))
      for (let i = 0; i < 3; i++) b[rnd(b.length)] = rnd(256)
      return session(b)
    }
    const truncated = () => {
      const b = Buffer.from(get(1) + post('z'.repeat(500)))
      return session(b.subarray(0, rnd(b.length)), rnd(30))
    }
    const garbage = () => session(randomBytes(1 + rnd(2000)))
    const tooLarge = async () => {
      const got = await session(`POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000\r\n\r\n${'u'.repeat(100_000)}`)
      if (!got.startsWith('HTTP/1.1 413 ')) problems.push(`too large: ${JSON.stringify(got.slice(0, 20))}`)
    }
    const kinds = [pipelined, pipelined, pipelined, mutated, truncated, garbage, tooLarge]
    await runMixedClients(kinds, CLIENTS, CONCURRENCY)
    t.deepEqual(problems, [])
    await until(() => children.every((c: Channel) => !c.isOpen), 15_000)
    for (const code of codes.keys()) t.regex(code, /^(HPE_|ERR_HTTP_|ECONNRESET|EPIPE|ERR_TLS_)/, code)
    const before = problems.length
    await pipelined()
    t.is(problems.length, before, 'still serving')
  })
}
