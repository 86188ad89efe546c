// node:net line server for benches/node/channels-vs-net.mjs: split on '\n' with a carry-over
// buffer, answer each line with the line and '\n'; the replies of one 'data' event go out in one
// write (cork/uncork), as the netloop server flushes once per read batch.
import net from 'node:net'
import { exitOnTerm, ready } from './common.mjs'

const NL = Buffer.from('\n')
const MAX_LINE = 64 * 1024
const server = net.createServer({ noDelay: true }, (socket) => {
  let carry = null
  socket.on('data', (chunk) => {
    const buf = carry ? Buffer.concat([carry, chunk]) : chunk
    let start = 0
    let nl
    socket.cork()
    while ((nl = buf.indexOf(10, start)) >= 0) {
      socket.write(Buffer.concat([buf.subarray(start, nl), NL], nl - start + 1))
      start = nl + 1
    }
    socket.uncork()
    carry = start < buf.length ? buf.subarray(start) : null
    if (carry && carry.length > MAX_LINE) socket.destroy(new Error('line too long'))
  })
  socket.on('error', () => {})
})
server.listen(0, '127.0.0.1', () => ready(server.address().port))
exitOnTerm()
