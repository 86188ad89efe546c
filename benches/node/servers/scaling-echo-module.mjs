// Worker module of benches/node/scaling.mjs (netloop echo): every worker loop of the group
// imports it and runs childHandler for the connections it gets. Same handler as
// netloop-echo.mjs: channelRead: (ctx, m) => ctx.writeAndFlush(m).
export function childHandler(ch) {
  ch.pipeline.addLast('echo', {
    channelRead: (ctx, m) => ctx.writeAndFlush(m),
    exceptionCaught: (ctx) => ctx.close(),
  })
}
