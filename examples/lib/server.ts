// What the example servers share: command-line options, a server on one loop of the main
// thread or on N worker threads, and a clean shutdown on SIGINT/SIGTERM.
//
//   --port P      (or PORT=P; 0 picks a free port) the port to listen on, on 127.0.0.1
//   --threads N   (default 1) N > 1: the main thread's loop accepts and hands connections to
//                 a loop on each of N worker threads (Netty's boss and worker groups); each
//                 worker imports the example's handler module and runs its `childHandler`
//   --reuse-port  with N > 1: every worker binds its own SO_REUSEPORT listener instead
//   --stats       on SIGINT/SIGTERM, print `stats <JSON>` (each serving loop's metrics())
//   --tls         serve TLS (certs/server.pem and .key from `npm run certs`; see lib/tls.ts),
//                 with --threads N too (each worker adds the SslHandler: addWorkerTls)
//   --idle S      close connections idle for S seconds (lib/idle.ts; each server its default)
//   --proxy-protocol  read the PROXY protocol header of a load balancer first (lib/proxy.ts)
import { type Channel, type ChannelOptions, EventLoop, EventLoopGroup, type ServerChannel, ServerBootstrap } from 'netloop'
import { proxyProtocolArg, withProxyProtocol } from './proxy'
import { tlsContextArg, tlsForWorkers, withTls } from './tls'

/** The value after `name` on the command line. */
export function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

/** `--port` (or PORT), checked; `fallback` when neither is given. */
export function portArg(fallback: number): number {
  const raw = arg('--port') ?? process.env.PORT
  const port = raw === undefined ? fallback : Number(raw)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad port: ${raw}`)
  return port
}

/** `--threads`, checked (1 to 256, default 1). */
export function threadsArg(): number {
  const raw = arg('--threads') ?? '1'
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`bad --threads (1 to 256): ${raw}`)
  return n
}

export interface ExampleServer {
  /** Used in log lines and as the loop's name. */
  name: string
  defaultPort: number
  /** Sets up each accepted channel (on the main thread's loop, when threads is 1). */
  childHandler: (ch: Channel) => void
  /** The module exporting `childHandler`, imported by every worker (asked only when threads > 1). */
  handlersModule: () => string
  /** Given to each worker as `workerData` (with `idleSeconds` added, see lib/idle.ts). */
  workerData?: object
  /** The idle timeout of this run (`idleSeconds()` of lib/idle.ts), passed on to the workers. */
  idleSeconds?: number
  childOptions?: ChannelOptions
  /** Extra text after the address in the `listening on` line. */
  describe?: (how: string) => string
  /** ALPN protocols offered with `--tls`. */
  alpn?: string[]
  /** Runs first on SIGINT/SIGTERM, after the server stopped listening (before the loops shut down). */
  beforeShutdown?: (workers: EventLoopGroup | undefined) => Promise<void>
}

/** Starts the server, prints `listening on 127.0.0.1:<port> ...`, and stops on a signal. */
export async function runExample(opts: ExampleServer): Promise<{ server: ServerChannel; loop: EventLoop; workers?: EventLoopGroup }> {
  const threads = threadsArg()
  const tls = tlsContextArg(opts.alpn)
  const reusePort = process.argv.includes('--reuse-port')
  const loop = new EventLoop({ name: opts.name })
  loop.ref() // keep the process alive until the loop terminates
  const idle = opts.idleSeconds === undefined ? opts.workerData : { ...opts.workerData, idleSeconds: opts.idleSeconds }
  const proxy = proxyProtocolArg()
  // With --tls the workers add the SslHandler themselves (addWorkerTls), from this context, and
  // with --proxy-protocol the decoder in front of it (addWorkerProxyProtocol).
  const withFront = threads > 1 && (tls || proxy)
  const workerData = withFront ? { ...idle, ...(tls ? { tls: tlsForWorkers(tls) } : {}), ...(proxy ? { proxyProtocol: true } : {}) } : idle
  const workers = threads > 1 ? new EventLoopGroup({ threads, module: opts.handlersModule(), workerData }) : undefined
  workers?.on('loopTerminated', (info) => {
    if (info.cause) console.error(`${opts.name}: worker ${info.index} ended: ${info.cause.message}`)
  })
  const bootstrap = new ServerBootstrap()
  for (const [k, v] of Object.entries(opts.childOptions ?? {})) bootstrap.childOption(k as never, v as never)
  if (!workers) bootstrap.group(loop).childHandler(withProxyProtocol(proxy, withTls(tls, opts.childHandler)))
  else if (reusePort) bootstrap.group(loop, workers).option('soReusePort', true)
  else bootstrap.group(loop, workers)
  const server = await bootstrap.bind(portArg(opts.defaultPort), '127.0.0.1')
  const { address, port } = server.localAddress!
  const spread = workers ? `${threads} worker threads${reusePort ? ', SO_REUSEPORT' : ''}` : ''
  const how = [proxy ? 'PROXY protocol' : '', tls ? 'TLS' : '', spread].filter(Boolean).join(', ')
  const extra = opts.describe ? opts.describe(how) : how ? ` (${how})` : ''
  console.log(`listening on ${address}:${port}${extra}`)

  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    if (process.argv.includes('--stats')) {
      console.log(`stats ${JSON.stringify(workers ? await workers.metrics() : [loop.metrics()])}`)
    }
    await server.close()
    await opts.beforeShutdown?.(workers)
    // Shutting a loop down closes its channels first.
    await workers?.shutdownGracefully(0, 1000)
    await loop.shutdownGracefully(0, 1000)
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  return { server, loop, workers }
}

/** Runs `main`, printing an error and exiting 1 if it fails. */
export function start(main: () => Promise<unknown>): void {
  main().catch((e) => {
    console.error(e)
    process.exit(1)
  })
}
