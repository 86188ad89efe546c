// A client that pipelines requests without reading the responses: the native codec stops
// decoding (and reading) while the channel is not writable, as node:http does, so the server
// holds about a high water mark of responses and TCP's flow control holds the client back.
import test from 'ava'
import * as net from 'node:net'
import { once } from 'node:events'
import { HttpRequest, HttpResponse, HttpServerCodec } from '../index'
import { loopFor, serve, sleep, until } from './channel-helpers'

test('a client pipelining without reading holds the server to its water marks, then gets every response', async (t) => {
  const loop = loopFor(t)
  const body = Buffer.alloc(1024, 'r')
  let seen = 0
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
      channelRead: (ctx, req: HttpRequest) => {
        seen++
        ctx.write(new HttpResponse(200, { 'x-n': String(req.id) }, body))
      },
      channelReadComplete: (ctx) => ctx.flush(),
    }),
  )
  const N = 30_000 // ~31 MiB of responses, far more than loopback's socket buffers hold
  const s = net.connect(port, '127.0.0.1')
  t.teardown(() => s.destroy())
  await once(s, 'connect')
  s.pause() // read nothing for now
  const request = Buffer.from('GET / HTTP/1.1\r\nHost: h\r\n\r\n')
  s.write(Buffer.concat(Array.from({ length: N }, () => request)))
  // Let the server go as far as it can.
  let last = -1
  while (seen !== last) {
    last = seen
    await sleep(200)
  }
  t.log(`decoded while unread: ${seen} of ${N}`)
  t.true(seen < N / 2, `the server decoded ${seen} of ${N} requests while nothing was read`)
  // Now read: every response arrives, in order.
  let bytes = 0
  let responses = 0
  let tail = ''
  s.on('data', (d: Buffer) => {
    bytes += d.length
    const text = tail + d.toString('latin1')
    const parts = text.split('HTTP/1.1 200 OK')
    responses += parts.length - 1
    tail = parts[parts.length - 1].slice(-16)
  })
  s.resume()
  await until(() => responses === N, 30_000)
  t.is(seen, N)
  t.true(bytes > N * body.length)
})
