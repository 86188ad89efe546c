// The three servers the corpus runs against, each its own process as a user runs it:
// examples/ws-echo.ts (HttpServerCodec, WebSocketServerProtocolHandler with
// permessage-deflate, the echo in JS), the same with `--native` (WebSocketEchoHandler), and
// the `ws` package's server on node:http (ws-server.ts, the reference peer).
import type { ExecutionContext } from 'ava'
import { startExample, startScript } from '../example-helpers'

export type ServerName = 'netloop-js' | 'netloop-native' | 'ws'
export const SERVERS: ServerName[] = ['netloop-js', 'netloop-native', 'ws']

export interface Server {
  port: number
  /** What the server process wrote to stderr (nothing, unless something went wrong). */
  stderr: () => string
}

export async function startServer(t: ExecutionContext, name: ServerName): Promise<Server> {
  if (name !== 'ws') return startExample(t, 'ws-echo', name === 'netloop-native' ? ['--native'] : [])
  return startScript(t, 'ws-server', '__test__/ws-conformance/ws-server.ts')
}
