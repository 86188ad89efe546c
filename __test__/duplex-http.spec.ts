// node:http (and node:https) fed by netloop channels: `server.emit('connection', ch.toDuplex())`.
import test from 'ava'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import * as http from 'node:http'
import * as https from 'node:https'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Bootstrap, type Channel, type ChannelDuplex, EventLoop, SslContext, SslHandler } from '../index'
import { netloopServer } from './duplex-helpers'
import { has, run } from './example-helpers'
import { certsDir, pem } from './tls-helpers'

test.serial('node:http over toDuplex(): curl gets two answers over one kept-alive connection', async (t) => {
  if (!has(t, 'curl')) return
  const sockets = new Set<Socket>()
  const server = http.createServer((req, res) => {
    sockets.add(req.socket)
    res.end(`you asked for ${req.url} from ${req.socket.remoteAddress}\n`)
  })
  let connections = 0
  const port = await netloopServer(t, (ch) => {
    connections++
    server.emit('connection', ch.toDuplex())
  })
  const url = `http://127.0.0.1:${port}`
  const { stdout, stderr } = await run('curl', ['-sv', `${url}/one`, `${url}/two`])
  t.is(stdout, 'you asked for /one from 127.0.0.1\nyou asked for /two from 127.0.0.1\n')
  t.regex(stderr, /Re-using existing connection/)
  t.regex(stderr, /< HTTP\/1\.1 200 OK/)
  t.is(connections, 1)
  t.is(sockets.size, 1)
  server.close()
})

test.serial('node:http over toDuplex(): wrk -c 10 -d 1s gets only 2xx answers and no socket errors', async (t) => {
  if (!has(t, 'wrk')) return
  const server = http.createServer((_req, res) => res.end('Hello, World!'))
  let connections = 0
  const port = await netloopServer(t, (ch) => {
    connections++
    server.emit('connection', ch.toDuplex())
  })
  const { stdout } = await run('wrk', ['-t1', '-c10', '-d1s', `http://127.0.0.1:${port}/`], 60_000)
  t.log(stdout.split('\n').find((l) => l.startsWith('Requests/sec')) ?? stdout)
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0)
  t.true(requests > 10, stdout)
  t.notRegex(stdout, /Socket errors|Non-2xx/)
  t.true(connections >= 10, `${connections} connections`) // wrk opens one more first, to probe
  server.close()
})

/** A 10 MiB file of random bytes and its sha256. */
function bigFile(): { file: string; sha256: string } {
  const body = randomBytes(10 << 20)
  const file = join(mkdtempSync(join(tmpdir(), 'netloop-upload-')), 'body.bin')
  writeFileSync(file, body)
  return { file, sha256: createHash('sha256').update(body).digest('hex') }
}

test.serial('node:http over toDuplex(): a 10 MiB upload to a slow reader arrives whole while the channel stops reading', async (t) => {
  if (!has(t, 'curl')) return
  const { file, sha256 } = bigFile()
  const rssBefore = process.memoryUsage().rss
  let maxBuffered = 0
  let maxRss = 0
  let autoReadOffSeen = false
  let duplex: ChannelDuplex | undefined
  const server = http.createServer((req, res) => {
    const hash = createHash('sha256')
    let received = 0
    req.on('data', (chunk: Buffer) => {
      hash.update(chunk)
      received += chunk.length
      // A slow consumer: 1 ms pause per chunk.
      req.pause()
      setTimeout(() => req.resume(), 1)
      maxBuffered = Math.max(maxBuffered, duplex!.readableLength + req.readableLength)
      maxRss = Math.max(maxRss, process.memoryUsage().rss)
      if (!duplex!.channel.config.autoRead) autoReadOffSeen = true
    })
    req.on('end', () => res.end(`${received} ${hash.digest('hex')}`))
  })
  const port = await netloopServer(t, (ch) => {
    duplex = ch.toDuplex()
    server.emit('connection', duplex)
  })
  const { stdout } = await run('curl', ['-s', '-H', 'Expect:', '--data-binary', `@${file}`, `http://127.0.0.1:${port}/upload`], 120_000)
  t.is(stdout, `${10 << 20} ${sha256}`)
  t.true(autoReadOffSeen, 'the slow reader turned autoRead off')
  // Bound: the stream high water marks plus two read batches (at most maxMessagesPerRead 16
  // reads of up to 64 KiB each; since maxBytesPerRead's 64 KiB default about 128 KiB): one in the duplex, read before its consumer fell behind, and one handed
  // on to the request while the duplex drained (its _read() turned autoRead on again). Alone
  // this run buffers about one batch; under a loaded machine two (2 MiB) were seen. What it
  // shows: a 10 MiB upload never sits in memory whole. Turning autoRead off withdraws the read
  // autoRead already asked for (Netty's autoReadCleared); without that a third batch could come.
  t.true(maxBuffered <= (2 << 20) + (256 << 10), `at most 2.25 MiB buffered in the streams (saw ${maxBuffered})`)
  t.true(maxRss - rssBefore < 96 << 20, `RSS grew by ${((maxRss - rssBefore) / 1048576).toFixed(1)} MiB`)
  t.log(`max buffered in the streams ${(maxBuffered / 1024).toFixed(0)} KiB; RSS growth ${((maxRss - rssBefore) / 1048576).toFixed(1)} MiB`)
  server.close()
})

test.serial('node:https over toDuplex(): curl gets answers over TLS from node:tls on a netloop channel', async (t) => {
  if (!has(t, 'curl')) return
  const server = https.createServer({ cert: pem('server.pem'), key: pem('server.key') }, (req, res) => {
    res.end(`secure ${req.url} ${(req.socket as { encrypted?: boolean }).encrypted === true}\n`)
  })
  const port = await netloopServer(t, (ch) => void server.emit('connection', ch.toDuplex()))
  const url = `https://localhost:${port}`
  const { stdout, stderr } = await run('curl', ['-sv', '--cacert', join(certsDir(), 'ca.pem'), '--resolve', `localhost:${port}:127.0.0.1`, `${url}/a`, `${url}/b`])
  t.is(stdout, 'secure /a true\nsecure /b true\n')
  t.regex(stderr, /Re-using existing connection/)
  t.regex(stderr, /SSL connection using TLSv1\.3/)
  server.close()
})

/**
 * `agent` with its connections made as netloop client channels (`init` sets up each pipeline)
 * handed over as Duplexes, node:http's documented `createConnection(options, callback)` hook;
 * how many channels it made. The loop and the agent end at teardown.
 */
function netloopAgent<A extends http.Agent>(
  t: { teardown(fn: () => unknown): void },
  agent: A,
  init: (ch: Channel, opts: { host?: string; servername?: string }) => void,
): { agent: A; channels: () => number } {
  const loop = new EventLoop()
  t.teardown(() => (agent.destroy(), loop.shutdownGracefully(0, 500)))
  let channels = 0
  const createConnection = (opts: { port: number; host: string; servername?: string }, cb: (err: Error | null, s?: ChannelDuplex) => void) => {
    new Bootstrap()
      .group(loop)
      .handler((ch) => init(ch, opts))
      .connect(opts.port, opts.host)
      .then((ch) => {
        channels++
        cb(null, ch.toDuplex())
      }, cb)
  }
  Object.assign(agent, { createConnection })
  return { agent, channels: () => channels }
}

async function get(mod: typeof http | typeof https, opts: http.RequestOptions, body?: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = mod.request(opts, (res) => {
      const parts: Buffer[] = []
      res.on('data', (d: Buffer) => parts.push(d))
      res.on('end', () => resolve({ status: res.statusCode!, text: String(Buffer.concat(parts)) }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

test.serial("node:http's client over netloop channels (Agent createConnection): keep-alive requests and uploads share one channel", async (t) => {
  const server = http.createServer((req, res) => {
    const h = createHash('sha256')
    req.on('data', (d: Buffer) => h.update(d))
    req.on('end', () => res.end(`${req.method} ${req.url} ${h.digest('hex')} ${req.socket.remotePort}`))
  })
  server.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  t.teardown(() => server.close())
  const port = (server.address() as { port: number }).port
  const { agent, channels } = netloopAgent(t, new http.Agent({ keepAlive: true, maxSockets: 1 }), () => {})
  const peers = new Set<string>()
  for (const size of [0, 5, 1 << 20]) {
    const body = randomBytes(size)
    const r = await get(http, { port, host: '127.0.0.1', path: `/up/${size}`, method: 'POST', agent }, body)
    const [method, path, digest, peer] = r.text.split(' ')
    t.deepEqual([r.status, method, path, digest], [200, 'POST', `/up/${size}`, createHash('sha256').update(body).digest('hex')])
    peers.add(peer)
  }
  t.is(channels(), 1, 'one netloop channel carried the three requests')
  t.is(peers.size, 1)
})

test.serial("node:https's client over netloop's SslHandler: the TLS is netloop's, the HTTP node's", async (t) => {
  const server = https.createServer({ cert: pem('server.pem'), key: pem('server.key') }, (req, res) => res.end(`${req.url} over ${(req.socket as import('node:tls').TLSSocket).getProtocol()}`))
  server.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  t.teardown(() => server.close())
  const port = (server.address() as { port: number }).port
  const tls = SslContext.forClient({ ca: pem('ca.pem') })
  const { agent, channels } = netloopAgent(t, new https.Agent({ keepAlive: true, maxSockets: 1 }), (ch, opts) => {
    ch.pipeline.addLast('tls', new SslHandler(tls, { servername: opts.servername || opts.host }))
  })
  for (const path of ['/a', '/b']) {
    const r = await get(https, { port, host: 'localhost', path, agent })
    t.deepEqual(r, { status: 200, text: `${path} over TLSv1.3` })
  }
  t.is(channels(), 1)
  // A server the context does not trust: the request fails with netloop's verification error.
  const untrusted = netloopAgent(t, new https.Agent(), (ch, opts) => {
    ch.pipeline
      .addLast('tls', new SslHandler(SslContext.forClient({ ca: pem('other-ca.pem') }), { servername: opts.servername || opts.host }))
      .addLast('quiet', { exceptionCaught: () => {} }) // the failure reaches connect(), hence the request
  })
  const err = await t.throwsAsync(get(https, { port, host: 'localhost', path: '/', agent: untrusted.agent }))
  t.is((err as { code?: string }).code, 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY')
})
