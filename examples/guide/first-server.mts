// A first server: every line a client sends comes back upper-cased.
import { EventLoop, ServerBootstrap } from 'netloop'

const loop = new EventLoop()
const server = await new ServerBootstrap()
  .group(loop)
  .childOption('tcpNoDelay', true)
  .childHandler((ch) => {
    ch.pipeline.addLast('shout', {
      channelActive: (ctx) => ctx.writeAndFlush('hello, shout at me\n'),
      channelRead: (ctx, msg: Buffer) => ctx.writeAndFlush(msg.toString().toUpperCase()),
      exceptionCaught: (ctx, err) => {
        console.error(`channel ${ctx.channel.id}:`, err)
        ctx.close()
      },
    })
  })
  .bind(Number(process.env.PORT ?? 0), '127.0.0.1')

console.log(`listening on 127.0.0.1:${server.localAddress!.port}`)
process.once('SIGINT', () => loop.shutdownGracefully(0, 1000))
