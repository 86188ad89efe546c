// A mixed pipeline: native framing in and out, JS logic in the middle.
//   in:  bytes -> LengthFieldBasedFrameDecoder (native) -> JSON parser (JS) -> app (JS)
//   out: app writes an object -> JSON encoder (JS) -> LengthFieldPrepender (native) -> socket
import {
  type ChannelHandler,
  EventLoop,
  IdleStateEvent,
  IdleStateHandler,
  LengthFieldBasedFrameDecoder,
  LengthFieldPrepender,
  ServerBootstrap,
} from 'netloop'

const json: ChannelHandler = {
  // Inbound: one frame (a Buffer) becomes one JS value for the handlers after this one.
  channelRead: (ctx, frame: Buffer) => ctx.fireChannelRead(JSON.parse(frame.toString())),
  // Outbound: any JS value becomes bytes before it reaches the native prepender.
  write: (ctx, msg, promise) => ctx.write(JSON.stringify(msg), promise),
}

const app: ChannelHandler = {
  channelRead: (ctx, req: { op: string; a: number; b: number }) => {
    ctx.writeAndFlush(req.op === 'add' ? { ok: true, sum: req.a + req.b } : { ok: false, error: `unknown op ${req.op}` })
  },
  userEventTriggered: (ctx, evt) => {
    if (evt instanceof IdleStateEvent) ctx.close() // silent for 30 s: hang up
  },
  exceptionCaught: (ctx, err) => {
    // A bad frame (ERR_TOO_LONG_FRAME) or bad JSON (a SyntaxError from the parser) ends up here.
    ctx.writeAndFlush({ ok: false, error: (err as { code?: string }).code ?? err.message })
  },
}

const loop = new EventLoop()
const server = await new ServerBootstrap()
  .group(loop)
  .childHandler((ch) => {
    ch.pipeline
      .addLast('idle', new IdleStateHandler(30_000, 0, 0))
      .addLast('framer', new LengthFieldBasedFrameDecoder(64 * 1024, 0, 4, { initialBytesToStrip: 4 }))
      .addLast('prepender', new LengthFieldPrepender(4))
      .addLast('json', json)
      .addLast('app', app)
  })
  .bind(Number(process.env.PORT ?? 0), '127.0.0.1')

console.log(`listening on 127.0.0.1:${server.localAddress!.port}`)
process.once('SIGINT', () => loop.shutdownGracefully(0, 1000))
