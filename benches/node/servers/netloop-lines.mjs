// netloop line server for benches/node/channels-vs-net.mjs: the native LineBasedFrameDecoder
// splits the stream into lines (delimiter stripped); the JS handler answers each with the line
// and '\n' (ctx.write), flushed once per read batch (channelReadComplete), as Netty does.
import { exitOnTerm, netloop, quiet, ready } from './common.mjs'

const { EventLoop, ServerBootstrap, LineBasedFrameDecoder } = netloop
const NL = Buffer.from('\n')
const handler = {
  channelRead: (ctx, line) => ctx.write(Buffer.concat([line, NL], line.length + 1)),
  channelReadComplete: (ctx) => ctx.flush(),
  exceptionCaught: quiet.exceptionCaught,
}

const loop = new EventLoop({ name: 'bench-lines' })
loop.ref()
const server = await new ServerBootstrap()
  .group(loop)
  .childOption('tcpNoDelay', true)
  .childHandler((ch) => {
    ch.pipeline.addLast('frames', new LineBasedFrameDecoder(64 * 1024)).addLast('reply', handler)
  })
  .bind(0, '127.0.0.1')
exitOnTerm(loop)
ready(server.localAddress.port)
