// The main example (`npm start`): a line-echo TCP server whose timers run on a netloop
// EventLoop. Each connection gets an idle timeout (a one-shot schedule, re-armed on every
// line) and the server logs statistics on a fixed-rate schedule.
//
//   npm start            # listens on 127.0.0.1:7007 (PORT=... to change)
//   nc 127.0.0.1 7007    # type lines; they come back upper-cased; 30 s of silence closes
//
// The sockets here are node:net's until netloop's TypeScript channel API lands; the timers,
// their ordering and the shutdown are netloop's.
import net from 'node:net'
import netloop from '../index.js'

const { EventLoop } = netloop
const port = Number(process.env.PORT ?? 7007)
const idleMs = Number(process.env.IDLE_MS ?? 30_000)
const loop = new EventLoop({ name: 'echo' })
let connections = 0
let lines = 0

const server = net.createServer((socket) => {
  connections++
  let idle = null
  const arm = () => {
    idle?.cancel()
    idle = loop.schedule(() => socket.end('idle timeout, bye\n'), idleMs)
  }
  arm()
  let pending = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk) => {
    pending += chunk
    let nl
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl)
      pending = pending.slice(nl + 1)
      lines++
      arm()
      loop.execute(() => socket.write(line.toUpperCase() + '\n'))
    }
  })
  socket.on('close', () => {
    connections--
    idle?.cancel()
  })
  socket.on('error', () => {})
})

const stats = loop.scheduleAtFixedRate(() => console.log(`connections=${connections} lines=${lines}`), 10_000, 10_000)

server.listen(port, '127.0.0.1', () => console.log(`echo server on 127.0.0.1:${port} (Ctrl-C to stop)`))

process.once('SIGINT', async () => {
  stats.cancel()
  server.close()
  await loop.shutdownGracefully(0, 2000)
  console.log('loop terminated')
  process.exit(0)
})
