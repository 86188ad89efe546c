import type * as http from 'node:http'
import type * as net from 'node:net'
import { once } from 'node:events'

/** Listens with a node:http or node:https `server` on a free port of 127.0.0.1; every connection and the server closed at teardown. */
export async function listenNode(t: { teardown(fn: () => unknown): void }, server: http.Server): Promise<number> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return (server.address() as net.AddressInfo).port
}
