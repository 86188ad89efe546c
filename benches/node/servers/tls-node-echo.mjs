// node:tls echo server for benches/node/tls.mjs: the same JS echo logic as the netloop TLS
// server (each 'data' chunk written back), on node's one thread.
//   node tls-node-echo.mjs CERT.pem KEY.pem [--aes128]
// --aes128: the server's cipher order with TLS_AES_128_GCM_SHA256 first (honorCipherOrder),
// the suite netloop's SslContext prefers; without it node:tls follows the client's order
// (OpenSSL's client offers TLS_AES_256_GCM_SHA384 first).
import { readFileSync } from 'node:fs'
import tls from 'node:tls'
import { exitOnTerm, ready } from './common.mjs'

const [certFile, keyFile] = process.argv.slice(2)
const aes128 = process.argv.includes('--aes128')
  ? { ciphers: `TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384:${tls.DEFAULT_CIPHERS}`, honorCipherOrder: true }
  : {}
const server = tls.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile), noDelay: true, ...aes128 }, (socket) => {
  socket.on('data', (d) => socket.write(d))
  socket.on('error', () => {})
})
// Handshakes that fail or are reset (a load client closing at the end of a run) are not errors.
server.on('tlsClientError', () => {})
server.listen(0, '127.0.0.1', () => ready(server.address().port))
exitOnTerm()
