// node:cluster with N worker processes, for benches/node/scaling.mjs: the primary listens (on
// Linux it accepts and sends each connection to a worker round robin, over IPC), the workers
// serve. Same handlers as scaling-net-threads.mjs.
//
//   node scaling-cluster.mjs --app echo|resp --procs N [--resp-handler FILE]
//
// Prints the port on stdout once every worker listens; on SIGTERM prints
// {"scaling":{"workers":[{pid,connections}...]}} on stderr and exits.
import cluster from 'node:cluster'
import net from 'node:net'

const arg = (name) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const app = arg('--app') ?? 'echo'

if (cluster.isPrimary) {
  const procs = Number(arg('--procs') ?? 2)
  // A free port first: workers then all listen on it (the primary owns the listener).
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port
      s.close(() => resolve(p))
    })
  })
  cluster.setupPrimary({ stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  const workers = Array.from({ length: procs }, () => cluster.fork({ SCALING_PORT: String(port) }))
  await Promise.all(workers.map((w) => new Promise((resolve) => w.once('listening', resolve))))
  process.once('SIGTERM', async () => {
    const stats = await Promise.all(workers.map((w) => new Promise((resolve) => { w.once('message', resolve); w.send('stats') })))
    process.stderr.write(`${JSON.stringify({ scaling: { workers: stats } })}\n`)
    for (const w of workers) w.process.kill('SIGKILL')
    process.exit(0)
  })
  process.stdout.write(`${port}\n`)
} else {
  const stats = { pid: process.pid, connections: 0 }
  const respHandler = arg('--resp-handler')
  const handler = app === 'resp' ? (await import(respHandler)).onConnection : (socket) => socket.on('data', (d) => socket.write(d))
  net
    .createServer({ noDelay: true }, (socket) => {
      stats.connections++
      socket.on('error', () => {})
      handler(socket)
    })
    .listen(Number(process.env.SCALING_PORT), '127.0.0.1')
  process.on('message', () => process.send(stats))
  process.on('SIGTERM', () => {})
}
