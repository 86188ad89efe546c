// netloop server for benches/node/scaling.mjs: a boss loop on the main thread and a group of
// N loops on worker threads (issue 8), set up as examples/resp-server.ts does it.
//
//   node scaling-netloop.mjs --module FILE --threads N [--reuse-port] [--spin-us N]
//
// --module: the workers' module (childHandler): scaling-echo-module.mjs, or the example's own
// resp-handlers.ts compiled by the harness. Without --reuse-port the boss loop accepts and hands
// each connection to the next worker loop; with it every worker binds its own SO_REUSEPORT
// listener. Prints the port on stdout; on SIGTERM prints
// {"scaling":{"boss":metrics,"workers":[metrics...]}} on stderr and exits.
import { netloop, ready } from './common.mjs'

const { EventLoop, EventLoopGroup, ServerBootstrap } = netloop
const arg = (name) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const threads = Number(arg('--threads') ?? 1)
const reusePort = process.argv.includes('--reuse-port')
const module = arg('--module')
// --spin-us: the worker loops' spinBeforeSleepMicros (default: the library's).
const spin = arg('--spin-us')
if (!module) throw new Error('--module FILE is required')

const loop = new EventLoop({ name: 'scaling-boss' })
loop.ref()
const workers = new EventLoopGroup({ threads, module, ...(spin === undefined ? {} : { spinBeforeSleepMicros: Number(spin) }) })
workers.on('loopTerminated', (info) => {
  if (info.cause) console.error(`scaling-netloop: worker ${info.index} ended: ${info.cause.message}`)
})
const b = new ServerBootstrap().group(loop, workers).childOption('tcpNoDelay', true)
if (reusePort) b.option('soReusePort', true)
const server = await b.bind(0, '127.0.0.1')

process.once('SIGTERM', async () => {
  const out = { boss: loop.metrics(), workers: await workers.metrics() }
  process.stderr.write(`${JSON.stringify({ scaling: out })}\n`)
  process.exit(0)
})
ready(server.localAddress.port)
