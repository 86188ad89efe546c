// WebSocket echo server: every message a client sends comes back, text as text and binary as
// binary. HttpServerCodec reads the upgrade request, WebSocketServerProtocolHandler answers
// the handshake and from then on frames natively (pings answered, the close handshake, bad
// frames closed with their code); each message reaches the JS handler once, as
// `{ text }` or `{ binary }`, and writing it back sends it.
//
//   node --import tsx examples/ws-echo.ts [--port 8081]   # PORT=... works too; --port 0 picks one
//   node -e "const W=require('ws');const w=new W('ws://127.0.0.1:8081/');w.on('open',()=>w.send('hi'));w.on('message',(m)=>{console.log(String(m));w.close()})"
//
// --native   echo natively (WebSocketEchoHandler): messages never reach JS.
//
// Requests that are not WebSocket upgrades are answered 426 Upgrade Required.
import { type Channel, EventLoop, HttpResponse, HttpServerCodec, ServerBootstrap, type ChannelHandler, HttpRequest, WebSocketEchoHandler, WebSocketServerProtocolHandler, type WebSocketFrame } from 'netloop'
import { portArg, start } from './lib/server'

const echo: ChannelHandler = {
  channelRead(ctx, msg: WebSocketFrame | HttpRequest) {
    if (msg instanceof HttpRequest) {
      ctx.writeAndFlush(new HttpResponse(426, [['upgrade', 'websocket']], 'this server speaks WebSocket\n'))
      return
    }
    ctx.write(msg)
  },
  channelReadComplete(ctx) {
    ctx.flush()
  },
  exceptionCaught(ctx, err) {
    // A protocol violation: the connection is already closing with its close code.
    if (!String((err as { code?: string }).code).startsWith('ERR_WS_')) console.error(`ws-echo: channel ${ctx.channel.id}: ${err.message}`)
    ctx.close()
  },
}

async function main(): Promise<void> {
  const native = process.argv.includes('--native')
  const loop = new EventLoop({ name: 'ws-echo' })
  loop.ref()
  const channels = new Set<Channel>()
  const server = await new ServerBootstrap()
    .group(loop)
    .childOption('tcpNoDelay', true)
    .childHandler((ch) => {
      channels.add(ch)
      ch.closeFuture.then(() => channels.delete(ch))
      ch.pipeline.addLast('http', new HttpServerCodec()).addLast('ws', new WebSocketServerProtocolHandler('/', { checkStartsWith: true }))
      if (native) ch.pipeline.addLast('echo', new WebSocketEchoHandler())
      ch.pipeline.addLast('app', echo)
    })
    .bind(portArg(8081), '127.0.0.1')
  const { address, port } = server.localAddress!
  console.log(`listening on ${address}:${port}`)

  const stop = async () => {
    await server.close()
    await Promise.all([...channels].map((ch) => ch.close()))
    await loop.shutdownGracefully(0, 1000)
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

start(main)
