// The chat room's connections (chat.ts runs it): the pipeline of each user, and the room.
//
// The pipeline:
//   IdleStateHandler (native)       fires an IdleStateEvent after `idleSeconds` without a read
//   LineBasedFrameDecoder (native)  bytes -> lines (Buffers)
//   ChatHandler                     broadcasts each line; says goodbye and closes idle users
//
// The room of a thread is a Set of the channels of its loop: a channel joins in channelActive,
// leaves in channelInactive, and only this thread ever writes to them. With `--threads N`
// every worker thread imports this module and has its own room; a line said on one worker
// reaches the users of the others through the "hall", a BroadcastChannel that every worker
// opens under the same name: each worker posts the text it broadcasts and writes what the
// others post to its own users. What crosses threads is plain data only: the text of lines
// (strings), the shutdown notice and its answers, and the count of users (an Int32Array on a
// SharedArrayBuffer, changed with Atomics). Channels, handlers and the room never do.
import { BroadcastChannel, isMainThread, threadId, workerData } from 'node:worker_threads'
import { type Channel, type ChannelHandler, type ChannelHandlerContext, IdleStateEvent, IdleStateHandler, LineBasedFrameDecoder } from 'netloop'
import { addWorkerProxyProtocol } from './lib/proxy'
import { addWorkerTls } from './lib/tls'

/** What chat.ts gives the room of each thread (as `workerData` to the workers). */
export interface RoomOptions {
  idleSeconds: number
  /** `users[0]`: the users in the room on every thread (on a SharedArrayBuffer with N > 1). */
  users: Int32Array
  /** True with `--threads N`: the rooms of the threads are joined through the hall. */
  hall: boolean
}

/** Messages on the hall: a line for everyone, the shutdown notice, a worker's answer to it. */
type HallMessage = { line: string } | { shutdown: true } | { saidGoodbye: number }

const HALL = 'netloop-chat-hall'

let options: RoomOptions = workerData as RoomOptions

/** Main thread, one loop: the options of the room (the workers get theirs as workerData). */
export function setUp(o: RoomOptions): void {
  options = o
}

/** The users on this thread's loop. */
const room = new Set<Channel>()
/** Set once the server shuts down: users leaving then are not announced. */
let closing = false

/** This worker's end of the hall (with --threads N). */
let hall: BroadcastChannel | undefined
if (!isMainThread && options.hall) {
  hall = new BroadcastChannel(HALL)
  hall.unref() // the worker exits once its loop has shut down, as without the hall
  hall.onmessage = (e) => {
    const m = e.data as HallMessage
    if ('line' in m) deliver(undefined, m.line)
    else if ('shutdown' in m) void sayGoodbye().then(() => hall!.postMessage({ saidGoodbye: threadId } satisfies HallMessage))
  }
}

/**
 * Writes `text` to the users of this thread, but `from`. A user who does not read what the
 * room says (more than the high water mark, 64 KiB, waits to be sent to it) is closed instead
 * of having the room's lines queued for it for ever (IRC servers' "SendQ exceeded").
 */
function deliver(from: Channel | undefined, text: string): void {
  const line = Buffer.from(`${text}\n`)
  for (const ch of room) {
    if (ch === from) continue
    if (ch.isWritable) ch.writeAndFlush(line)
    else {
      room.delete(ch)
      ch.close()
    }
  }
}

/** Writes `text` to every user of every thread, but `from`. */
function broadcast(from: Channel | undefined, text: string): void {
  deliver(from, text)
  hall?.postMessage({ line: text } satisfies HallMessage)
}

const nameOf = (ch: Channel) => {
  const a = ch.remoteAddress
  return a ? `${a.address}:${a.port}` : `#${ch.id}`
}

const QUIET_ERRORS = new Set(['ERR_CHANNEL_CLOSED', 'ECONNRESET', 'EPIPE'])

class ChatHandler implements ChannelHandler {
  #name = ''
  #leaving = false

  channelActive(ctx: ChannelHandlerContext) {
    this.#name = nameOf(ctx.channel)
    const others = Atomics.add(options.users, 0, 1)
    room.add(ctx.channel)
    const where = hall ? ` (you are on worker thread ${threadId})` : ''
    ctx.writeAndFlush(`Welcome, ${this.#name}! ${others} other user${others === 1 ? '' : 's'} here${where}. /quit leaves.\n`)
    broadcast(ctx.channel, `* ${this.#name} joined`)
  }

  channelRead(ctx: ChannelHandlerContext, line: Buffer) {
    const text = line.toString('utf8').replace(/\r?\n$/, '')
    if (text.trim() === '/quit') return this.#leave(ctx, 'Bye!')
    if (text.length > 0) broadcast(ctx.channel, `[${this.#name}] ${text}`)
  }

  userEventTriggered(ctx: ChannelHandlerContext, evt: unknown) {
    if (evt instanceof IdleStateEvent && evt.state === 'READER_IDLE') {
      this.#leave(ctx, `Nothing from you for ${options.idleSeconds} s: goodbye!`)
    } else {
      ctx.fireUserEventTriggered(evt)
    }
  }

  channelInactive(ctx: ChannelHandlerContext) {
    room.delete(ctx.channel)
    Atomics.sub(options.users, 0, 1)
    if (!closing) broadcast(undefined, `* ${this.#name} left`)
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

  /** Says `goodbye`, then closes once it is written; the room writes it nothing after. */
  #leave(ctx: ChannelHandlerContext, goodbye: string) {
    if (this.#leaving) return
    this.#leaving = true
    // Out of the room now, not at channelInactive: a line said (or a `left` from another
    // worker) between the goodbye and the close would otherwise reach the user after it.
    room.delete(ctx.channel)
    ctx.writeAndFlush(`${goodbye}\n`, ctx.newPromise()).addListener(() => ctx.close())
  }
}

/**
 * Sets up each user's pipeline, on the loop that serves it: the main thread's loop, or
 * (--threads N) a worker's loop, where netloop's worker calls it for every connection.
 */
export function childHandler(ch: Channel): void {
  addWorkerTls(ch) // --tls --threads N: TLS first, from the main thread's context
  addWorkerProxyProtocol(ch) // --proxy-protocol --threads N: the PROXY header decoder before it
  ch.pipeline
    .addLast('idle', new IdleStateHandler(Math.round(options.idleSeconds * 1000), 0, 0))
    // Line endings are kept, and stripped in ChatHandler.
    .addLast('framer', new LineBasedFrameDecoder(4096, false))
    .addLast('chat', new ChatHandler())
}

/** Tells this thread's users the server is going away, and closes them once it is written. */
export async function sayGoodbye(): Promise<void> {
  closing = true
  const bye = Buffer.from('* the server is shutting down\n')
  // The room empties at once: nothing said meanwhile reaches a user after the notice.
  const users = [...room]
  room.clear()
  await Promise.all(
    users.map(async (ch) => {
      await ch.writeAndFlush(bye, ch.newPromise()).then(undefined, () => undefined)
      await ch.close()
    }),
  )
}

/**
 * Main thread, --threads N: asks the room of every worker to say goodbye (`sayGoodbye` there);
 * resolves once `workers` of them answered, or after `timeoutMs`.
 */
export function sayGoodbyeOnEveryWorker(workers: number, timeoutMs: number): Promise<void> {
  const bc = new BroadcastChannel(HALL)
  return new Promise((resolve) => {
    let answers = 0
    const done = () => {
      clearTimeout(timer)
      bc.close()
      resolve()
    }
    const timer = setTimeout(done, timeoutMs)
    bc.onmessage = (e) => {
      if ('saidGoodbye' in (e.data as HallMessage) && ++answers >= workers) done()
    }
    bc.postMessage({ shutdown: true } satisfies HallMessage)
  })
}
