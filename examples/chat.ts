// A line-based chat room on netloop: each line a user types goes to everyone else.
//
//   node --import tsx examples/chat.ts [--port 7002] [--idle 60]   # PORT=... works too; --port 0 picks one
//   nc 127.0.0.1 7002        # in two terminals; type lines; /quit leaves
//
// The pipeline:
//   IdleStateHandler (native)       fires an IdleStateEvent after `--idle` seconds without a read
//   LineBasedFrameDecoder (native)  bytes -> lines (Buffers)
//   ChatHandler                     broadcasts each line; says goodbye and closes idle users
// The room is a Set of channels: a channel joins in channelActive, leaves in channelInactive.
import {
  type Channel,
  type ChannelHandler,
  type ChannelHandlerContext,
  EventLoop,
  IdleStateEvent,
  IdleStateHandler,
  LineBasedFrameDecoder,
  ServerBootstrap,
} from '../index'

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

function portArg(fallback: number): number {
  const raw = arg('--port') ?? process.env.PORT
  const port = raw === undefined ? fallback : Number(raw)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad port: ${raw}`)
  return port
}

const idleSeconds = Number(arg('--idle') ?? 60)
if (!(idleSeconds > 0)) throw new Error(`bad --idle (seconds > 0): ${arg('--idle')}`)

/** Everyone in the room. */
const room = new Set<Channel>()

const nameOf = (ch: Channel) => {
  const a = ch.remoteAddress
  return a ? `${a.address}:${a.port}` : `#${ch.id}`
}

function broadcast(from: Channel | undefined, text: string): void {
  const line = Buffer.from(`${text}\n`)
  for (const ch of room) if (ch !== from) ch.writeAndFlush(line)
}

const QUIET_ERRORS = new Set(['ERR_CHANNEL_CLOSED', 'ECONNRESET', 'EPIPE'])

class ChatHandler implements ChannelHandler {
  #name = ''
  #leaving = false

  channelActive(ctx: ChannelHandlerContext) {
    this.#name = nameOf(ctx.channel)
    const others = room.size
    room.add(ctx.channel)
    ctx.writeAndFlush(`Welcome, ${this.#name}! ${others} other user${others === 1 ? '' : 's'} here. /quit leaves.\n`)
    broadcast(ctx.channel, `* ${this.#name} joined`)
  }

  channelRead(ctx: ChannelHandlerContext, line: Buffer) {
    const text = line.toString('utf8').replace(/\r?\n$/, '')
    if (text.trim() === '/quit') return this.#leave(ctx, 'Bye!')
    if (text.length > 0) broadcast(ctx.channel, `[${this.#name}] ${text}`)
  }

  userEventTriggered(ctx: ChannelHandlerContext, evt: unknown) {
    if (evt instanceof IdleStateEvent && evt.state === 'READER_IDLE') {
      this.#leave(ctx, `Nothing from you for ${idleSeconds} s: goodbye!`)
    } else {
      ctx.fireUserEventTriggered(evt)
    }
  }

  channelInactive(ctx: ChannelHandlerContext) {
    room.delete(ctx.channel)
    broadcast(undefined, `* ${this.#name} left`)
  }

  exceptionCaught(ctx: ChannelHandlerContext, e: Error) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ERR_TOO_LONG_FRAME') {
      ctx.writeAndFlush('That line was too long; it was dropped.\n')
      return
    }
    if (!QUIET_ERRORS.has(code ?? '')) console.error(`chat: channel ${ctx.channel.id}: ${e.message}`)
    ctx.close()
  }

  /** Says `goodbye`, then closes once it is written. */
  #leave(ctx: ChannelHandlerContext, goodbye: string) {
    if (this.#leaving) return
    this.#leaving = true
    ctx.writeAndFlush(`${goodbye}\n`, ctx.newPromise()).addListener(() => ctx.close())
  }
}

async function main(): Promise<void> {
  const loop = new EventLoop({ name: 'chat' })
  loop.ref() // keep the process alive until the loop terminates
  const server = await new ServerBootstrap()
    .group(loop)
    .childHandler((ch) => {
      ch.pipeline
        .addLast('idle', new IdleStateHandler(Math.round(idleSeconds * 1000), 0, 0))
        // Line endings are kept and stripped in ChatHandler: an empty frame (a bare Enter, with
        // stripDelimiter on) does not reach JS in this version of netloop.
        .addLast('framer', new LineBasedFrameDecoder(4096, false))
        .addLast('chat', new ChatHandler())
    })
    .bind(portArg(7002), '127.0.0.1')
  const { address, port } = server.localAddress!
  console.log(`listening on ${address}:${port} (idle users leave after ${idleSeconds} s)`)

  const stop = async () => {
    await server.close()
    const bye = Buffer.from('* the server is shutting down\n')
    await Promise.all(
      [...room].map(async (ch) => {
        await ch.writeAndFlush(bye, ch.newPromise()).then(undefined, () => undefined)
        await ch.close()
      }),
    )
    await loop.shutdownGracefully(0, 1000)
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
