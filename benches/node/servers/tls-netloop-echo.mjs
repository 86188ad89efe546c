// netloop TLS echo server for benches/node/tls.mjs: an SslHandler (native, rustls) first in the
// pipeline, then the JS echo handler of netloop-echo.mjs (channelRead → ctx.writeAndFlush), on
// one loop attached to node's thread.
//   node tls-netloop-echo.mjs CERT.pem KEY.pem [--auto-release]
// --auto-release: the echo handler sets `autoRelease: true` (large plaintext reads detached
// when it returns).
import { readFileSync } from 'node:fs'
import { exitOnTerm, netloop, quiet, ready } from './common.mjs'

const { EventLoop, ServerBootstrap, SslContext, SslHandler } = netloop
const [certFile, keyFile] = process.argv.slice(2)
const tls = SslContext.forServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) })
const autoRelease = process.argv.includes('--auto-release')
const handler = { autoRelease, channelRead: (ctx, m) => ctx.writeAndFlush(m), exceptionCaught: quiet.exceptionCaught }

const loop = new EventLoop({ name: 'bench-tls-echo' })
loop.ref()
const server = await new ServerBootstrap()
  .group(loop)
  .childOption('tcpNoDelay', true)
  .childHandler((ch) => {
    ch.pipeline.addLast('tls', new SslHandler(tls)).addLast('echo', handler)
  })
  .bind(0, '127.0.0.1')
exitOnTerm(loop)
ready(server.localAddress.port)
