// A Redis-protocol (RESP2) server on netloop: redis-cli and redis-benchmark work against it.
// The protocol (decoder, encoder, commands, keyspace) is in resp-handlers.ts; this file starts
// the server.
//
//   node --import tsx examples/resp-server.ts [--port 6380]   # PORT=... works too; --port 0 picks one
//   redis-cli -p 6380 set greeting hello     # then: get greeting, incr n, del a b, exists a b, ...
//   redis-benchmark -p 6380 -t ping,set,get -P 16 -q
//   nc 127.0.0.1 6380                         # inline commands: type PING, SET a 1, GET a
//
// Options:
//   --threads N   (default 1) with N = 1 everything runs on one loop on the main thread. With
//                 N > 1 connections are served on N worker threads: the loop on the main
//                 thread accepts, and hands each connection to the next worker's loop (Netty's
//                 boss and worker groups); every worker imports resp-handlers.ts and runs its
//                 `childHandler` for the connections it gets.
//   --reuse-port  with N > 1: every worker binds its own SO_REUSEPORT listener on the port
//                 instead, and the kernel spreads the connections.
//   --stats       on SIGINT/SIGTERM, print `stats <JSON>` (the metrics() of each loop serving
//                 connections: bytesIn, bytesOut, channels, ...) before exiting.
//
// !! With N > 1 EACH WORKER HAS ITS OWN KEYSPACE. A SET on one connection is not visible to a
// !! GET on a connection that another worker serves; DBSIZE and FLUSHALL see one worker's keys.
// !! A real multi-threaded store would shard the keys across the workers (sending each
// !! command to the worker that owns its key) or keep them in shared memory. Use N = 1 (the
// !! default) for Redis semantics; N > 1 shows the threading, e.g. under redis-benchmark,
// !! whose connections each read back only keys they themselves wrote.
import { EventLoop, EventLoopGroup, ServerBootstrap } from '../index'
import { childHandler } from './resp-handlers'

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
  const threads = threadsArg()
  const reusePort = process.argv.includes('--reuse-port')
  const loop = new EventLoop({ name: 'resp' })
  loop.ref() // keep the process alive until the loop terminates
  // N > 1: a loop on each of N worker threads, each running resp-handlers.ts' childHandler.
  const workers = threads > 1 ? new EventLoopGroup({ threads, module: require.resolve('./resp-handlers') }) : undefined
  workers?.on('loopTerminated', (info) => {
    if (info.cause) console.error(`resp-server: worker ${info.index} ended: ${info.cause.message}`)
  })

  const bootstrap = new ServerBootstrap().childOption('tcpNoDelay', true)
  if (!workers) bootstrap.group(loop).childHandler(childHandler)
  else if (reusePort) bootstrap.group(loop, workers).option('soReusePort', true)
  else bootstrap.group(loop, workers)
  const server = await bootstrap.bind(portArg(6380), '127.0.0.1')
  const { address, port } = server.localAddress!
  const how = reusePort ? ', SO_REUSEPORT' : ''
  console.log(`listening on ${address}:${port}${workers ? ` (${threads} worker threads${how})` : ''}`)

  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    if (process.argv.includes('--stats')) {
      console.log(`stats ${JSON.stringify(workers ? await workers.metrics() : [loop.metrics()])}`)
    }
    await server.close()
    // Shutting a loop down closes its channels first.
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
