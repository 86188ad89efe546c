// Echo servers of benches/node/duplex.mjs:
//   node netloop-interop-echo.mjs --duplex      ch.toDuplex(), echoing with d.on('data', (b) => d.write(b))
//   node netloop-interop-echo.mjs --channel     a channel handler: channelRead -> ctx.writeAndFlush
//   node netloop-interop-echo.mjs --channel --subscribed
//                                               the same with a subscriber on every netloop:
//                                               lifecycle diagnostics channel (and the connect TracingChannel)
//   node netloop-interop-echo.mjs --channel --traced
//                                               the same with a subscriber on the netloop:handler
//                                               TracingChannel too (start/end around every handler call)
import dc from 'node:diagnostics_channel'
import { exitOnTerm, netloop, quiet, ready } from './common.mjs'

const { EventLoop, ServerBootstrap } = netloop
const duplex = process.argv.includes('--duplex')
if (process.argv.includes('--subscribed')) {
  let seen = 0
  const count = () => void seen++
  for (const name of ['netloop:server.socket', 'netloop:client.socket', 'netloop:server.listen', 'netloop:channel.close']) dc.subscribe(name, count)
  dc.tracingChannel('netloop:connect').subscribe({ start: count, end: count, asyncStart: count, asyncEnd: count, error: count })
  process.once('SIGTERM', () => process.stderr.write(`diagnostics events seen: ${seen}\n`))
}
if (process.argv.includes('--traced')) {
  let calls = 0
  const count = () => void calls++
  dc.tracingChannel('netloop:handler').subscribe({ start: count, end: count, asyncStart: count, asyncEnd: count, error: count })
  process.once('SIGTERM', () => process.stderr.write(`handler trace events seen: ${calls}\n`))
}
const handler = { channelRead: (ctx, m) => ctx.writeAndFlush(m), exceptionCaught: quiet.exceptionCaught }

const loop = new EventLoop({ name: 'bench-interop-echo' })
loop.ref()
const server = await new ServerBootstrap()
  .group(loop)
  .childOption('tcpNoDelay', true)
  .childHandler((ch) => {
    if (!duplex) return void ch.pipeline.addLast('echo', handler)
    const d = ch.toDuplex()
    d.on('data', (b) => d.write(b))
    d.on('error', () => d.destroy())
  })
  .bind(0, '127.0.0.1')
exitOnTerm(loop)
ready(server.localAddress.port)
