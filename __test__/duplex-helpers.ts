// Helpers of the duplex specs (duplex-*.spec.ts): a netloop server whose accepted channels are
// handed to a Node library as `channel.toDuplex()`.
import type { ExecutionContext } from 'ava'
import { type Channel, ServerBootstrap } from '../index'
import { withLoop } from './helpers'

/** Binds a netloop server on 127.0.0.1:0 calling `onChannel` for each accepted channel; resolves with its port. */
export async function netloopServer(t: ExecutionContext, onChannel: (ch: Channel) => void): Promise<number> {
  const loop = withLoop(t)
  const server = await new ServerBootstrap().group(loop).childHandler(onChannel).bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  return server.localAddress!.port
}
