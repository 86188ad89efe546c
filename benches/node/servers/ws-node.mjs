// node:http + the `ws` package for benches/node/ws.mjs (run on Node 20 and 24). bufferutil
// (ws's native masking) is used when installed, unless WS_NO_BUFFER_UTIL=1 (ws's own switch;
// the harness runs both). perMessageDeflate off (ws's server default).
//   (default)   echo: ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }))
//   --fanout    `sub` adds the connection to a Set (answered `ok`); any other message is sent to
//               every connection of the Set in a JS loop of ws.send
import { createServer } from 'node:http'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { WebSocketServer } = require('ws')
const fanout = process.argv.includes('--fanout')
// --deflate: permessage-deflate accepted with ws's defaults (context takeover both ways,
// threshold 1,024 bytes).
const deflate = process.argv.includes('--deflate')
// --deflate-no-context-takeover: the same with no context takeover either way.
const noContextTakeover = process.argv.includes('--deflate-no-context-takeover')
const perMessageDeflate = noContextTakeover ? { serverNoContextTakeover: true, clientNoContextTakeover: true } : deflate
const subs = new Set()

const server = createServer((req, res) => res.writeHead(426).end('WebSocket only\n'))
const wss = new WebSocketServer({ server, perMessageDeflate })
wss.on('connection', (ws) => {
  ws.on('error', () => ws.terminate())
  if (!fanout) {
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }))
    return
  }
  ws.on('close', () => subs.delete(ws))
  ws.on('message', (data, isBinary) => {
    if (!isBinary && data.length === 3 && data.toString() === 'sub') {
      subs.add(ws)
      ws.send('ok')
      return
    }
    for (const c of subs) c.send(data, { binary: isBinary })
  })
})
// With --expose-gc: SIGUSR2 runs a full collection (the idle workload reads RSS after it).
if (typeof globalThis.gc === 'function') process.on('SIGUSR2', () => globalThis.gc())
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`))
process.once('SIGTERM', () => {
  let bu = false
  try {
    bu = !process.env.WS_NO_BUFFER_UTIL && !!require('bufferutil')
  } catch {}
  process.stderr.write(`${JSON.stringify({ metrics: { bufferutil: bu } })}\n`)
  process.exit(0)
})
