// The connections of the WebSocket echo server (ws-echo.ts runs it): the pipeline of each
// connection.
//
//   HttpServerCodec (native)                 reads the upgrade request (HTTP/1.1, crates/http)
//   WebSocketServerProtocolHandler (native)  answers the handshake (Sec-WebSocket-Accept,
//                                            version 13, the subprotocol `chat` if offered,
//                                            permessage-deflate if offered: messages of 1 KiB
//                                            or more go back compressed),
//                                            then frames: pings answered, the close handshake,
//                                            bad frames closed with their code (1002, 1007,
//                                            1009), all without JS
//   WebSocketEchoHandler (native, --native)  echoes every message natively
//   echo (JS)                                otherwise: each message arrives once, as
//                                            `{ text }` or `{ binary }`, and is written back
//
// Requests that are not WebSocket upgrades reach the JS handler and are answered 426.
// With `--threads N` every worker thread imports this module and runs `childHandler` for the
// connections of its loop.
import { isMainThread, workerData } from 'node:worker_threads'
import { type Channel, type ChannelHandler, HttpRequest, HttpResponse, HttpServerCodec, WebSocketEchoHandler, WebSocketServerProtocolHandler, type WebSocketFrame } from 'netloop'
import { addWorkerTls } from './lib/tls'

const native = isMainThread ? process.argv.includes('--native') : (workerData as { native?: boolean } | undefined)?.native === true

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
    // A protocol violation (ERR_WS_*): the connection is already closing with its close code.
    if (!String((err as { code?: string }).code).startsWith('ERR_WS_')) console.error(`ws-echo: channel ${ctx.channel.id}: ${err.message}`)
    ctx.close()
  },
}

export function childHandler(ch: Channel): void {
  addWorkerTls(ch) // --tls --threads N: TLS first, from the main thread's context
  ch.pipeline.addLast('http', new HttpServerCodec()).addLast('ws', new WebSocketServerProtocolHandler('/', { checkStartsWith: true, subprotocols: ['chat'], perMessageDeflate: true }))
  if (native) ch.pipeline.addLast('echo', new WebSocketEchoHandler())
  ch.pipeline.addLast('app', echo)
}

/** What the main thread passes to the workers (--threads N). */
export const workerSettings = { native }
