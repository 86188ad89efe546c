// A line-based chat room on netloop: each line a user types goes to everyone else.
// The room and each user's pipeline are in chat-room.ts; this file starts the server.
//
//   node --import tsx examples/chat.ts [--port 7002] [--idle 60]   # PORT=... works too; --port 0 picks one
//   nc 127.0.0.1 7002        # in two terminals; type lines; /quit leaves
//
// Options:
//   --idle S      users who send nothing for S seconds are told goodbye and closed (default 60)
//   --threads N   (default 1) with N = 1 everything runs on one loop on the main thread. With
//                 N > 1 users are served on N worker threads (the loop on the main thread
//                 accepts and hands each connection to the next worker; every worker imports
//                 chat-room.ts), and a line still reaches the users of every worker.
//   --reuse-port  with N > 1: every worker binds its own SO_REUSEPORT listener instead.
//
// What crosses threads with N > 1 (see chat-room.ts): only plain data. Each line's text is a
// string posted on a BroadcastChannel (the "hall") by the worker that read it; every other
// worker writes it to its own users. The shutdown notice and each worker's answer travel the
// same way, and the number of users is an Int32Array on a SharedArrayBuffer (given to the
// workers in workerData). Channels, handlers and JS objects holding them never cross: a
// channel is written only by the thread whose loop serves it.
import { EventLoop, EventLoopGroup, ServerBootstrap } from '../index'
import { type RoomOptions, childHandler, sayGoodbye, sayGoodbyeOnEveryWorker, setUp } from './chat-room'

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

function threadsArg(): number {
  const raw = arg('--threads') ?? '1'
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`bad --threads (1 to 256): ${raw}`)
  return n
}

async function main(): Promise<void> {
  const idleSeconds = Number(arg('--idle') ?? 60)
  if (!(idleSeconds > 0)) throw new Error(`bad --idle (seconds > 0): ${arg('--idle')}`)
  const threads = threadsArg()
  const reusePort = process.argv.includes('--reuse-port')
  const loop = new EventLoop({ name: 'chat' })
  loop.ref() // keep the process alive until the loop terminates

  let workers: EventLoopGroup | undefined
  let liveWorkers = threads
  if (threads > 1) {
    const room: RoomOptions = { idleSeconds, users: new Int32Array(new SharedArrayBuffer(4)), hall: true }
    workers = new EventLoopGroup({ threads, module: require.resolve('./chat-room'), workerData: room })
    workers.on('loopTerminated', (info) => {
      liveWorkers--
      if (info.cause) console.error(`chat: worker ${info.index} ended: ${info.cause.message}`)
    })
  } else {
    setUp({ idleSeconds, users: new Int32Array(1), hall: false })
  }

  const bootstrap = new ServerBootstrap()
  if (!workers) bootstrap.group(loop).childHandler(childHandler)
  else if (reusePort) bootstrap.group(loop, workers).option('soReusePort', true)
  else bootstrap.group(loop, workers)
  const server = await bootstrap.bind(portArg(7002), '127.0.0.1')
  const { address, port } = server.localAddress!
  const how = workers ? `${threads} worker threads${reusePort ? ', SO_REUSEPORT' : ''}; ` : ''
  console.log(`listening on ${address}:${port} (${how}idle users leave after ${idleSeconds} s)`)

  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    await server.close()
    // Every room tells its users goodbye and closes them; then the loops shut down.
    if (workers) await sayGoodbyeOnEveryWorker(liveWorkers, 2000)
    else await sayGoodbye()
    await workers?.shutdownGracefully(0, 1000)
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
