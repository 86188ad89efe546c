import test, { type ExecutionContext } from 'ava'
import { readFileSync } from 'node:fs'
import * as net from 'node:net'
import * as tls from 'node:tls'
import { join } from 'node:path'
import { type Example, connect, resp, sleep, startExample, startScript } from './example-helpers'
import { certsDir } from './tls-helpers'

// Clients that send without reading what the server answers: the server must stop reading
// (TCP then holds the client back) instead of queueing the answers in its memory, however
// much larger an answer is than what asked for it. Each server runs in a child process whose
// RSS is read from /proc.

/** The resident set size of process `pid`, in MiB (Linux). */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

/** Starts __test__/fixtures/<name>.ts, resolving once it prints its address. */
function startFixture(t: ExecutionContext, name: string): Promise<Example> {
  return startScript(t, name, join('__test__', 'fixtures', `${name}.ts`))
}

/**
 * Writes `unit` repeated until `total` bytes went out or the server stopped taking them (no
 * 'drain' within `stallMs`: its receive window is closed). Resolves with the bytes written.
 */
async function flood(s: net.Socket, unit: Buffer, total: number, stallMs = 1500): Promise<number> {
  const chunk = Buffer.concat(Array.from({ length: Math.max(1, Math.floor(65536 / unit.length)) }, () => unit))
  let sent = 0
  while (sent < total) {
    sent += chunk.length
    if (!s.write(chunk)) {
      const drained = await Promise.race([new Promise<boolean>((r) => s.once('drain', () => r(true))), sleep(stallMs).then(() => false)])
      if (!drained) break
    }
  }
  return sent
}

/** The highest RSS of `pid` over `ms`, sampled every 100 ms. */
async function peakRss(pid: number, ms: number): Promise<number> {
  let peak = rssMiB(pid)
  for (const end = Date.now() + ms; Date.now() < end; ) {
    await sleep(100)
    peak = Math.max(peak, rssMiB(pid))
  }
  return peak
}

const LIMIT_MIB = 64

async function respFlood(t: ExecutionContext, args: string[]) {
  if (process.platform !== 'linux') return t.pass()
  t.timeout(60_000)
  const ex = await startExample(t, 'resp-server', ['--idle', '0', ...args])
  const pid = ex.proc.pid!
  const s = await connect(t, ex.port)
  const ok = new Promise<void>((r) => s.once('data', () => r()))
  s.write(resp('SET', 'k', Buffer.alloc(64 * 1024, 'v')))
  await ok
  s.pause() // from here on nothing is read
  await sleep(500)
  const before = await peakRss(pid, 300)
  const sent = await flood(s, resp('GET', 'k'), 4.6e6)
  const peak = await peakRss(pid, 2000)
  t.log(`sent ${(sent / 1e6).toFixed(1)} MB of GETs; server RSS ${before.toFixed(1)} -> peak ${peak.toFixed(1)} MiB`)
  t.true(peak - before <= LIMIT_MIB, `RSS grew by ${(peak - before).toFixed(1)} MiB`)
  // The server is still serving: another connection gets its reply.
  const other = await connect(t, ex.port)
  const pong = new Promise<string>((r) => other.once('data', (d) => r(d.toString())))
  other.write(resp('PING'))
  t.is(await pong, '+PONG\r\n')
  s.destroy()
}

test.serial('resp-server: a client pipelining GETs of a 64 KiB value without reading grows the server by at most 64 MiB', (t) => respFlood(t, []))

test.serial('resp-server --js-codec: a client pipelining GETs of a 64 KiB value without reading grows the server by at most 64 MiB', (t) => respFlood(t, ['--js-codec']))

test.serial('resp-server: what a non-reading client queued drains in order once it reads', async (t) => {
  if (process.platform !== 'linux') return t.pass()
  t.timeout(60_000)
  const ex = await startExample(t, 'resp-server', ['--idle', '0'])
  const s = await connect(t, ex.port)
  const value = Buffer.alloc(16 * 1024, 'v')
  const ok = new Promise<void>((r) => s.once('data', () => r()))
  s.write(resp('SET', 'k', value))
  await ok
  s.pause()
  // GETs, then an INCR per 500 GETs: the replies must come back whole and in order.
  const n = 4000
  const cmds: Buffer[] = []
  for (let i = 1; i <= n; i++) cmds.push(i % 500 === 0 ? resp('INCR', 'c') : resp('GET', 'k'))
  s.write(Buffer.concat(cmds))
  await sleep(500)
  const chunks: Buffer[] = []
  let received = 0
  const want = (n - n / 500) * (`$${value.length}\r\n`.length + value.length + 2) + (n / 500) * ':1\r\n'.length
  const done = new Promise<void>((resolve) => {
    s.on('data', (d: Buffer) => {
      chunks.push(d)
      if ((received += d.length) >= want) resolve()
    })
  })
  s.resume()
  await Promise.race([done, sleep(30_000)])
  const got = Buffer.concat(chunks)
  // Walk the replies: n - 8 bulk replies of the value, and :1 .. :8 where the INCRs were.
  let at = 0
  let incr = 0
  for (let i = 1; i <= n; i++) {
    if (i % 500 === 0) {
      const expect = `:${++incr}\r\n`
      if (got.toString('latin1', at, at + expect.length) !== expect) return t.fail(`reply ${i}: not ${JSON.stringify(expect)}`)
      at += expect.length
    } else {
      const head = `$${value.length}\r\n`
      if (got.toString('latin1', at, at + head.length) !== head) return t.fail(`reply ${i}: not a bulk of the value (${got.length} bytes received; at ${at}: ${JSON.stringify(got.toString('latin1', at, at + 20))})`)
      at += head.length + value.length + 2
    }
  }
  t.is(at, got.length)
})

test.serial('a RESP server with the decoder’s defaults answering 64 KiB to each command: a non-reading client grows it by at most 64 MiB', async (t) => {
  if (process.platform !== 'linux') return t.pass()
  t.timeout(60_000)
  const ex = await startFixture(t, 'resp-big-server')
  const pid = ex.proc.pid!
  const s = await connect(t, ex.port)
  s.pause()
  await sleep(500)
  const before = await peakRss(pid, 300)
  const sent = await flood(s, resp('PING'), 4.6e6)
  const peak = await peakRss(pid, 2000)
  t.log(`sent ${(sent / 1e6).toFixed(1)} MB of commands; server RSS ${before.toFixed(1)} -> peak ${peak.toFixed(1)} MiB`)
  t.true(peak - before <= LIMIT_MIB, `RSS grew by ${(peak - before).toFixed(1)} MiB`)
  s.destroy()
})

test.serial('http-hello --js-codec: a client pipelining GETs without reading is held back by TCP', async (t) => {
  if (process.platform !== 'linux') return t.pass()
  t.timeout(60_000)
  const ex = await startExample(t, 'http-hello', ['--js-codec', '--idle', '0'])
  const pid = ex.proc.pid!
  const s = await connect(t, ex.port)
  s.pause()
  await sleep(500)
  const before = await peakRss(pid, 300)
  const sent = await flood(s, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), 64e6)
  const peak = await peakRss(pid, 1000)
  t.log(`sent ${(sent / 1e6).toFixed(1)} MB of GETs; server RSS ${before.toFixed(1)} -> peak ${peak.toFixed(1)} MiB`)
  t.true(sent < 32e6, `the server kept reading: ${(sent / 1e6).toFixed(1)} MB went in`)
  t.true(peak - before <= LIMIT_MIB, `RSS grew by ${(peak - before).toFixed(1)} MiB`)
  s.destroy()
})

test.serial('chat: a user who reads nothing while another floods the room is closed, and the server stays small', async (t) => {
  if (process.platform !== 'linux') return t.pass()
  t.timeout(60_000)
  const ex = await startExample(t, 'chat')
  const pid = ex.proc.pid!
  const quiet = await connect(t, ex.port)
  quiet.pause()
  const quietClosed = new Promise<void>((r) => quiet.on('close', () => r()))
  quiet.on('error', () => undefined)
  const talker = await connect(t, ex.port)
  talker.on('data', () => undefined)
  await sleep(500)
  const before = await peakRss(pid, 300)
  const line = Buffer.from(`${'x'.repeat(1000)}\n`)
  const sent = await flood(talker, line, 64e6)
  const peak = await peakRss(pid, 500)
  // A paused socket reports its end only once what came before it is read.
  quiet.on('data', () => undefined)
  quiet.resume()
  const closed = await Promise.race([quietClosed.then(() => true), sleep(5000).then(() => false)])
  t.log(`the talker sent ${(sent / 1e6).toFixed(1)} MB; server RSS ${before.toFixed(1)} -> peak ${peak.toFixed(1)} MiB`)
  t.true(closed, 'the user who did not read is still connected')
  t.true(peak - before <= LIMIT_MIB, `RSS grew by ${(peak - before).toFixed(1)} MiB`)
})

test.serial('an HTTP server answering 64 KiB to each GET: a client pipelining GETs without reading grows it by at most 64 MiB', async (t) => {
  if (process.platform !== 'linux') return t.pass()
  t.timeout(60_000)
  const ex = await startFixture(t, 'http-big-server')
  const pid = ex.proc.pid!
  const s = await connect(t, ex.port)
  s.pause()
  await sleep(500)
  const before = await peakRss(pid, 300)
  const sent = await flood(s, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), 4.6e6)
  const peak = await peakRss(pid, 2000)
  t.log(`sent ${(sent / 1e6).toFixed(1)} MB of GETs; server RSS ${before.toFixed(1)} -> peak ${peak.toFixed(1)} MiB`)
  t.true(peak - before <= LIMIT_MIB, `RSS grew by ${(peak - before).toFixed(1)} MiB`)
  s.destroy()
})

/** Writes 256 MiB to the echo example (with `args`) without reading, then resets the connection. */
async function echoFlood(t: ExecutionContext, args: string[], open: (port: number) => Promise<{ s: net.Socket; raw: net.Socket }>) {
  if (process.platform !== 'linux') return t.pass()
  t.timeout(90_000)
  const ex = await startExample(t, 'echo', ['--idle', '0', ...args])
  const pid = ex.proc.pid!
  const { s, raw } = await open(ex.port)
  s.on('error', () => undefined)
  s.pause()
  await sleep(300)
  const before = await peakRss(pid, 300)
  const sent = await flood(s, Buffer.alloc(64 * 1024, 'e'), 256 * 1024 * 1024)
  const peak = await peakRss(pid, 1000)
  t.log(`sent ${(sent / 2 ** 20).toFixed(1)} MiB; server RSS ${before.toFixed(1)} -> peak ${peak.toFixed(1)} MiB`)
  t.true(sent < 64 * 2 ** 20, `the server kept reading: ${(sent / 2 ** 20).toFixed(1)} MiB went in`)
  t.true(peak - before <= LIMIT_MIB, `RSS grew by ${(peak - before).toFixed(1)} MiB`)
  // A reset: the queued echoes fail, and the server says so once for the channel.
  raw.resetAndDestroy()
  s.destroy()
  await sleep(1500)
  const lines = ex.stderr().split('\n').filter((l) => /^echo: channel \d+/.test(l))
  const perChannel = new Map<string, number>()
  for (const l of lines) {
    const id = /^echo: channel (\d+)/.exec(l)![1]
    perChannel.set(id, (perChannel.get(id) ?? 0) + 1)
  }
  t.true(Math.max(0, ...perChannel.values()) <= 1, `logged: ${lines.slice(0, 5).join(' | ')} (${lines.length} lines)`)
  // Still serving.
  const other = await connect(t, ex.port)
  if (args.length === 0) {
    const back = new Promise<string>((r) => other.once('data', (d) => r(d.toString())))
    other.write('ping')
    t.is(await back, 'ping')
  }
}

test.serial('echo: a client writing 256 MiB without reading is held back by TCP; its reset is logged once', (t) =>
  echoFlood(t, [], async (port) => {
    const s = await connect(t, port)
    return { s, raw: s }
  }),
)

test.serial('echo --tls: a client writing 256 MiB without reading is held back by TCP; its reset is logged once', (t) => {
  const dir = certsDir()
  return echoFlood(t, ['--tls', '--cert', join(dir, 'server.pem'), '--key', join(dir, 'server.key')], (port) =>
    connect(t, port).then(
      (raw) =>
        new Promise((resolve, reject) => {
          const s = tls.connect({ socket: raw, servername: 'localhost', ca: readFileSync(join(dir, 'ca.pem')) }, () => resolve({ s, raw }))
          s.once('error', reject)
          t.teardown(() => s.destroy())
        }),
    ),
  )
})
