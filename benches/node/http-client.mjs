// HTTP clients side by side: netloop's HttpClientCodec (one loop on the JS thread) against
// node:http's client with a keep-alive Agent and the global fetch (undici), all asking the same
// server for the same hello response. The server is the C floor of the HTTP bench
// (benches/peers/epoll_http.c: one recv, one prebuilt response per request head, one send), so
// the client is what is measured: client CPU per request, and requests per second.
//
//   node benches/node/http-client.mjs [--runs N] [--seconds S] [--warmup S] [--conns N]
//                                     [--addon FILE.node] [--json FILE] [--quiet-wait S]
//
// Each client (benches/node/clients/http-get.mjs) runs in its own process pinned to CPU 0, the
// server on CPU 1; CONNS (default 50) kept-alive connections each keep one GET in flight (node:http
// and fetch cannot pipeline), plus a netloop row that pipelines 16 per connection. Client CPU is
// its process's (process.cpuUsage() over the measured window); the server's share of its core
// over the same window shows it was not the bottleneck. Rounds rotate the order; tables give
// medians with min–max, ratios per round against node:http.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CLK_TCK, addonUnderTest, fmt, inRounds, median, newer, opt, root, rotating, spread, waitForQuiet } from './harness.mjs'
import { readFileSync } from 'node:fs'

const RUNS = Number(opt('--runs', '3'))
const SECONDS = Number(opt('--seconds', '2'))
const WARMUP = Number(opt('--warmup', '1'))
const CONNS = Number(opt('--conns', '50'))
const QUIET_WAIT = Number(opt('--quiet-wait', '20'))
const JSON_OUT = opt('--json', undefined)
const { addonId } = addonUnderTest()

const have = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0
const pin = have('taskset')
const binDir = join(root, 'target', 'bench-bin')
const src = join(root, 'benches', 'peers', 'epoll_http.c')
const bin = join(binDir, 'epoll_http')
if (!have('cc') && newer(src, bin)) {
  console.log('skipped: no C compiler (cc) to build benches/peers/epoll_http.c, the server every client asks')
  process.exit(0)
}
if (newer(src, bin)) execFileSync('cc', ['-O2', '-Wall', '-o', bin, src], { stdio: 'inherit' })

const CLIENTS = [
  { name: 'netloop HttpClientCodec', kind: 'netloop', depth: 1 },
  { name: 'node:http (keep-alive Agent)', kind: 'node-http', depth: 1 },
  { name: 'fetch (undici)', kind: 'fetch', depth: 1 },
  { name: 'netloop, 16 pipelined', kind: 'netloop', depth: 16 },
]
const BASE = 'node:http (keep-alive Agent)'

const ticks = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return Number(f[11]) + Number(f[12])
}

/** Starts the server; resolves with its process and port. */
function startServer() {
  const p = spawn(pin ? 'taskset' : bin, pin ? ['-c', '1', bin, '0'] : ['0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    p.stdout.on('data', (d) => {
      out += d
      const m = /listening (\d+)/.exec(out)
      if (m) resolve({ p, port: Number(m[1]) })
    })
    p.on('exit', (code) => reject(new Error(`epoll_http exited (${code})`)))
  })
}

/** Runs one client against `port`; its result with the server's busy share over the window. */
function runClient(c, server) {
  waitForQuiet(QUIET_WAIT)
  const script = join(root, 'benches', 'node', 'clients', 'http-get.mjs')
  const args = [script, c.kind, String(server.port), String(CONNS), String(c.depth), String(SECONDS), String(WARMUP)]
  return new Promise((resolve, reject) => {
    const p = spawn(pin ? 'taskset' : process.execPath, pin ? ['-c', '0', process.execPath, ...args] : args, { stdio: ['ignore', 'pipe', 'inherit'], env: process.env })
    let out = ''
    let s0
    let t0
    // The server's ticks over (about) the client's measured window.
    const first = setTimeout(() => {
      s0 = ticks(server.p.pid)
      t0 = Date.now()
    }, WARMUP * 1000 + 300)
    p.stdout.on('data', (d) => (out += d))
    p.on('exit', (code) => {
      clearTimeout(first)
      if (code !== 0) return reject(new Error(`${c.name}: client exited with ${code}`))
      const r = JSON.parse(out.trim().split('\n').pop())
      const serverCores = s0 === undefined ? NaN : (ticks(server.p.pid) - s0) / CLK_TCK / ((Date.now() - t0) / 1000)
      resolve({ reqPerS: r.requests / r.seconds, cpuUsPerReq: r.cpuUs / r.requests, clientCores: r.cpuUs / 1e6 / r.seconds, serverCores })
    })
  })
}

const server = await startServer()
process.on('exit', () => server.p.kill())
const addon = addonId()
process.stderr.write(`http-client: ${RUNS} rounds of ${SECONDS} s after ${WARMUP} s, ${CONNS} connections, addon ${addon.file} (${addon.sha256})\n`)
const rounds = await inRounds(
  RUNS,
  rotating(CLIENTS),
  (c) => runClient(c, server),
  (r, c, x) => `round ${r + 1} ${c.name}: ${fmt(x.reqPerS)} req/s, ${fmt(x.cpuUsPerReq, 2)} µs CPU/req, server ${fmt(x.serverCores, 2)} cores`,
  (c) => c.name,
)
server.p.kill()

const ratio = (name, key) => {
  const xs = rounds.map((r) => r[name][key] / r[BASE][key])
  return `${fmt(median(xs), 2)}x (${fmt(Math.min(...xs), 2)}–${fmt(Math.max(...xs), 2)})`
}
const lines = [
  `### HTTP clients, ${CONNS} connections, against the C server`,
  '',
  `Clients: \`${pin ? 'taskset -c 0 ' : ''}node benches/node/clients/http-get.mjs KIND PORT ${CONNS} DEPTH ${SECONDS} ${WARMUP}\` (GET / until the window ends, one request in flight per connection unless pipelined); server: \`${pin ? 'taskset -c 1 ' : ''}epoll_http\` (benches/peers/epoll_http.c). ${RUNS} rounds, order rotating; client CPU from process.cpuUsage() over the window.`,
  '',
  '| client | req/s | client CPU µs/req | client cores | server cores | req/s ratio vs node:http | CPU/req ratio vs node:http |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...CLIENTS.map((c) => {
    const col = (k) => rounds.map((r) => r[c.name][k])
    return `| ${c.name} | ${spread(col('reqPerS'))} | ${spread(col('cpuUsPerReq'), 2)} | ${fmt(median(col('clientCores')), 2)} | ${fmt(median(col('serverCores')), 2)} | ${c.name === BASE ? '1' : ratio(c.name, 'reqPerS')} | ${c.name === BASE ? '1' : ratio(c.name, 'cpuUsPerReq')} |`
  }),
  '',
]
console.log(lines.join('\n'))
if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify({ conns: CONNS, seconds: SECONDS, warmup: WARMUP, addon, rounds }, null, 2))
