// A TCP proxy on netloop (Netty's HexDumpProxy pattern), with back-pressure both ways.
//
//   node --import tsx examples/proxy.ts --target 127.0.0.1:7000 [--port 7001]   # PORT=... works too
//   nc 127.0.0.1 7001        # talks to whatever listens on the target (try examples/echo.ts)
//   printf 'hello\n' | nc -N 127.0.0.1 7001   # half-closes after sending: the reply still comes back
//   --dump                   # also prints a hex dump of what passes (like HexDumpProxy)
//   --idle S                 # closes both sides after S seconds without traffic either way
//                            # (default 300; 0: never)
//   --send-proxy, --send-proxy-v2   # tells the target who the client is: a PROXY protocol
//                            # header (version 1 or 2) first on each outbound connection, as
//                            # HAProxy's `send-proxy` does (for a target that reads it, e.g. a
//                            # netloop server with HAProxyMessageDecoder, or `--proxy-protocol`)
//
// For each accepted ("inbound") channel, reading stays off (`autoRead` false) until the
// "outbound" channel to the target is connected, on the same loop
// (`new Bootstrap().group(inbound.eventLoop)`): nothing is read that could not be forwarded.
// Bytes are forwarded as they arrive and flushed once per read batch. When the receiving side
// cannot keep up (`isWritable` false: more than the high water mark pending), the sending side
// stops reading (`config.autoRead = false`) until `channelWritabilityChanged` says it drained.
// When one side closes, the other is flushed, then closed. A read is written to the peer
// inside channelRead and kept nowhere, so the handlers set `autoRelease`: large reads are
// released as soon as they return (docs/guide.md).
//
// Half-closure: both channels have `allowHalfClosure`, so a peer's FIN arrives as a
// ChannelInputShutdownEvent instead of closing its channel. The FIN is passed on (the other
// channel's output is shut down once what was forwarded is flushed): a client that sends a
// request and shuts its output down still gets the target's reply, which the target sends
// before it closes (or half-closes) its side. Once both directions are done, both close.
import { Bootstrap, type Channel, ChannelInputShutdownEvent, type ChannelHandler, type ChannelHandlerContext, EventLoop, HAProxyMessage, ServerBootstrap } from 'netloop'
import { addIdleTimeout, idleSeconds } from './lib/idle'
import { arg, portArg, start } from './lib/server'



function targetArg(): { host: string; port: number } {
  const raw = arg('--target') ?? process.env.TARGET ?? '127.0.0.1:7000'
  const i = raw.lastIndexOf(':')
  const port = Number(raw.slice(i + 1))
  if (i <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`bad --target (host:port): ${raw}`)
  return { host: raw.slice(0, i).replace(/^\[(.*)\]$/, '$1'), port }
}

const dump = process.argv.includes('--dump')
/** The PROXY protocol version to send the target first, if any. */
const sendProxy = process.argv.includes('--send-proxy-v2') ? 2 : process.argv.includes('--send-proxy') ? 1 : undefined
const idle = idleSeconds(300)

/** Every open channel, both sides, to close them all on SIGINT. */
const channels = new Set<Channel>()
function track(ch: Channel): void {
  channels.add(ch)
  ch.closeFuture.then(() => channels.delete(ch))
}

/** Closes `ch` once everything written to it so far has gone out (Netty's closeOnFlush). */
function closeOnFlush(ch: Channel): void {
  if (!ch.isActive) {
    ch.close()
    return
  }
  ch.writeAndFlush(Buffer.alloc(0), ch.newPromise()).addListener(() => ch.close())
}

const QUIET_ERRORS = new Set(['ERR_CHANNEL_CLOSED', 'ECONNRESET', 'EPIPE'])

function logError(side: string, ctx: ChannelHandlerContext, e: Error): void {
  if (!QUIET_ERRORS.has((e as NodeJS.ErrnoException).code ?? '')) console.error(`proxy: ${side} channel ${ctx.channel.id}: ${e.message}`)
}

/**
 * Forwards what `ctx.channel` reads to `peer`, with back-pressure: reading pauses while `peer` is
 * unwritable. The same handler serves both directions; `Frontend` adds the connect step.
 */
class Relay implements ChannelHandler {
  readonly autoRelease = true
  peer: Channel | undefined
  /** The relay of the other direction. */
  peerRelay: Relay | undefined
  /** This channel's peer sent its FIN. */
  inputShut = false

  constructor(readonly side: 'inbound' | 'outbound') {}

  channelRead(ctx: ChannelHandlerContext, msg: Buffer) {
    if (dump) console.log(`${this.side === 'inbound' ? '>>' : '<<'} ${ctx.channel.id} ${msg.length} B\n${hexDump(msg)}`)
    this.peer!.write(msg)
  }

  channelReadComplete(ctx: ChannelHandlerContext) {
    const peer = this.peer
    if (!peer) return
    peer.flush()
    // The peer is behind: stop reading until it drains (its handler turns reading back on).
    if (!peer.isWritable) ctx.channel.config.autoRead = false
  }

  /** This channel drained below its low water mark: the peer may read again. */
  channelWritabilityChanged(ctx: ChannelHandlerContext) {
    if (ctx.channel.isWritable && this.peer?.isOpen) this.peer.config.autoRead = true
  }

  /** This channel's peer shut its output down (it sends no more): pass the FIN on. */
  userEventTriggered(ctx: ChannelHandlerContext, evt: unknown) {
    if (evt !== ChannelInputShutdownEvent.INSTANCE) {
      ctx.fireUserEventTriggered(evt)
      return
    }
    this.inputShut = true
    const peer = this.peer
    if (!peer) {
      // Not connected to the target yet (the inbound side reads only once it is): close.
      ctx.close()
    } else if (this.peerRelay?.inputShut) {
      // Both directions are done.
      closeOnFlush(peer)
      closeOnFlush(ctx.channel)
    } else {
      // Shuts the peer's output down after what was forwarded (flushed here) is written.
      peer.flush()
      peer.shutdownOutput().catch(() => closeOnFlush(peer))
    }
  }

  channelInactive() {
    if (this.peer) closeOnFlush(this.peer)
  }

  exceptionCaught(ctx: ChannelHandlerContext, e: Error) {
    logError(this.side, ctx, e)
    closeOnFlush(ctx.channel)
  }
}

/** The inbound side: connects to the target when a client arrives, then starts relaying. */
class Frontend extends Relay {
  constructor(readonly target: { host: string; port: number }) {
    super('inbound')
  }

  async channelActive(ctx: ChannelHandlerContext) {
    const inbound = ctx.channel
    const backend = new Relay('outbound')
    backend.peer = inbound
    backend.peerRelay = this
    this.peerRelay = backend
    let outbound: Channel
    try {
      outbound = await new Bootstrap()
        .group(inbound.eventLoop) // same loop: both channels' handlers run on one thread
        .option('autoRead', false)
        .option('allowHalfClosure', true)
        .handler((ch) => {
          track(ch)
          ch.pipeline.addLast('relay', backend)
          addIdleTimeout(ch, idle)
        })
        .connect(this.target.port, this.target.host)
    } catch (e) {
      console.error(`proxy: cannot reach ${this.target.host}:${this.target.port}: ${(e as Error).message}`)
      inbound.close()
      return
    }
    if (!inbound.isActive) {
      outbound.close()
      return
    }
    this.peer = outbound
    if (sendProxy) outbound.writeAndFlush(HAProxyMessage.tcp(inbound.remoteAddress!, inbound.localAddress!).encode(sendProxy))
    inbound.config.autoRead = true
    outbound.config.autoRead = true
  }
}

/** Lines of `offset | hex | ascii`, 16 bytes each (the gist of Netty's ByteBufUtil.prettyHexDump). */
function hexDump(b: Buffer): string {
  const lines: string[] = []
  for (let i = 0; i < b.length && i < 256; i += 16) {
    const row = b.subarray(i, i + 16)
    const hex = [...row].map((x) => x.toString(16).padStart(2, '0')).join(' ')
    const ascii = [...row].map((x) => (x >= 0x20 && x < 0x7f ? String.fromCharCode(x) : '.')).join('')
    lines.push(`${i.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  |${ascii}|`)
  }
  if (b.length > 256) lines.push(`... ${b.length - 256} more bytes`)
  return lines.join('\n')
}

async function main(): Promise<void> {
  const target = targetArg()
  const loop = new EventLoop({ name: 'proxy' })
  loop.ref() // keep the process alive until the loop terminates
  const server = await new ServerBootstrap()
    .group(loop)
    .childOption('autoRead', false) // read nothing before the outbound side is connected
    .childOption('allowHalfClosure', true)
    .childHandler((ch) => {
      track(ch)
      ch.pipeline.addLast('frontend', new Frontend(target))
      addIdleTimeout(ch, idle)
    })
    .bind(portArg(7001), '127.0.0.1')
  const { address, port } = server.localAddress!
  console.log(`listening on ${address}:${port}, proxying to ${target.host}:${target.port}`)

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
