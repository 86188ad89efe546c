// The simplest netloop server: every byte a client sends comes back (Netty's EchoServer).
//
//   node --import tsx examples/echo.ts [--port 7000] [--idle 60]   # PORT=... works too; --port 0 picks one
//   nc 127.0.0.1 7000
//   --tls: serve TLS (see lib/tls.ts); try it with examples/tls-echo-client.ts
//   printf 'hello\n' | nc -N 127.0.0.1 7000   # half-closes after sending: the reply still comes back
//
// Bytes are written in channelRead and flushed once per read batch in channelReadComplete,
// as in Netty's EchoServerHandler. The handler keeps nothing past channelRead
// (`autoRelease`): large reads are released as soon as it returns (docs/guide.md).
//
// Backpressure (Netty's pattern): a client that sends without reading the echoes would make
// the server queue everything it sends. So while the channel is not writable (more than the
// high water mark, 64 KiB, waits to be sent) the server stops reading it (`autoRead` off), and
// reads again once it drained (`channelWritabilityChanged`): TCP then holds the client back.
// What a broken connection's queued writes report (each fails when the channel closes) is
// logged once per channel.
//
// A client that half-closes (shuts its output down: `nc -N`, `socket.end()`) still gets
// everything back: with `allowHalfClosure` its FIN arrives as a ChannelInputShutdownEvent
// instead of closing the channel, and the channel closes once what is queued has been written.
// Without allowHalfClosure the FIN would close the channel through the pipeline right after
// the reads before it, whatever is still to be echoed.
//
// --idle S   a connection that sent and received nothing for S seconds is closed (default 60;
//            0: never), so a silent peer cannot hold a connection forever.
import { type Channel, ChannelInputShutdownEvent, EventLoop, ServerBootstrap, type ChannelHandler } from 'netloop'
import { addIdleTimeout, idleSeconds } from './lib/idle'
import { portArg, start } from './lib/server'
import { tlsContextArg, withTls } from './lib/tls'

/** Channels whose failure was logged: the next exceptions of a broken channel are its queued writes failing. */
const reported = new WeakSet<Channel>()

const echo: ChannelHandler = {
  autoRelease: true,
  channelRead(ctx, msg: Buffer) {
    ctx.write(msg)
  },
  channelReadComplete(ctx) {
    ctx.flush()
  },
  channelWritabilityChanged(ctx) {
    // Read only while the echoes drain (fires inside the write that crossed the high mark).
    ctx.channel.config.autoRead = ctx.channel.isWritable
    ctx.fireChannelWritabilityChanged()
  },
  userEventTriggered(ctx, evt) {
    // The client is done sending: close once everything it sent has been echoed.
    if (evt === ChannelInputShutdownEvent.INSTANCE) ctx.writeAndFlush(Buffer.alloc(0), ctx.newPromise()).addListener(() => ctx.close())
    else ctx.fireUserEventTriggered(evt)
  },
  exceptionCaught(ctx, err) {
    if (!reported.has(ctx.channel)) console.error(`echo: channel ${ctx.channel.id}: ${err.message}`)
    reported.add(ctx.channel)
    ctx.close()
  },
}

async function main(): Promise<void> {
  const idle = idleSeconds(60)
  const loop = new EventLoop({ name: 'echo' })
  // Keep the process alive until the loop terminates (see the SIGINT handler below).
  loop.ref()
  const channels = new Set<Channel>()
  const server = await new ServerBootstrap()
    .group(loop)
    .childOption('allowHalfClosure', true)
    .childHandler(
      withTls(tlsContextArg(), (ch) => {
        channels.add(ch)
        ch.closeFuture.then(() => channels.delete(ch))
        ch.pipeline.addLast('echo', echo)
        addIdleTimeout(ch, idle)
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
