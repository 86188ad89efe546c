// Helpers of the duplex specs (duplex-*.spec.ts): a netloop server whose accepted channels are
// handed to a Node library as `channel.toDuplex()`.
import type { ExecutionContext } from 'ava'
import { once } from 'node:events'
import type WebSocket from 'ws'
import { type Channel, ServerBootstrap } from '../index'
import { withLoop } from './helpers'

/** Binds a netloop server on 127.0.0.1:0 calling `onChannel` for each accepted channel; resolves with its port. */
export async function netloopServer(t: ExecutionContext, onChannel: (ch: Channel) => void): Promise<number> {
  const loop = withLoop(t)
  const server = await new ServerBootstrap().group(loop).childHandler(onChannel).bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  return server.localAddress!.port
}

/**
 * Checks a WebSocket whose server echoes text as `echo: <text>` and binary as it is: a text
 * message, then a 1 MiB binary one (bigger than a channel's high water mark), then a clean close.
 */
export async function checkWsEcho(t: ExecutionContext, ws: WebSocket): Promise<void> {
  const next = () => once(ws, 'message').then(([data, isBinary]) => ({ data: data as Buffer, isBinary: isBinary as boolean }))
  let reply = next()
  ws.send('hello')
  t.deepEqual(await reply.then((r) => [r.data.toString(), r.isBinary]), ['echo: hello', false])
  const big = Buffer.alloc(1 << 20)
  for (let i = 0; i < big.length; i++) big[i] = i % 251
  reply = next()
  ws.send(big)
  const r = await reply
  t.true(r.isBinary)
  t.true(r.data.equals(big))
  const closed = once(ws, 'close')
  ws.close(1000, 'bye')
  const [code, reason] = await closed
  t.is(code, 1000)
  t.is(reason.toString(), 'bye')
}
