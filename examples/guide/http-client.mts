// An HTTP/1.1 client on the native codec: one kept-alive connection, the requests pipelined on
// it, each answered by a Promise in request order.
//   node --import tsx http-client.mts HOST PORT [PATH...]
import { Bootstrap, EventLoop, HttpClientCodec, HttpClientRequest, HttpClientResponse } from 'netloop'

const [host = '127.0.0.1', port = '80', ...paths] = process.argv.slice(2)
const waiting: Array<{ resolve: (r: HttpClientResponse) => void; reject: (e: Error) => void }> = []
const failAll = (e: Error) => waiting.splice(0).forEach((w) => w.reject(e))

const loop = new EventLoop()
const ch = await new Bootstrap()
  .group(loop)
  .handler((ch) => {
    // Bodies up to 16 MiB come whole (larger ones would stream as HttpContent pieces).
    ch.pipeline.addLast('http', new HttpClientCodec({ host, aggregateLimit: 16 << 20 })).addLast('app', {
      channelRead: (_ctx, res: HttpClientResponse) => void (res.informational || waiting.shift()?.resolve(res)),
      exceptionCaught: (_ctx, e) => failAll(e as Error),
      channelInactive: (ctx) => {
        failAll(new Error('the connection closed'))
        ctx.fireChannelInactive()
      },
    })
  })
  .connect(Number(port), host)

const get = (path: string) =>
  new Promise<HttpClientResponse>((resolve, reject) => {
    waiting.push({ resolve, reject })
    ch.writeAndFlush(new HttpClientRequest('GET', path))
  })

for (const res of await Promise.all((paths.length ? paths : ['/']).map(get))) {
  console.log(`${res.statusCode} ${res.statusMessage} ${res.headers['content-type']} ${res.body.length} bytes`)
}
await ch.close()
await loop.shutdownGracefully(0, 1000)
