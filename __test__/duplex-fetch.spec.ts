// fetch (undici) over netloop client channels: an undici `Agent` whose `connect` answers with
// `ch.toDuplex()` of a channel that has an `SslHandler` (the TLS is netloop's, the HTTP undici's).
import test, { type ExecutionContext } from 'ava'
import { createHash, randomBytes } from 'node:crypto'
import { Agent, fetch } from 'undici'
import { Bootstrap, type ChannelHandler, type HttpRequest, HttpResponse, HttpServerCodec, type NetloopError, SslHandler } from '../index'
import { captureUnhandled, loopFor, serve } from './channel-helpers'
import { clientContext, serverContext } from './tls-helpers'

/** An HTTPS server on netloop's native codec: answers with the method, the path and the body's sha256. */
async function httpsServer(t: ExecutionContext, extra: Parameters<typeof serverContext>[0] = {}) {
  const app: ChannelHandler = {
    channelRead: (ctx, req: HttpRequest) => {
      const sum = createHash('sha256').update(req.body).digest('hex')
      ctx.writeAndFlush(new HttpResponse(200, { 'content-type': 'text/plain' }, `${req.method} ${req.url} ${req.body.length} ${sum}`))
    },
    // A client that refuses the certificate, or goes away: its channel closes, nothing to log.
    exceptionCaught: (ctx) => void ctx.close(),
  }
  const tls = serverContext(extra)
  return serve(t, loopFor(t), (ch) => {
    ch.pipeline.addLast('tls', new SslHandler(tls)).addLast('http', new HttpServerCodec({ maxBodySize: 16 << 20, aggregateLimit: 16 << 20 })).addLast('app', app)
  })
}

/**
 * An undici Agent whose connections are netloop channels to 127.0.0.1 with TLS from `ctx`,
 * naming and verifying the URL's host; how many it opened.
 */
function netloopAgent(t: ExecutionContext, ctx = clientContext()) {
  const loop = loopFor(t)
  const opened = { count: 0 }
  const agent = new Agent({
    connect: (opts, cb) => {
      opened.count++
      new Bootstrap()
        .group(loop)
        .handler((ch) => void ch.pipeline.addLast('tls', new SslHandler(ctx, { servername: opts.servername || opts.hostname })))
        .connect(Number(opts.port), '127.0.0.1')
        .then((ch) => cb(null, ch.toDuplex() as never), (e: Error) => cb(e, null))
    },
  })
  t.teardown(() => agent.close())
  return { agent, opened }
}

test('fetch over netloop TLS channels: keep-alive GETs and a 4 MiB upload, every byte checked', async (t) => {
  const { port } = await httpsServer(t)
  const { agent, opened } = netloopAgent(t)
  for (let i = 0; i < 5; i++) {
    const r = await fetch(`https://localhost:${port}/get/${i}`, { dispatcher: agent })
    t.is(r.status, 200)
    t.is(await r.text(), `GET /get/${i} 0 ${createHash('sha256').digest('hex')}`)
  }
  const body = randomBytes(4 << 20)
  const r = await fetch(`https://localhost:${port}/up`, { method: 'POST', body, dispatcher: agent })
  t.is(await r.text(), `POST /up ${body.length} ${createHash('sha256').update(body).digest('hex')}`)
  // undici reuses its connections (it opens a second one after its first request, with
  // node:https servers as well).
  t.true(opened.count <= 2, `${opened.count} connections for 6 requests`)
})

test("a certificate netloop refuses fails the fetch with netloop's code as its cause", async (t) => {
  // The handshake failure also reaches the tail of the client channel's pipeline (it has no
  // exceptionCaught), as in Netty: captured here, not printed.
  const unhandled = captureUnhandled(t)
  const { port } = await httpsServer(t)
  const { agent } = netloopAgent(t)
  const e = await t.throwsAsync(fetch(`https://example.org:${port}/`, { dispatcher: agent }))
  t.is(((e as Error).cause as NetloopError).code, 'ERR_TLS_CERT_ALTNAME_INVALID')
  t.true(unhandled.filter((u) => String((u.error as NetloopError).code).startsWith('ERR_TLS')).every((u) => (u.error as NetloopError).code === 'ERR_TLS_CERT_ALTNAME_INVALID'))
})
