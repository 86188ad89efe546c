// Helpers of the HttpClientCodec specs (http-client*.spec.ts): a recording handler, a netloop
// client with the codec (TLS first when asked), node:http servers and raw node:net peers.
import * as http from 'node:http'
import * as net from 'node:net'
import { once } from 'node:events'
import { type Channel, HttpClientCodec, type HttpClientCodecOptions, HttpClientResponse, HttpContent, SslHandler, type ChannelHandler } from '../index'
import { dial, loopFor } from './channel-helpers'
import { clientContext } from './tls-helpers'
import { listenNode } from './http-helpers'

export type T = Parameters<typeof loopFor>[0]

/** What a client channel read: responses, body pieces, raw Buffers, errors, and whether it closed. */
export interface Seen {
  responses: HttpClientResponse[]
  contents: HttpContent[]
  raw: Buffer[]
  errors: Array<Error & { code?: string }>
  closed: boolean
}

export function recorder(seen: Seen): ChannelHandler {
  return {
    channelRead: (_ctx, m: unknown) => {
      if (m instanceof HttpClientResponse) seen.responses.push(m)
      else if (m instanceof HttpContent) seen.contents.push(m)
      else if (Buffer.isBuffer(m)) seen.raw.push(m)
    },
    exceptionCaught: (_ctx, e) => void seen.errors.push(e as Error),
    channelInactive: (ctx) => {
      seen.closed = true
      ctx.fireChannelInactive()
    },
  }
}

/** A netloop client with an HttpClientCodec (and TLS first when `tls`) connected to `port`. */
export async function client(t: T, port: number, options: HttpClientCodecOptions = {}, tls = false): Promise<{ ch: Channel; seen: Seen }> {
  const seen: Seen = { responses: [], contents: [], raw: [], errors: [], closed: false }
  const ch = await dial(loopFor(t), port, (c) => {
    if (tls) c.pipeline.addLast('tls', new SslHandler(clientContext(), { servername: 'localhost' }))
    c.pipeline.addLast('http', new HttpClientCodec(options)).addLast('app', recorder(seen))
  })
  t.teardown(() => ch.close())
  return { ch, seen }
}

export async function nodeServer(t: T, handler: http.RequestListener): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(handler)
  return { server, port: await listenNode(t, server) }
}

/** A node:net server that answers every connection with `reply(socket)` and records what it read. */
export async function rawServer(t: T, reply: (s: net.Socket, got: () => string) => void): Promise<number> {
  const sockets: net.Socket[] = []
  const server = net.createServer((s) => {
    sockets.push(s)
    let got = ''
    s.on('data', (d) => {
      got += d.toString('latin1')
      reply(s, () => got)
    })
    s.on('error', () => {})
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    for (const s of sockets) s.destroy()
    server.close()
  })
  return (server.address() as net.AddressInfo).port
}
