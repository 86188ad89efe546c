// A static file server: GET /name answers the file `name` of a directory (this one by default),
// sent by the kernel with sendfile (a FileRegion): the file never passes through JS.
import { resolve, sep } from 'node:path'
import { EventLoop, FileRegion, HttpResponse, HttpServerCodec, ServerBootstrap, type HttpRequest } from 'netloop'

const root = resolve(process.argv[2] ?? import.meta.dirname)
const notFound = new HttpResponse(404, { 'content-type': 'text/plain' }, 'not found\n').freeze()

function answer(req: HttpRequest): HttpResponse {
  try {
    const path = resolve(root, '.' + decodeURIComponent(new URL(req.url, 'http://x').pathname))
    if (!path.startsWith(root + sep)) return notFound // `..` out of the directory
    return new HttpResponse(200, { 'content-type': 'application/octet-stream' }, FileRegion.open(path))
  } catch {
    return notFound // missing, a directory, unreadable, a malformed URL
  }
}

const loop = new EventLoop()
const server = await new ServerBootstrap()
  .group(loop)
  .childHandler((ch) => {
    ch.pipeline.addLast('http', new HttpServerCodec()).addLast('files', {
      channelRead: (ctx, req: HttpRequest) => ctx.write(answer(req)),
      channelReadComplete: (ctx) => ctx.flush(),
    })
  })
  .bind(Number(process.env.PORT ?? 0), '127.0.0.1')

console.log(`listening on 127.0.0.1:${server.localAddress!.port}, serving ${root}`)
process.once('SIGINT', () => loop.shutdownGracefully(0, 1000))
