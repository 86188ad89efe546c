// One HTTP/1.1 client of benches/node/http-client.mjs: CONNS kept-alive connections to
// 127.0.0.1:PORT, each keeping DEPTH GETs of / in flight, for WARMUP then SECONDS seconds.
// Prints one JSON line counted over the measured window only: { requests, seconds, cpuUs }
// (process.cpuUsage(): every thread of this process).
//
//   node http-get.mjs KIND PORT CONNS DEPTH SECONDS WARMUP
//   KIND: netloop    HttpClientCodec, one loop on this thread; DEPTH requests pipelined per
//                    connection, one more written per response, flushed once per read batch
//         node-http  http.get with a keep-alive Agent (maxSockets CONNS); DEPTH must be 1
//         fetch      the global fetch (undici, bundled with node); DEPTH must be 1
// Every response must be a 200 with a non-empty body, else the client exits with status 1.
import * as http from 'node:http'

const [kind, portArg, connsArg, depthArg, secondsArg, warmupArg] = process.argv.slice(2)
const port = Number(portArg)
const conns = Number(connsArg)
const depth = Number(depthArg)
const seconds = Number(secondsArg)
const warmup = Number(warmupArg)
let count = 0
let running = true
const bad = (why) => {
  console.error(`http-get ${kind}: ${why}`)
  process.exit(1)
}

async function netloop() {
  const { Bootstrap, EventLoop, HttpClientCodec, HttpClientRequest, HttpClientResponse } = await import('../../../index.js')
  const loop = new EventLoop({ name: 'http-get' })
  const request = () => new HttpClientRequest('GET', '/')
  const handler = {
    channelActive(ctx) {
      for (let i = 0; i < depth; i++) ctx.write(request())
      ctx.flush()
      ctx.fireChannelActive()
    },
    channelRead(ctx, res) {
      if (!(res instanceof HttpClientResponse) || res.statusCode !== 200 || res.body.length === 0) bad(`unexpected ${res?.statusCode}`)
      count++
      if (running) ctx.write(request())
    },
    channelReadComplete: (ctx) => ctx.flush(),
    exceptionCaught: (_ctx, e) => bad(e.message),
  }
  const channels = []
  for (let i = 0; i < conns; i++) {
    channels.push(
      await new Bootstrap()
        .group(loop)
        .option('tcpNoDelay', true)
        .handler((ch) => ch.pipeline.addLast('http', new HttpClientCodec({ host: `127.0.0.1:${port}` })).addLast('app', handler))
        .connect(port, '127.0.0.1'),
    )
  }
  return () => loop.shutdownGracefully(0, 100)
}

function nodeHttp() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: conns })
  const get = () =>
    new Promise((resolve) => {
      http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
        let n = 0
        res.on('data', (d) => (n += d.length))
        res.on('end', () => {
          if (res.statusCode !== 200 || n === 0) bad(`unexpected ${res.statusCode}`)
          count++
          resolve()
        })
      }).on('error', (e) => bad(e.message))
    })
  for (let i = 0; i < conns; i++) (async () => { while (running) await get() })()
  return () => agent.destroy()
}

function fetchClient() {
  const url = `http://127.0.0.1:${port}/`
  const get = async () => {
    const res = await fetch(url)
    const body = await res.arrayBuffer()
    if (res.status !== 200 || body.byteLength === 0) bad(`unexpected ${res.status}`)
    count++
  }
  for (let i = 0; i < conns; i++) (async () => { while (running) await get().catch((e) => bad(e.message)) })()
  return () => {}
}

if (kind !== 'netloop' && depth !== 1) bad('only netloop pipelines (DEPTH 1 for the others)')
const stop = kind === 'netloop' ? await netloop() : kind === 'node-http' ? nodeHttp() : kind === 'fetch' ? fetchClient() : bad(`unknown kind ${kind}`)
await new Promise((r) => setTimeout(r, warmup * 1000))
const c0 = count
const u0 = process.cpuUsage()
const t0 = process.hrtime.bigint()
await new Promise((r) => setTimeout(r, seconds * 1000))
const u1 = process.cpuUsage(u0)
const t1 = process.hrtime.bigint()
const requests = count - c0
running = false
console.log(JSON.stringify({ requests, seconds: Number(t1 - t0) / 1e9, cpuUs: u1.user + u1.system }))
await stop()
process.exit(0)
