import test from 'ava'
import * as net from 'node:net'

import { ChannelInputShutdownEvent, type ChannelHandler, type ChannelOptions } from '../index'
import { loopFor, serve } from './channel-helpers'

const SENT = 4 * 1024 * 1024

/** examples/echo.ts's handler, plus a half-close once the client's input ended. */
const echo: ChannelHandler = {
  channelRead: (ctx, msg) => void ctx.write(msg as Buffer),
  channelReadComplete: (ctx) => void ctx.flush(),
  userEventTriggered: (ctx, evt) => {
    if (evt instanceof ChannelInputShutdownEvent) ctx.channel.shutdownOutput().catch(() => {})
  },
  // Without half-closure the writes still queued fail when the FIN closes the channel.
  exceptionCaught: () => {},
}

/** Sends SENT bytes without reading, half-closes, then reads until the server is done. */
function sendHalfCloseReadAll(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    let got = 0
    s.pause()
    s.on('data', (d) => (got += d.length))
    s.on('error', () => resolve(got))
    s.on('close', () => resolve(got))
    s.on('connect', () => {
      s.end(Buffer.alloc(SENT, 5), () => s.resume())
    })
    s.setTimeout(30_000, () => reject(new Error(`stuck after ${got} bytes`)))
  })
}

async function echoServer(t: Parameters<typeof loopFor>[0], options: ChannelOptions): Promise<number> {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => ch.pipeline.addLast('echo', echo), { soSndbuf: 16 * 1024, ...options })
  return port
}

test('with allowHalfClosure a half-closing client reads the whole backed-up reply before the FIN', async (t) => {
  const port = await echoServer(t, { allowHalfClosure: true })
  t.is(await sendHalfCloseReadAll(port), SENT)
})

test('without allowHalfClosure the client FIN closes the channel and the reply still queued is dropped', async (t) => {
  const port = await echoServer(t, {})
  const got = await sendHalfCloseReadAll(port)
  t.true(got < SENT, `got ${got} of ${SENT}`)
})
