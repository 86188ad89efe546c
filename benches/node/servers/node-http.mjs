// node:http "Hello, World!" for the `http` workload of benches/node/channels-vs-net.mjs: the
// same work as examples/http-hello.ts (same body, same Content-Type, keep-alive, Date header)
// done the idiomatic node:http way. node:http adds Date, Connection and Keep-Alive itself.
//
//   node node-http.mjs                  prints its port (127.0.0.1, a free one) on stdout
//   node node-http.mjs --tls CERT KEY   the same over TLS (https.createServer, PEM files)
import { readFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import { exitOnTerm, ready } from './common.mjs'

const BODY = Buffer.from('Hello, World!')
const HEADERS = { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': BODY.length }

const tls = process.argv.indexOf('--tls')
const handler = (req, res) => res.writeHead(200, HEADERS).end(BODY)
const server =
  tls < 0
    ? http.createServer({ noDelay: true }, handler)
    : https.createServer({ noDelay: true, cert: readFileSync(process.argv[tls + 1]), key: readFileSync(process.argv[tls + 2]) }, handler)
server.listen(0, '127.0.0.1', () => ready(server.address().port))
exitOnTerm()
