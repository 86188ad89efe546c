// node:http on netloop channels: every accepted channel becomes a stream.Duplex that node:http
// takes as its socket (keep-alive, pipelining, uploads with backpressure, upgrades).
import { createServer } from 'node:http'
import { EventLoop, ServerBootstrap } from 'netloop'

const http = createServer((req, res) => {
  let bytes = 0
  req.on('data', (chunk: Buffer) => (bytes += chunk.length))
  req.on('end', () => res.end(`${req.method} ${req.url}: ${bytes} bytes from ${req.socket.remoteAddress}\n`))
})

const loop = new EventLoop()
const server = await new ServerBootstrap()
  .group(loop)
  .childHandler((ch) => {
    http.emit('connection', ch.toDuplex()) // what net.Server does with each accepted socket
  })
  .bind(Number(process.env.PORT ?? 0), '127.0.0.1')

console.log(`listening on 127.0.0.1:${server.localAddress!.port}`)
process.once('SIGINT', () => loop.shutdownGracefully(0, 1000))
