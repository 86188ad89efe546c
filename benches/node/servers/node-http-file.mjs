// node:http file server for benches/node/http-file.mjs, keep-alive, node:http adding Date,
// Connection and Keep-Alive itself.
//   node node-http-file.mjs FILE            the idiomatic way: the size taken once at start,
//                                           each request `fs.createReadStream(FILE).pipe(res)`
//                                           (open, reads of 64 KiB into fresh Buffers, writes,
//                                           close)
//   node node-http-file.mjs FILE --buffer   the file read once at start into a Buffer, each
//                                           request `res.writeHead(200, headers).end(buf)`
//                                           (node's best case: no file I/O per request)
import { createReadStream, readFileSync, statSync } from 'node:fs'
import http from 'node:http'
import { exitOnTerm, ready } from './common.mjs'

const file = process.argv[2]
if (!file) throw new Error('usage: node-http-file.mjs FILE [--buffer]')
const buffer = process.argv.includes('--buffer') ? readFileSync(file) : undefined
const HEADERS = { 'content-type': 'application/octet-stream', 'content-length': buffer ? buffer.length : statSync(file).size }
const handler = buffer
  ? (req, res) => res.writeHead(200, HEADERS).end(buffer)
  : (req, res) => {
      res.writeHead(200, HEADERS)
      createReadStream(file).pipe(res)
    }
const server = http.createServer({ noDelay: true }, handler)
server.listen(0, '127.0.0.1', () => ready(server.address().port))
exitOnTerm()
