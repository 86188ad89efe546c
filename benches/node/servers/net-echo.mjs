// node:net echo server for benches/node/channels-vs-net.mjs.
import net from 'node:net'
import { exitOnTerm, ready } from './common.mjs'

const server = net.createServer({ noDelay: true }, (socket) => {
  socket.on('data', (d) => socket.write(d))
  socket.on('error', () => {})
})
server.listen(0, '127.0.0.1', () => ready(server.address().port))
exitOnTerm()
