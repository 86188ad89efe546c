// WebSocket echo server: every message a client sends comes back, text as text and binary as
// binary. The protocol is native (HttpServerCodec, then WebSocketServerProtocolHandler: the
// handshake, frames, pings, the close handshake, and permessage-deflate when a client offers
// it, as browsers and the `ws` client do); the pipeline is in ws-handlers.ts.
//
//   node --import tsx examples/ws-echo.ts [--port 8081]   # PORT=... works too; --port 0 picks one
//   node -e "const W=require('ws');const w=new W('ws://127.0.0.1:8081/');w.on('open',()=>w.send('hi'));w.on('message',(m)=>{console.log(String(m));w.close()})"
//
// Options:
//   --native      echo natively (WebSocketEchoHandler): messages never reach JS.
//   --tls         serve wss: (see lib/tls.ts).
//   --threads N   (default 1) serve connections on N worker threads, each importing
//                 ws-handlers.ts (the loop on the main thread accepts).
import { childHandler, workerSettings } from './ws-handlers'
import { runExample, start } from './lib/server'

start(() =>
  runExample({
    name: 'ws-echo',
    defaultPort: 8081,
    childHandler,
    handlersModule: () => require.resolve('./ws-handlers'),
    alpn: ['http/1.1'],
    childOptions: { tcpNoDelay: true },
    workerData: workerSettings,
  }),
)
