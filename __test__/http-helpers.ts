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

/** What `keptAliveGet` resolves with. */
export interface GotResponse {
  status: number
  /** The Content-Length header, if any. */
  length: string | undefined
  body: Buffer
}

/**
 * A getter over one kept-alive connection (`maxSockets: 1`, destroyed at teardown) to
 * 127.0.0.1:`port` (or `host` for TLS, checked against `ca`): `get(path, method?)` resolves
 * with the status, Content-Length and whole body.
 */
export async function keptAliveGet(
  t: { teardown(fn: () => unknown): void },
  port: number,
  tls?: { ca: Buffer; host: string },
): Promise<(path: string, method?: string) => Promise<GotResponse>> {
  const mod = tls ? await import('node:https') : await import('node:http')
  const agent = new mod.Agent({ keepAlive: true, maxSockets: 1, ...(tls ? { ca: tls.ca } : {}) })
  t.teardown(() => agent.destroy())
  return (path, method = 'GET') =>
    new Promise((resolve, reject) => {
      mod
        .request({ host: tls?.host ?? '127.0.0.1', port, path, method, agent }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (d: Buffer) => chunks.push(d))
          res.on('end', () => resolve({ status: res.statusCode!, length: res.headers['content-length'], body: Buffer.concat(chunks) }))
        })
        .on('error', reject)
        .end()
    })
}
