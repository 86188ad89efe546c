// netloop echo server for benches/node/channels-vs-net.mjs.
//   node netloop-echo.mjs            channelRead: (ctx, m) => ctx.writeAndFlush(m)
//   node netloop-echo.mjs --batched  ctx.write in channelRead, ctx.flush() in channelReadComplete
//   --auto-release                   the handler sets `autoRelease: true` (its large reads are
//                                    detached when it returns)
import { exitOnTerm, netloop, quiet, ready } from './common.mjs'

const { EventLoop, ServerBootstrap } = netloop
const batched = process.argv.includes('--batched')
const autoRelease = process.argv.includes('--auto-release')
const handler = batched
  ? { autoRelease, channelRead: (ctx, m) => ctx.write(m), channelReadComplete: (ctx) => ctx.flush(), exceptionCaught: quiet.exceptionCaught }
  : { autoRelease, channelRead: (ctx, m) => ctx.writeAndFlush(m), exceptionCaught: quiet.exceptionCaught }

const loop = new EventLoop({ name: 'bench-echo' })
loop.ref()
const server = await new ServerBootstrap()
  .group(loop)
  .childOption('tcpNoDelay', true)
  .childHandler((ch) => {
    ch.pipeline.addLast('echo', handler)
  })
  .bind(0, '127.0.0.1')
exitOnTerm(loop)
ready(server.localAddress.port)
