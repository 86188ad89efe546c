// TLS in front of a line protocol: the SslHandler runs natively, first in the pipeline; the
// decoder and the JS handler behind it see plaintext. The certificate and key (PEM) are read
// from CERTS_DIR, else the working directory (`npm run certs` makes a test set in certs/).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EventLoop, LineBasedFrameDecoder, ServerBootstrap, SslContext, SslHandler, SslHandshakeCompletionEvent } from 'netloop'

const certs = process.env.CERTS_DIR ?? '.'
const options = () => ({
  cert: readFileSync(join(certs, 'server.pem')),
  key: readFileSync(join(certs, 'server.key')),
  ALPNProtocols: ['greeting/1'],
})
const tls = SslContext.forServer(options())

const loop = new EventLoop()
const server = await new ServerBootstrap()
  .group(loop)
  .childHandler((ch) => {
    ch.pipeline
      .addLast('tls', new SslHandler(tls)) // one handler per connection, one context for all
      .addLast('lines', new LineBasedFrameDecoder(1024))
      .addLast('app', {
        userEventTriggered: (ctx, event) => {
          if (event instanceof SslHandshakeCompletionEvent && event.isSuccess) {
            const { protocol, alpnProtocol } = ctx.channel.tls!
            ctx.writeAndFlush(`hello over ${protocol} (${alpnProtocol || 'no ALPN'})\n`)
          }
        },
        channelRead: (ctx, line: Buffer) => ctx.writeAndFlush(`${line.toString().toUpperCase()}\n`),
        exceptionCaught: (ctx, err) => {
          console.error(`channel ${ctx.channel.id}: ${(err as { code?: string }).code}`)
          ctx.close()
        },
      })
  })
  .bind(Number(process.env.PORT ?? 0), '127.0.0.1')

console.log(`listening on 127.0.0.1:${server.localAddress!.port}`)
// Renewed certificates without a restart: `kill -HUP <pid>` reads the files again.
process.on('SIGHUP', () => tls.reload(options()))
process.once('SIGINT', () => loop.shutdownGracefully(0, 1000))
