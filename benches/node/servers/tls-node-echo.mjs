// node:tls echo server for benches/node/tls.mjs: the same JS echo logic as the netloop TLS
// server (each 'data' chunk written back), on node's one thread.
//   node tls-node-echo.mjs CERT.pem KEY.pem
import { readFileSync } from 'node:fs'
import tls from 'node:tls'
import { exitOnTerm, ready } from './common.mjs'

const [certFile, keyFile] = process.argv.slice(2)
const server = tls.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile), noDelay: true }, (socket) => {
  socket.on('data', (d) => socket.write(d))
  socket.on('error', () => {})
})
// Handshakes that fail or are reset (a load client closing at the end of a run) are not errors.
server.on('tlsClientError', () => {})
server.listen(0, '127.0.0.1', () => ready(server.address().port))
exitOnTerm()
