// The reference peer of the conformance corpus: the `ws` package's server on node:http with
// permessage-deflate on, echoing every message as its README shows. Run as its own process
// (as the example servers are) and prints `listening on HOST:PORT`.
import * as http from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocketServer } from 'ws'

const server = http.createServer((_req, res) => res.writeHead(426).end())
const wss = new WebSocketServer({ server, perMessageDeflate: true })
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data as Buffer, { binary: isBinary }))
  ws.on('error', () => {}) // a protocol error: ws has already closed with its code
})
server.listen(0, '127.0.0.1', () => console.log(`listening on 127.0.0.1:${(server.address() as AddressInfo).port}`))
