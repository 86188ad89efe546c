// WebSocket on the native HTTP codec: HttpServerCodec answers plain requests; an upgrade request
// hands the connection to `ws` (npm install ws), which writes its own 101 and speaks WebSocket.
import { WebSocketServer } from 'ws'
import { EventLoop, HttpRequest, HttpResponse, HttpServerCodec, ServerBootstrap } from 'netloop'

const wss = new WebSocketServer({ noServer: true })
wss.on('connection', (ws, req) => {
  ws.send(`hello ${req.socket.remoteAddress}`)
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }))
})

const loop = new EventLoop()
const server = await new ServerBootstrap()
  .group(loop)
  .childHandler((ch) => {
    ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
      channelRead(ctx, req: HttpRequest) {
        if (!req.upgrade) return void ctx.writeAndFlush(new HttpResponse(200, { 'content-type': 'text/plain' }, 'try ws://\n'))
        ctx.pipeline.remove(HttpServerCodec) // it passes on the bytes it held, and reading
        ctx.pipeline.remove(ctx.name)
        const socket = ctx.channel.toDuplex()
        // What ws reads of a request (verifyClient and 'connection' listeners use req.socket).
        const request = { method: req.method, url: req.url, headers: req.headers, socket }
        wss.handleUpgrade(request as never, socket, Buffer.alloc(0), (ws) => wss.emit('connection', ws, request))
      },
    })
  })
  .bind(Number(process.env.PORT ?? 0), '127.0.0.1')

console.log(`listening on 127.0.0.1:${server.localAddress!.port}`)
process.once('SIGINT', () => loop.shutdownGracefully(0, 1000))
