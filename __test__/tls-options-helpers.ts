// What the TLS option specs share: a netloop TLS echo server with a context's options, and a
// node:tls client that pings it.
import type { ExecutionContext } from 'ava'
import * as tls from 'node:tls'
import type { ChannelHandler, SslContextOptions } from '../index'
import { loopFor, serve } from './channel-helpers'
import { echo, pem, serverContext, withTls } from './tls-helpers'

/** A netloop TLS echo server whose context has `extra`; the errors its channels caught. */
export async function netloopServer(t: ExecutionContext, extra: Partial<SslContextOptions>) {
  const errors: unknown[] = []
  const app: ChannelHandler = { ...echo, exceptionCaught: (_c, e) => void errors.push(e) }
  const s = await serve(t, loopFor(t), withTls(serverContext(extra), app))
  return { ...s, errors }
}

/** A node:tls client that writes `ping`; resolves with the socket once echoed, or the error. */
export function nodeClient(t: ExecutionContext, port: number, opts: tls.ConnectionOptions): Promise<{ socket: tls.TLSSocket; error?: Error }> {
  return new Promise((resolve) => {
    const socket = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem'), ...opts }, () => socket.write('ping'))
    t.teardown(() => socket.destroy())
    socket.once('data', () => resolve({ socket }))
    socket.once('error', (error) => resolve({ socket, error }))
  })
}
