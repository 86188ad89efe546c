// What the PROXY protocol specs share: a raw connection that writes a header first.
import { once } from 'node:events'
import * as net from 'node:net'

/** A raw TCP connection to `port` that has written `first`. */
export async function raw(port: number, first: Buffer | string): Promise<net.Socket> {
  const s = net.connect(port, '127.0.0.1')
  await once(s, 'connect')
  s.write(first)
  return s
}
