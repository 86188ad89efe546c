// HTTP/1.1 "Hello, World!" with keep-alive and pipelining, on netloop (curl and wrk work).
// The protocol (request decoder, responses) is in http-handlers.ts; this file starts the server.
//
//   node --import tsx examples/http-hello.ts [--port 8080]   # PORT=... works too; --port 0 picks one
//   curl -v http://127.0.0.1:8080/ http://127.0.0.1:8080/     # the second request reuses the connection
//   wrk -t2 -c64 -d5s http://127.0.0.1:8080/
//
// Options:
//   --threads N   (default 1) with N = 1 everything runs on one loop on the main thread. With
//                 N > 1 connections are served on N worker threads: the loop on the main
//                 thread accepts, and hands each connection to the next worker's loop (Netty's
//                 boss and worker groups); every worker imports http-handlers.ts and runs its
//                 `childHandler` for the connections it gets.
//   --reuse-port  with N > 1: every worker binds its own SO_REUSEPORT listener on the port
//                 instead, and the kernel spreads the connections.
//   --stats       on SIGINT/SIGTERM, print `stats <JSON>` (the metrics() of each loop serving
//                 connections: bytesIn, bytesOut, channels, ...) before exiting.
import { EventLoop, EventLoopGroup, ServerBootstrap } from '../index'
import { childHandler } from './http-handlers'

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
  const loop = new EventLoop({ name: 'http' })
  loop.ref() // keep the process alive until the loop terminates
  // N > 1: a loop on each of N worker threads, each running http-handlers.ts' childHandler.
  const workers = threads > 1 ? new EventLoopGroup({ threads, module: require.resolve('./http-handlers') }) : undefined
  workers?.on('loopTerminated', (info) => {
    if (info.cause) console.error(`http-hello: worker ${info.index} ended: ${info.cause.message}`)
  })

  const bootstrap = new ServerBootstrap().childOption('tcpNoDelay', true)
  if (!workers) bootstrap.group(loop).childHandler(childHandler)
  else if (reusePort) bootstrap.group(loop, workers).option('soReusePort', true)
  else bootstrap.group(loop, workers)
  const server = await bootstrap.bind(portArg(8080), '127.0.0.1')
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
