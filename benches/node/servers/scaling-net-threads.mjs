// node:net on N worker threads of one process sharing one listening fd, for
// benches/node/scaling.mjs. Node 20 cannot send a server handle to a worker; the known
// workaround is `listen({ fd })` with the fd of an existing listener (`server._handle.fd`,
// undocumented). If the MAIN thread keeps that listener, its own loop accepts too (a test on
// Node 20.20: 16 of 40 connections landed on the main thread), so here worker 0 makes the
// listener and the other workers `listen({ fd })` on its fd: only the N workers accept; the
// main thread only starts them and collects their counters.
//
//   node scaling-net-threads.mjs --app echo|resp --threads N [--resp-handler FILE]
//
// Prints the port on stdout; on SIGTERM prints {"scaling":{"workers":[{threadId,connections}...]}} on stderr and exits.
import net from 'node:net'
import { Worker, isMainThread, parentPort, threadId, workerData } from 'node:worker_threads'

const arg = (name, argv = process.argv) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}

if (isMainThread) {
  const threads = Number(arg('--threads') ?? 1)
  const app = arg('--app') ?? 'echo'
  const respHandler = arg('--resp-handler')
  const start = (fd) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { app, respHandler, fd } })
    return { w, listening: new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject) }) }
  }
  const first = start(undefined)
  const { fd, port } = await first.listening
  const rest = Array.from({ length: threads - 1 }, () => start(fd))
  await Promise.all(rest.map((r) => r.listening))
  const all = [first.w, ...rest.map((r) => r.w)]
  process.once('SIGTERM', async () => {
    const stats = await Promise.all(all.map((w) => new Promise((resolve) => { w.once('message', resolve); w.postMessage('stats') })))
    process.stderr.write(`${JSON.stringify({ scaling: { workers: stats } })}\n`)
    process.exit(0)
  })
  process.stdout.write(`${port}\n`)
} else {
  const { app, respHandler, fd } = workerData
  const stats = { threadId, connections: 0 }
  const handler = app === 'resp' ? (await import(respHandler)).onConnection : (socket) => socket.on('data', (d) => socket.write(d))
  const server = net.createServer({ noDelay: true }, (socket) => {
    stats.connections++
    socket.on('error', () => {})
    handler(socket)
  })
  const done = () => parentPort.postMessage({ fd: server._handle.fd, port: server.address().port })
  if (fd === undefined) server.listen(0, '127.0.0.1', done)
  else server.listen({ fd }, done)
  parentPort.on('message', () => parentPort.postMessage(stats))
}
