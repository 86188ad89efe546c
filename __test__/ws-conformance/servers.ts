// The three servers the corpus runs against: examples/ws-echo.ts (HttpServerCodec,
// WebSocketServerProtocolHandler with permessage-deflate, the echo in JS) and the same with
// `--native` (WebSocketEchoHandler), each its own process as a user runs it; and the `ws`
// package's server on node:http in this process, echoing as its README shows, with
// permessage-deflate on (the reference peer).
import type { ExecutionContext } from 'ava'
import * as http from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocketServer } from 'ws'
import { startExample } from '../example-helpers'

export type ServerName = 'netloop-js' | 'netloop-native' | 'ws'
export const SERVERS: ServerName[] = ['netloop-js', 'netloop-native', 'ws']

export interface Server {
  port: number
  /** What the server process wrote to stderr (nothing, unless something went wrong). */
  stderr: () => string
}

export async function startServer(t: ExecutionContext, name: ServerName): Promise<Server> {
  if (name !== 'ws') return startExample(t, 'ws-echo', name === 'netloop-native' ? ['--native'] : [])
  const server = http.createServer((_req, res) => res.writeHead(426).end())
  const wss = new WebSocketServer({ server, perMessageDeflate: true })
  wss.on('connection', (ws) => {
    ws.on('message', (data, isBinary) => ws.send(data as Buffer, { binary: isBinary }))
    ws.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const c of wss.clients) c.terminate()
    wss.close()
    server.close()
  })
  return { port: (server.address() as AddressInfo).port, stderr: () => '' }
}
