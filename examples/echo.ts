// The simplest netloop server: every byte a client sends comes back (Netty's EchoServer).
//
//   node --import tsx examples/echo.ts [--port 7000]     # PORT=... works too; --port 0 picks one
//   nc 127.0.0.1 7000
//   --tls: serve TLS (see lib/tls.ts); try it with examples/tls-echo-client.ts
//
// Bytes are written in channelRead and flushed once per read batch in channelReadComplete,
// as in Netty's EchoServerHandler.
import { type Channel, EventLoop, ServerBootstrap, type ChannelHandler } from '../index'
import { portArg, start } from './lib/server'
import { tlsContextArg, withTls } from './lib/tls'


const echo: ChannelHandler = {
  channelRead(ctx, msg: Buffer) {
    ctx.write(msg)
  },
  channelReadComplete(ctx) {
    ctx.flush()
  },
  exceptionCaught(ctx, err) {
    console.error(`echo: channel ${ctx.channel.id}: ${err.message}`)
    ctx.close()
  },
}

async function main(): Promise<void> {
  const loop = new EventLoop({ name: 'echo' })
  // Keep the process alive until the loop terminates (see the SIGINT handler below).
  loop.ref()
  const channels = new Set<Channel>()
  const server = await new ServerBootstrap()
    .group(loop)
    .childHandler(
      withTls(tlsContextArg(), (ch) => {
        channels.add(ch)
        ch.closeFuture.then(() => channels.delete(ch))
        ch.pipeline.addLast('echo', echo)
      }),
    )
    .bind(portArg(7000), '127.0.0.1')
  const { address, port } = server.localAddress!
  console.log(`listening on ${address}:${port}`)

  const stop = async () => {
    await server.close()
    await Promise.all([...channels].map((ch) => ch.close()))
    await loop.shutdownGracefully(0, 1000)
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

start(main)
