// netloop HTTP file server for benches/node/http-file.mjs: the native HttpServerCodec, then a JS
// handler answering every request with the file, on one loop attached to node's thread.
//   node netloop-http-file.mjs FILE            each response's body is `FileRegion.open(FILE)`
//                                              (open + fstat per request; the codec sends the
//                                              head with Content-Length, then the file with
//                                              sendfile(2), and closes the descriptor)
//   node netloop-http-file.mjs FILE --shared   the file opened once (`SharedFile.open(FILE)`);
//                                              each response's body is its one region, written
//                                              again and again (no open, fstat or close per
//                                              request)
//   node netloop-http-file.mjs FILE --buffer   the file read once at start; each response's body
//                                              is that Buffer (lent to the write, not copied:
//                                              bodies of 8 KiB and more), for reference
import { readFileSync } from 'node:fs'
import { exitOnTerm, netloop, quiet, ready } from './common.mjs'

const { EventLoop, FileRegion, HttpResponse, HttpServerCodec, ServerBootstrap, SharedFile } = netloop
const file = process.argv[2]
if (!file) throw new Error('usage: netloop-http-file.mjs FILE [--shared | --buffer]')
const HEADERS = { 'content-type': 'application/octet-stream' }
const buffer = process.argv.includes('--buffer') ? readFileSync(file) : undefined
const shared = process.argv.includes('--shared') ? SharedFile.open(file).region() : undefined
const body = buffer ? () => buffer : shared ? () => shared : () => FileRegion.open(file)
const app = { channelRead: (ctx) => ctx.writeAndFlush(new HttpResponse(200, HEADERS, body())), exceptionCaught: quiet.exceptionCaught }

const loop = new EventLoop({ name: 'bench-http-file' })
loop.ref()
const server = await new ServerBootstrap()
  .group(loop)
  .childOption('tcpNoDelay', true)
  .childHandler((ch) => {
    ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', app)
  })
  .bind(0, '127.0.0.1')
exitOnTerm(loop)
ready(server.localAddress.port)
