// Bun's built-in WebSocket server (Bun.serve) for benches/node/ws.mjs; run with bun.
//   (default)   echo: message(ws, m) { ws.send(m) }
//   --fanout    `sub` subscribes the connection to `all` (answered `ok`); any other message is
//               server.publish('all', m) (Bun's native fan-out)
const fanout = process.argv.includes('--fanout')
// --deflate: permessage-deflate accepted with Bun's defaults.
const deflate = process.argv.includes('--deflate')
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(req, srv) {
    if (srv.upgrade(req)) return undefined
    return new Response('WebSocket only\n', { status: 426 })
  },
  websocket: {
    perMessageDeflate: deflate,
    message(ws, m) {
      if (!fanout) {
        ws.send(m)
      } else if (m === 'sub') {
        ws.subscribe('all')
        ws.send('ok')
      } else {
        server.publish('all', m)
      }
    },
  },
})
process.stdout.write(`${server.port}\n`)
process.on('SIGTERM', () => process.exit(0))
// SIGUSR2: a full collection (the idle workload reads RSS after it).
process.on('SIGUSR2', () => Bun.gc(true))
