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
import { type RoomOptions, childHandler, sayGoodbye, sayGoodbyeOnEveryWorker, setUp } from './chat-room'
import { arg, runExample, start, threadsArg } from './lib/server'

start(async () => {
  const idleSeconds = Number(arg('--idle') ?? 60)
  if (!(idleSeconds > 0)) throw new Error(`bad --idle (seconds > 0): ${arg('--idle')}`)
  const threads = threadsArg()
  // With N > 1 every worker runs its own room; the rooms talk through a BroadcastChannel and
  // count their users together on a SharedArrayBuffer.
  const room: RoomOptions = { idleSeconds, users: new Int32Array(new SharedArrayBuffer(4)), hall: threads > 1 }
  if (threads === 1) setUp({ ...room, users: new Int32Array(1) })
  let liveWorkers = threads
  const { workers } = await runExample({
    name: 'chat',
    defaultPort: 7002,
    childHandler,
    handlersModule: () => require.resolve('./chat-room'),
    workerData: room,
    describe: (how) => ` (${how ? `${how}; ` : ''}idle users leave after ${idleSeconds} s)`,
    // Every room tells its users goodbye and closes them; then the loops shut down.
    beforeShutdown: (w) => (w ? sayGoodbyeOnEveryWorker(liveWorkers, 2000) : sayGoodbye()),
  })
  workers?.on('loopTerminated', () => liveWorkers--)
})
