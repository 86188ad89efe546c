// netloop WebSocket server for benches/node/ws.mjs: HttpServerCodec, then
// WebSocketServerProtocolHandler (handshake, frames, pings, close: native), then
//   (default)   the echo in JS: each message written back (ctx.write in channelRead, one flush
//               in channelReadComplete, as examples/ws-handlers.ts)
//   --native    WebSocketEchoHandler: messages never reach JS
//   --fanout    `sub` subscribes the connection to the topic `all` (and is answered `ok`); any
//               other message is published to `all` (src/ws-topics.ts: subscribe, publish). Exits
//               with status 3 and a `skipped:` line when the library has no topics API yet.
//   --deflate   permessage-deflate accepted (perMessageDeflate: true, the defaults: context
//               takeover both ways, threshold 1,024 bytes)
//   --deflate-no-context-takeover   the same with no context takeover either way
// Prints its port; on SIGTERM its loop's metrics and JS crossings (common.mjs).
import { exitOnTerm, netloop, quiet, ready } from './common.mjs'
import { createRequire } from 'node:module'

const { EventLoop, ServerBootstrap, HttpServerCodec, WebSocketServerProtocolHandler, WebSocketEchoHandler } = netloop
const native = process.argv.includes('--native')
const fanout = process.argv.includes('--fanout')
const deflate = process.argv.includes('--deflate')
const noContextTakeover = process.argv.includes('--deflate-no-context-takeover')
const perMessageDeflate = noContextTakeover ? { serverNoContextTakeover: true, clientNoContextTakeover: true } : deflate

/** subscribe/publish from the front door, else from src/ws-topics.js; undefined when absent. */
function topicsApi() {
  if (typeof netloop.subscribe === 'function' && typeof netloop.publish === 'function') return netloop
  try {
    const t = createRequire(import.meta.url)('../../../src/ws-topics.js')
    if (typeof t.subscribe === 'function' && typeof t.publish === 'function') return t
  } catch {
    // not merged yet
  }
  return undefined
}

let app
if (fanout) {
  const topics = topicsApi()
  if (!topics) {
    process.stderr.write('skipped: netloop has no topics API (subscribe/publish of src/ws-topics.ts) in this build\n')
    process.exit(3)
  }
  app = {
    channelRead(ctx, msg) {
      if (msg.text === 'sub') {
        topics.subscribe(ctx.channel, 'all')
        ctx.writeAndFlush('ok')
      } else if (msg.text !== undefined) {
        topics.publish('all', msg.text)
      }
    },
    exceptionCaught: quiet.exceptionCaught,
  }
} else if (!native) {
  app = {
    channelRead: (ctx, msg) => ctx.write(msg),
    channelReadComplete: (ctx) => ctx.flush(),
    exceptionCaught: quiet.exceptionCaught,
  }
}

const loop = new EventLoop({ name: 'bench-ws' })
loop.ref()
const server = await new ServerBootstrap()
  .group(loop)
  .childOption('tcpNoDelay', true)
  .childHandler((ch) => {
    ch.pipeline.addLast('http', new HttpServerCodec()).addLast('ws', new WebSocketServerProtocolHandler('/', { perMessageDeflate }))
    if (native) ch.pipeline.addLast('echo', new WebSocketEchoHandler())
    else ch.pipeline.addLast('app', app)
  })
  .bind(0, '127.0.0.1')
exitOnTerm(loop)
ready(server.localAddress.port)
