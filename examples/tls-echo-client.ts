// A TLS client on netloop: connects, verifies the server against a CA, sends lines and prints
// what comes back. Try it against the echo example behind TLS:
//
//   npm run certs                                              # certs/ca.pem, certs/server.pem, ...
//   node --import tsx examples/echo.ts --tls --port 7000 &
//   node --import tsx examples/tls-echo-client.ts --port 7000 hello world
//
// Options: --port P (default 7000), --host H (default localhost: the name verified and sent as
// SNI; it resolves to 127.0.0.1), --ca F (default certs/ca.pem); the remaining words are sent,
// one line each.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Bootstrap, EventLoop, SslContext, SslHandler } from 'netloop'
import { CERTS_DIR } from './lib/tls'
import { arg, portArg, start } from './lib/server'

start(async () => {
  const host = arg('--host') ?? 'localhost'
  const ca = readFileSync(arg('--ca') ?? join(CERTS_DIR, 'ca.pem'))
  const words = process.argv.slice(2).filter((w, i, all) => !w.startsWith('--') && !all[i - 1]?.startsWith('--'))
  const loop = new EventLoop({ name: 'tls-client' })
  const tls = SslContext.forClient({ ca })
  let received = ''
  const expected = words.map((w) => `${w}\n`).join('')
  let done!: () => void
  const finished = new Promise<void>((r) => (done = r))
  const ch = await new Bootstrap()
    .group(loop)
    .handler((c) =>
      c.pipeline.addLast('tls', new SslHandler(tls)).addLast('app', {
        channelRead: (_ctx, msg: Buffer) => {
          received += msg.toString()
          if (received.length >= expected.length) done()
        },
      }),
    )
    .connect(portArg(7000), host) // resolves once the TLS handshake completed
  const info = ch.tls!
  console.log(`connected: ${info.protocol} ${info.cipher.name}, server ${info.peerCertificate?.subject.CN} (authorized: ${info.authorized})`)
  ch.writeAndFlush(expected)
  if (expected.length > 0) await finished
  process.stdout.write(received)
  await ch.close()
  await loop.shutdownGracefully(0, 1000)
})
