// The TypeScript channel API against node:net in the same run (issue 7's benchmark, done as
// issue 11 asks): echo and line-framed request/response driven by a C load generator, a RESP
// server driven by redis-benchmark, and an HTTP hello server driven by wrk.
//
//   node benches/node/channels-vs-net.mjs [--quick] [--runs N] [--seconds S] [--warmup S]
//                                         [--only echo-1,echo-50,lines-50,resp,http]
//                                         [--resp-n N] [--resp-n-pipelined N] [--resp-targets native,js-codec,net,redis]
//                                         [--http-targets native,js-codec,c]
//                                         [--no-pin] [--json FILE] [--quiet-wait SECONDS]
//                                         [--quiet-wait-total SECONDS] [--addon FILE.node]
//                                         [--addon-b FILE.node]
//                                         [--http-delay-ms MS] [--http-pipeline N] [--no-node24]
//                                         [--jsonl FILE]
//
// The node:* servers run on the system Node (20) and again on Node 24 (`... (Node 24)` rows,
// the npm package of its official build fetched by runtimes.mjs; --no-node24 leaves them out);
// ratios are taken to the Node 20 server.
//
// --runs, --seconds, --warmup: rounds and measured/warm-up seconds per run (5, 3, 1; --quick:
// 3, 1.5, 0.5). wrk takes whole seconds: the HTTP runs round them (at least 1). --resp-n and
// --resp-n-pipelined: redis-benchmark requests per test at -P 1 and -P 16. A workload whose
// tool is missing (cc for echo_load, redis-benchmark, wrk) is skipped with a line saying so.
//
// The netloop servers load the addon the repo's native.js picks (netloop.linux-x64-gnu.node,
// which `npm run build` makes a release build), or FILE.node given with --addon (passed as
// NAPI_RS_NATIVE_LIBRARY_PATH): other engineers' debug builds overwrite the root addon, so for
// figures to publish pass a private copy of a release build. The addon's size, mtime and hash
// are printed, and the run warns when it looks like a debug build or changes during the run.
//
// Every run starts a fresh server process (node, compiled index.js, no tsx) bound to
// 127.0.0.1 on a free port; targets of a workload alternate within a round (the starting target
// rotates from round to round), 5 rounds (3 with --quick). Reported: medians over the rounds
// with min–max, and the netloop/node:net ratio taken per round (a pair run back to back), then
// its median and min–max.
//
// Server CPU: utime+stime of the server process (/proc/<pid>/stat, all threads), read by the
// load generator at the edges of its measured window (redis-benchmark: by this harness around
// each invocation). netloop servers print loop.metrics() on SIGTERM: deliveries (native→JS calls
// carrying channel events) and JS→native calls of the channel layer, divided by every message of
// the run (warm-up included).
//
// CPU placement (2 vCPUs): with 50 connections the server is pinned to CPU 0 and the client to
// CPU 1 (the server owns a core; its throughput is what is measured). With 1 connection both are
// pinned to CPU 0: a ping-pong across the two vCPUs of this VM waits on a cross-CPU wake-up of
// 50–100 µs (12–16 K msg/s against ~55 K on one CPU, whatever the server), and unpinned runs
// flip between the two modes. --no-pin leaves placement to the scheduler.
//
// HTTP (`http`): examples/http-hello.ts (bundled with esbuild like the RESP example, one loop on
// the main thread, under the metrics preload) against benches/node/servers/node-http.mjs (the
// same body and Content-Type from `http.createServer`), both keep-alive. Before the run each
// server must answer two pipelined GETs on one connection with 200, the Content-Type and
// `Hello, World!`; then `wrk -t 1 -c 50 --latency` (server on CPU 0, wrk on CPU 1) for a warm-up
// run and the measured run (wrk takes whole seconds). Any wrk socket error or error status (and
// any "Non-2xx or 3xx responses" line) fails the run. Server CPU: /proc/<pid>/stat around the
// measured wrk, in all and its user-space part (utime); latencies: wrk's p50/p99 (a small Lua script prints wrk's summary as JSON).
// The C floor benches/peers/epoll_http.c (built with cc when present) runs in the same rounds:
// the kernel's CPU per request under the same wrk, the least any server can spend here.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { bundleExample } from './bundle.mjs'
import { channelsRecords, toJsonl } from './channels-records.mjs'
import { CLK_TCK, addonUnderTest, alternating, describeAddon, flag, fmt, hostOf, inRounds, machineBusy, median, newer, opt, root, rotating, spread, waitForQuiet } from './harness.mjs'
import { wrk as wrkRun, writeWrkScripts } from './wrk.mjs'
import { nodeLine } from './runtimes.mjs'

const quick = flag('--quick')
const RUNS = Number(opt('--runs', quick ? 3 : 5))
const SECONDS = Number(opt('--seconds', quick ? 1.5 : 3))
const WARMUP = Number(opt('--warmup', quick ? 0.5 : 1))
const ONLY = opt('--only', 'echo-1,echo-50,lines-50,resp,http').split(',')
const PIN = !flag('--no-pin') && cpus().length >= 2
const SIZE = 64
const { given: ADDON, file: addonFile, addonId } = addonUnderTest()
const addonAtStart = addonId()

// ---------------------------------------------------------------------------------------------
// Build the load generator (only if the source is newer) and the RESP and HTTP examples.

const binDir = join(root, 'target', 'bench-bin')
mkdirSync(binDir, { recursive: true })
const loadSrc = join(root, 'benches', 'load', 'echo_load.c')
const loadBin = join(binDir, 'echo_load')
const have = (cmd, arg = '--version') => spawnSync(cmd, [arg]).error === undefined
/** Why echo_load cannot run (no C compiler to build it), else undefined. */
let noLoadGen
if (['echo-1', 'echo-50', 'lines-50'].some((k) => ONLY.includes(k)) && newer(loadSrc, loadBin)) {
  if (have('cc')) execFileSync('cc', ['-O2', '-Wall', '-o', loadBin, loadSrc], { stdio: 'inherit' })
  else noLoadGen = 'no C compiler (cc) to build benches/load/echo_load.c; apt-get install -y gcc'
}

// examples/resp-server.ts bundled with esbuild (every run: it imports other files), the library
// left to the compiled index.js: so neither RESP server runs under tsx.
const respSrc = join(root, 'examples', 'resp-server.ts')
const respBin = join(binDir, 'resp-server.cjs')
const haveResp = existsSync(respSrc)
if (haveResp) bundleExample(root, respSrc, respBin)
const haveRedisBenchmark = spawnSync('redis-benchmark', ['--version']).status === 0
const haveRedisServer = spawnSync('redis-server', ['--version']).status === 0
// The RESP rows: the example with the native codec (the default), with --js-codec (the pure-JS
// decoder and encoder, for reference), its node:net port, and redis-server when installed.
// --resp-targets native,js-codec,net,redis picks some of them (default: all): the pure-JS codec
// takes several times as long as the rest, so a quick check of the native path leaves it out.
const RESP_PICK = { native: 'netloop resp-server.ts', 'js-codec': 'netloop resp-server.ts --js-codec', net: 'node:net resp', redis: 'redis-server' }
const RESP_TARGETS = ['netloop resp-server.ts', 'netloop resp-server.ts --js-codec', 'node:net resp', ...(haveRedisServer ? ['redis-server'] : [])].filter((t) =>
  opt('--resp-targets', Object.keys(RESP_PICK).join(',')).split(',').some((k) => RESP_PICK[k] === t),
)

// examples/http-hello.ts (with http-handlers.ts) bundled the same way.
const httpSrc = join(root, 'examples', 'http-hello.ts')
const httpBin = join(binDir, 'http-hello.cjs')
const haveHttp = existsSync(httpSrc)
if (haveHttp && ONLY.includes('http')) bundleExample(root, httpSrc, httpBin)
const haveWrk = have('wrk', '-v')
// The C floor of the HTTP table: benches/peers/epoll_http.c (read, count each `\r\n\r\n`,
// send one prebuilt hello per request): what the kernel alone costs per request here.
const epollHttpSrc = join(root, 'benches', 'peers', 'epoll_http.c')
const epollHttpBin = join(binDir, 'epoll_http')
if (ONLY.includes('http') && have('cc') && newer(epollHttpSrc, epollHttpBin)) execFileSync('cc', ['-O2', '-Wall', '-o', epollHttpBin, epollHttpSrc], { stdio: 'inherit' })
const haveEpollHttp = existsSync(epollHttpBin)
// The same pipeline on the netloop core alone (examples/rust/http_hello.rs: the idle timeout,
// the native codec and a Rust handler answering with the same frozen response, one loop): the
// gap between it and the TS example is what the JS handler and its bridge cost.
const rustHttpBin = join(root, 'target', 'bench-build', 'release', 'examples', 'http_hello')
const wantRustHttp = ONLY.includes('http') && opt('--http-targets', 'rust').split(',').includes('rust')
if (wantRustHttp && have('cargo')) {
  const r = spawnSync('cargo', ['build', '--release', '-q', '-p', 'netloop-http', '--example', 'http_hello', '--target-dir', join(root, 'target', 'bench-build')], { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) console.error('skipped: netloop Rust http_hello (cargo build failed)')
}
const haveRustHttp = existsSync(rustHttpBin)
// wrk prints its own report; benches/node/wrk.mjs's scripts add one JSON line with the counts
// the harness needs. The fixed-rate run: wrk2 is not packaged, so wrk's Lua `delay()` makes
// every connection wait --http-delay-ms (default 5) after each response before its next request:
// 50 connections then offer at most 50 / (delay + response time) requests per second, the same
// low load to every server (at most 10 K req/s, below node:http's saturation), and the CPU per
// request compares the servers at equal load rather than at each one's maximum. The pipelined
// run: every connection sends --http-pipeline (default 16) GETs in one write and waits for their
// responses (wrk counts each response as a request), as wrk's pipeline example.
const HTTP_DELAY_MS = Number(opt('--http-delay-ms', 5))
const HTTP_PIPELINE = Number(opt('--http-pipeline', 16))
const { plain: wrkScript, rate: wrkRateScript, pipeline: wrkPipeScript } = writeWrkScripts(binDir, { delayMs: HTTP_DELAY_MS, pipeline: HTTP_PIPELINE })

// ---------------------------------------------------------------------------------------------
// Servers

const servers = join(root, 'benches', 'node', 'servers')
const TARGETS = {
  'netloop writeAndFlush': { netloop: true, args: [join(servers, 'netloop-echo.mjs')] },
  'netloop write+flush': { netloop: true, args: [join(servers, 'netloop-echo.mjs'), '--batched'] },
  'node:net': { args: [join(servers, 'net-echo.mjs')] },
  'netloop lines': { netloop: true, args: [join(servers, 'netloop-lines.mjs')] },
  'node:net lines': { args: [join(servers, 'net-lines.mjs')] },
  'netloop resp-server.ts': { netloop: true, args: ['-r', join(servers, 'netloop-metrics-preload.cjs'), respBin, '--port', '0'] },
  'netloop resp-server.ts --js-codec': { netloop: true, args: ['-r', join(servers, 'netloop-metrics-preload.cjs'), respBin, '--port', '0', '--js-codec'] },
  'node:net resp': { args: [join(servers, 'net-resp.mjs')] },
  // redis-server itself (no persistence, one I/O thread): the C reference for CPU per request.
  'redis-server': { external: (port) => ['redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--io-threads', '1', '--loglevel', 'warning']] },
  'netloop http-hello.ts': { netloop: true, args: ['-r', join(servers, 'netloop-metrics-preload.cjs'), httpBin, '--port', '0'] },
  'netloop http-hello.ts --js-codec': { netloop: true, args: ['-r', join(servers, 'netloop-metrics-preload.cjs'), httpBin, '--port', '0', '--js-codec'] },
  'node:http': { args: [join(servers, 'node-http.mjs')] },
  'C epoll http (floor)': { external: (port) => [epollHttpBin, [String(port)]] },
  'netloop Rust http_hello': { external: (port) => [rustHttpBin, [`127.0.0.1:${port}`]] },
}

/** A free TCP port on 127.0.0.1 (for servers that cannot pick one and print it). */
async function freePort() {
  const { createServer } = await import('node:net')
  return new Promise((resolve, reject) => {
    const s = createServer().once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** Resolves once something accepts connections on 127.0.0.1:port (polled, up to 10 s). */
async function untilListening(port, exited) {
  const { connect } = await import('node:net')
  let gone = false
  exited.then(() => (gone = true))
  for (let i = 0; i < 200 && !gone; i++) {
    const ok = await new Promise((resolve) => {
      const s = connect(port, '127.0.0.1')
      s.once('connect', () => (s.destroy(), resolve(true)))
      s.once('error', () => resolve(false))
    })
    if (ok) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`nothing listens on port ${port}`)
}

/** Starts a program that takes its port as an argument (redis-server); the same shape as startServer's. */
async function startExternal(name, cpu) {
  const port = await freePort()
  const [prog, progArgs] = TARGETS[name].external(port)
  const cmd = cpu === undefined ? prog : 'taskset'
  const args = cpu === undefined ? progArgs : ['-c', String(cpu), prog, ...progArgs]
  // stderr into a file, not a pipe: the load runs synchronously, nothing would drain a pipe
  // meanwhile, and a server that writes a line per reset connection would block on a full one.
  const errFile = join(binDir, `${name.replace(/[^\w.-]+/g, '_')}.stderr`)
  const errFd = openSync(errFile, 'w')
  const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'ignore', errFd] })
  closeSync(errFd)
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  await untilListening(port, exited)
  return {
    pid: child.pid, // taskset execs the program: the same process
    port,
    async stop() {
      child.kill('SIGTERM')
      const how = await exited
      const err = readFileSync(errFile, 'utf8')
      if (err.trim()) process.stderr.write(`[${name}] ${err.trim().split('\n').slice(0, 5).join('\n')}\n`)
      if (how.code !== 0) process.stderr.write(`[${name}] exit ${JSON.stringify(how)}\n`)
      return undefined
    },
  }
}

/** Starts a server; resolves when it printed its port. */
function startServer(name, cpu) {
  const t = TARGETS[name]
  if (t.external) return startExternal(name, cpu)
  const node = t.node ?? process.execPath
  const cmd = cpu === undefined ? node : 'taskset'
  const args = cpu === undefined ? t.args : ['-c', String(cpu), node, ...t.args]
  // `t.env`: variables of this server only (an A/B's second addon, NAPI_RS_NATIVE_LIBRARY_PATH).
  const env = t.env ? { ...process.env, ...t.env } : process.env
  const child = spawn(cmd, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  return new Promise((resolve, reject) => {
    let out = ''
    const onData = (d) => {
      out += d
      const m = /(\d+)\s*$/m.exec(out)
      if (m && out.includes('\n')) {
        child.stdout.off('data', onData)
        child.stdout.resume()
        resolve({
          pid: child.pid,
          port: Number(m[1]),
          async stop() {
            child.kill('SIGTERM')
            const how = await exited
            const line = err.split('\n').find((l) => l.startsWith('{"metrics"'))
            const other = err.split('\n').filter((l) => l && !l.startsWith('{"metrics"'))
            if (other.length) process.stderr.write(`[${name}] ${other.slice(0, 5).join('\n')}\n`)
            if (how.code !== 0) process.stderr.write(`[${name}] exit ${JSON.stringify(how)}\n`)
            return line ? JSON.parse(line).metrics : undefined
          },
        })
      }
    }
    child.stdout.on('data', onData)
    exited.then((how) => reject(new Error(`${name} exited before listening: ${JSON.stringify(how)} ${err}`)))
  })
}


/**
 * Waits (up to QUIET_WAIT_S) until the machine is quiet: less than 0.25 of a core busy over half
 * a second. Other engineers build and test on this VM; a run next to them measures them.
 */
const QUIET_WAIT_S = Number(opt('--quiet-wait', 120))
let quietWaited = 0
function waitQuiet() {
  quietWaited += waitForQuiet(QUIET_WAIT_S).waitedMs
}

function procTicks(pid) {
  const f = procStat(pid)
  return Number(f[11]) + Number(f[12]) // utime, stime (fields 14 and 15)
}

/** The user-space part of `procTicks`: what a cheaper or dearer kernel does not move. */
function procUserTicks(pid) {
  return Number(procStat(pid)[11])
}

function procStat(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return s.slice(s.lastIndexOf(')') + 2).split(' ')
}

// ---------------------------------------------------------------------------------------------
// Statistics


// ---------------------------------------------------------------------------------------------
// Workloads driven by echo_load

const WORKLOADS = {
  'echo-1': { title: '64 B echo, 1 connection', conns: 1, mode: 'echo', targets: ['netloop writeAndFlush', 'netloop write+flush', 'node:net'], pin: [0, 0] },
  'echo-50': { title: '64 B echo, 50 connections', conns: 50, mode: 'echo', targets: ['netloop writeAndFlush', 'netloop write+flush', 'node:net'], pin: [0, 1] },
  'lines-50': { title: '64 B line request/response (63 bytes + \\n), 50 connections', conns: 50, mode: 'lines', targets: ['netloop lines', 'node:net lines'], pin: [0, 1] },
}

async function loadRun(name, w) {
  waitQuiet()
  const [scpu, ccpu] = PIN ? w.pin : [undefined, undefined]
  const server = await startServer(name, scpu)
  const args = ['127.0.0.1', String(server.port), String(w.conns), String(SIZE), String(SECONDS), String(WARMUP), w.mode, String(server.pid)]
  const r = spawnSync(ccpu === undefined ? loadBin : 'taskset', ccpu === undefined ? args : ['-c', String(ccpu), loadBin, ...args], { encoding: 'utf8' })
  const metrics = await server.stop()
  if (r.status !== 0) throw new Error(`echo_load against ${name} failed (${r.status}): ${r.stderr}`)
  const c = JSON.parse(r.stdout)
  const serverS = c.server_cpu_ticks / c.clock_ticks_per_s
  return {
    target: name,
    msgPerS: c.msg_per_s,
    p50: c.p50_us,
    p99: c.p99_us,
    serverCpuUsPerMsg: (serverS * 1e6) / c.messages,
    serverCores: serverS / c.seconds,
    clientCpuShare: c.client_cpu_share,
    clientUserShare: c.client_user_s / c.seconds,
    otherCores: Math.max(0, c.machine_busy_ticks / c.clock_ticks_per_s / c.seconds - serverS / c.seconds - c.client_cpu_share),
    deliveriesPerMsg: metrics ? metrics.deliveries / c.total_messages : undefined,
    jsCallsPerMsg: metrics ? metrics.jsToNativeCalls / c.total_messages : undefined,
    eventsPerMsg: metrics ? metrics.events / c.total_messages : undefined,
    raw: { client: c, metrics },
  }
}

function loadTable(w, rounds) {
  const base = w.targets.find((t) => !TARGETS[t].netloop)
  const lines = [
    `| server | msg/s | p50 µs | p99 µs | server CPU µs/msg | server cores | deliveries/msg | JS→native calls/msg | client CPU share (user) | msg/s ratio vs node:net | CPU/msg ratio vs node:net |`,
    `| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |`,
  ]
  for (const t of w.targets) {
    const rs = rounds.map((round) => round[t])
    const col = (k) => rs.map((r) => r[k])
    const ratio = (k) => (t === base ? '1' : spread(rounds.map((round) => round[t][k] / round[base][k]), 2, 'x'))
    lines.push(
      `| ${t} | ${spread(col('msgPerS'))} | ${fmt(median(col('p50')))} | ${fmt(median(col('p99')))} (${fmt(Math.min(...col('p99')))}–${fmt(Math.max(...col('p99')))}) | ${spread(col('serverCpuUsPerMsg'), 2)} | ${fmt(median(col('serverCores')), 2)} | ${TARGETS[t].netloop ? fmt(median(col('deliveriesPerMsg')), 3) : '–'} | ${TARGETS[t].netloop ? fmt(median(col('jsCallsPerMsg')), 4) : '–'} | ${fmt(median(col('clientCpuShare')), 2)} (${fmt(median(col('clientUserShare')), 2)}) | ${ratio('msgPerS')} | ${ratio('serverCpuUsPerMsg')} |`,
    )
  }
  const other = rounds.flatMap((round) => Object.values(round).map((r) => r.otherCores))
  lines.push('', `Other load during the windows (cores busy beyond server and client): median ${fmt(median(other), 2)}, max ${fmt(Math.max(...other), 2)}.`)
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------
// RESP with redis-benchmark

const RESP_TESTS = ['ping_mbulk', 'set', 'get']
const RESP_DEPTHS = [
  { P: 1, n: Number(opt('--resp-n', 100_000)) },
  // 100 000 pipelined requests take ~0.2 s: too short for 10 ms CPU ticks, so 10x as many.
  { P: 16, n: Number(opt('--resp-n-pipelined', quick ? 300_000 : 1_000_000)) },
]

function redisBenchmark(port, test, P, n, cpu) {
  const cmd = `${cpu === undefined ? '' : `taskset -c ${cpu} `}redis-benchmark -p ${port} -c 50 -n ${n} -P ${P} -t ${test} -q --csv; cat /proc/$$/stat`
  const t0 = process.hrtime.bigint()
  const r = spawnSync('sh', ['-c', cmd], { encoding: 'utf8' })
  const wall = Number(process.hrtime.bigint() - t0) / 1e9
  if (r.status !== 0) throw new Error(`redis-benchmark failed: ${r.stderr}`)
  const lines = r.stdout.trim().split('\n')
  const stat = lines.pop()
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const clientS = (Number(f[13]) + Number(f[14])) / CLK_TCK // cutime + cstime: the reaped redis-benchmark
  const row = lines.find((l) => !l.startsWith('"test"')).split(',').map((x) => x.replace(/"/g, ''))
  return { test: row[0], rps: Number(row[1]), p50ms: Number(row[4]), p99ms: Number(row[6]), wall, clientS }
}

async function respRun(name) {
  waitQuiet()
  const [scpu, ccpu] = PIN ? [0, 1] : [undefined, undefined]
  const server = await startServer(name, scpu)
  let requests = 0
  redisBenchmark(server.port, 'ping_mbulk,set,get', 1, quick ? 10_000 : 30_000, ccpu) // warm-up (JIT), not measured
  requests += 3 * (quick ? 10_000 : 30_000)
  const out = {}
  for (const { P, n } of RESP_DEPTHS) {
    for (const test of RESP_TESTS) {
      const before = procTicks(server.pid)
      const b = redisBenchmark(server.port, test, P, n, ccpu)
      const serverS = (procTicks(server.pid) - before) / CLK_TCK
      requests += n
      out[`${b.test} -P ${P}`] = { rps: b.rps, p50: b.p50ms * 1000, p99: b.p99ms * 1000, serverCpuUsPerReq: (serverS * 1e6) / n, serverCores: serverS / b.wall, clientCpuShare: b.clientS / b.wall }
    }
  }
  const metrics = await server.stop()
  for (const r of Object.values(out)) {
    r.deliveriesPerReq = metrics ? metrics.deliveries / requests : undefined
    r.jsCallsPerReq = metrics ? metrics.jsToNativeCalls / requests : undefined
  }
  return { target: name, tests: out, metrics, requests }
}

function respTable(rounds) {
  const targets = RESP_TARGETS
  const net = targets.includes('node:net resp') ? 'node:net resp' : undefined
  const redis = targets.includes('redis-server') ? 'redis-server' : undefined
  const lines = [
    `| test | server | requests/s | p50 µs | p99 µs | server CPU µs/req | server cores | deliveries/req | JS→native calls/req | client CPU share | req/s ratio vs node:net | CPU/req ratio vs node:net | CPU/req ratio vs redis-server |`,
    `| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |`,
  ]
  for (const test of Object.keys(rounds[0][targets[0]].tests)) {
    for (const t of targets) {
      const rs = rounds.map((round) => round[t].tests[test])
      const col = (k) => rs.map((r) => r[k])
      const ratioTo = (base, k) => (base === undefined ? '–' : t === base ? '1' : spread(rounds.map((round) => round[t].tests[test][k] / round[base].tests[test][k]), 2, 'x'))
      const nl = TARGETS[t].netloop
      lines.push(
        `| ${test} | ${t} | ${spread(col('rps'))} | ${fmt(median(col('p50')))} | ${fmt(median(col('p99')))} | ${spread(col('serverCpuUsPerReq'), 2)} | ${fmt(median(col('serverCores')), 2)} | ${nl ? fmt(median(col('deliveriesPerReq')), 3) : '–'} | ${nl ? fmt(median(col('jsCallsPerReq')), 4) : '–'} | ${fmt(median(col('clientCpuShare')), 2)} | ${ratioTo(net, 'rps')} | ${ratioTo(net, 'serverCpuUsPerReq')} | ${ratioTo(redis, 'serverCpuUsPerReq')} |`,
      )
    }
  }
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------
// HTTP with wrk

// The example with the native codec (the default), with --js-codec (the pure-JS decoder, for
// reference), the same pipeline in Rust alone (when cargo built it), node:http, and the C floor
// when a C compiler built it.
// --http-targets native,js-codec,rust,c picks some of them (node:http, every ratio's base, always
// runs): a long series of the issue's ratio to the C floor needs only the native codec and C.
// --addon-b FILE adds `netloop http-hello.ts (B)`: the native codec's example on another build of
// the addon, alternated with the first in every round (an A/B of two builds on one host in the
// same minutes).
const ADDON_B = opt('--addon-b', undefined)
if (ADDON_B) TARGETS['netloop http-hello.ts (B)'] = { ...TARGETS['netloop http-hello.ts'], env: { NAPI_RS_NATIVE_LIBRARY_PATH: resolve(ADDON_B) } }
const HTTP_PICK = { native: 'netloop http-hello.ts', 'js-codec': 'netloop http-hello.ts --js-codec', node: 'node:http', c: 'C epoll http (floor)', rust: 'netloop Rust http_hello' }
const HTTP_TARGETS = ['netloop http-hello.ts', 'netloop http-hello.ts --js-codec', ...(haveRustHttp ? ['netloop Rust http_hello'] : []), 'node:http', ...(haveEpollHttp ? ['C epoll http (floor)'] : [])].filter(
  (t) => t === 'node:http' || opt('--http-targets', Object.keys(HTTP_PICK).join(',')).split(',').some((k) => HTTP_PICK[k] === t),
)
if (ADDON_B && HTTP_TARGETS.includes('netloop http-hello.ts')) HTTP_TARGETS.splice(1, 0, 'netloop http-hello.ts (B)')
// The node servers again on Node 24 (runtimes.mjs; --no-node24 leaves them out): every ratio
// to node:* is taken to Node 20's, and the Node 24 rows show where the newer line stands.
const node24Note = []
if (!flag('--no-node24')) {
  const n24 = nodeLine()
  if (!n24.bin) node24Note.push(`Node 24 servers skipped: ${n24.reason}`)
  else {
    const twins = { 'node:net': WORKLOADS['echo-1'].targets, 'node:net lines': WORKLOADS['lines-50'].targets, 'node:net resp': RESP_TARGETS, 'node:http': HTTP_TARGETS }
    for (const [name, lists] of Object.entries(twins)) {
      TARGETS[`${name} (Node 24)`] = { ...TARGETS[name], node: n24.bin }
      if (lists === RESP_TARGETS && !RESP_TARGETS.includes(name)) continue // --resp-targets left node:net out
      for (const list of name === 'node:net' ? [WORKLOADS['echo-1'].targets, WORKLOADS['echo-50'].targets] : [lists]) list.push(`${name} (Node 24)`)
    }
  }
}
// wrk's -d takes whole seconds.
const HTTP_SECONDS = Math.max(1, Math.round(SECONDS))
const HTTP_WARMUP = Math.max(1, Math.round(WARMUP))
const HTTP_CONNS = 50

/** Two GET requests on one connection (keep-alive): the status, headers and body of each. */
async function rawHttp(port) {
  const { connect } = await import('node:net')
  const req = `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1')
    let buf = Buffer.alloc(0)
    const timer = setTimeout(() => {
      sock.destroy()
      reject(new Error(`no complete answer to two keep-alive GETs within 5 s; got ${JSON.stringify(buf.toString('latin1'))}`))
    }, 5000)
    sock.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    sock.on('connect', () => sock.write(req + req))
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      const out = []
      let rest = buf.toString('latin1')
      for (let i = 0; i < 2; i++) {
        const end = rest.indexOf('\r\n\r\n')
        if (end < 0) return
        const [status, ...lines] = rest.slice(0, end).split('\r\n')
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
        const len = Number(headers['content-length'])
        if (!(len >= 0) || rest.length < end + 4 + len) return
        out.push({ status, headers, body: rest.slice(end + 4, end + 4 + len) })
        rest = rest.slice(end + 4 + len)
      }
      clearTimeout(timer)
      sock.destroy()
      resolve(out)
    })
  })
}

/** Checks that a server answers two pipelined keep-alive GETs with 200 and the hello body. */
async function checkHttp(name, port) {
  const rs = await rawHttp(port)
  for (const r of rs) {
    const bad = []
    if (!/^HTTP\/1\.1 200 /.test(r.status)) bad.push(`status line ${JSON.stringify(r.status)}`)
    if (r.body !== 'Hello, World!') bad.push(`body ${JSON.stringify(r.body)}`)
    if (r.headers['content-type'] !== 'text/plain; charset=utf-8') bad.push(`content-type ${JSON.stringify(r.headers['content-type'])}`)
    if ((r.headers.connection ?? 'keep-alive').toLowerCase() !== 'keep-alive') bad.push(`connection ${r.headers.connection}`)
    if (bad.length) throw new Error(`HTTP check of ${name} failed: ${bad.join(', ')}`)
  }
  return rs[0]
}

/** One wrk run of the HTTP workload against 127.0.0.1:port. */
const wrk = (port, seconds, cpu, script = wrkScript) => wrkRun({ url: `http://127.0.0.1:${port}/`, conns: HTTP_CONNS, seconds, cpu, script })

async function httpRun(name) {
  waitQuiet()
  const [scpu, ccpu] = PIN ? [0, 1] : [undefined, undefined]
  const server = await startServer(name, scpu)
  try {
    await checkHttp(name, server.port)
    const warm = wrk(server.port, HTTP_WARMUP, ccpu) // warm-up (JIT), not measured
    const before = procTicks(server.pid)
    const beforeUser = procUserTicks(server.pid)
    const busy0 = machineBusy()
    const b = wrk(server.port, HTTP_SECONDS, ccpu)
    const busyS = (machineBusy() - busy0) / CLK_TCK
    const serverS = (procTicks(server.pid) - before) / CLK_TCK
    const serverUserS = (procUserTicks(server.pid) - beforeUser) / CLK_TCK
    const beforeFixed = procTicks(server.pid)
    const fixed = wrk(server.port, HTTP_SECONDS, ccpu, wrkRateScript)
    const fixedS = (procTicks(server.pid) - beforeFixed) / CLK_TCK
    const beforePiped = procTicks(server.pid)
    const piped = wrk(server.port, HTTP_SECONDS, ccpu, wrkPipeScript)
    const pipedS = (procTicks(server.pid) - beforePiped) / CLK_TCK
    const metrics = await server.stop()
    const all = warm.requests + b.requests + fixed.requests + piped.requests + 2 // + the two of the check
    const seconds = b.duration_us / 1e6
    return {
      target: name,
      fixedRps: fixed.requests / (fixed.duration_us / 1e6),
      fixedCpuUsPerReq: (fixedS * 1e6) / fixed.requests,
      fixedP99: fixed.p99_us,
      pipedRps: piped.requests / (piped.duration_us / 1e6),
      pipedCpuUsPerReq: (pipedS * 1e6) / piped.requests,
      rps: b.requests / seconds,
      p50: b.p50_us,
      p99: b.p99_us,
      serverCpuUsPerReq: (serverS * 1e6) / b.requests,
      serverUserUsPerReq: (serverUserS * 1e6) / b.requests,
      serverCores: serverS / b.wall,
      clientCpuShare: b.clientS / b.wall,
      otherCores: Math.max(0, (busyS - serverS - b.clientS) / b.wall),
      deliveriesPerReq: metrics ? metrics.deliveries / all : undefined,
      jsCallsPerReq: metrics ? metrics.jsToNativeCalls / all : undefined,
      raw: { wrk: b, warmup: warm, fixed, piped, metrics },
    }
  } catch (e) {
    await server.stop()
    throw e
  }
}

function httpTable(rounds) {
  const base = 'node:http'
  // The issue's HTTP targets are ratios to the C floor as well: taken per round like node:http's.
  const floor = HTTP_TARGETS.includes('C epoll http (floor)') ? 'C epoll http (floor)' : undefined
  const lines = [
    `| server | requests/s | p50 µs | p99 µs | server CPU µs/req | of which user µs/req | server cores | deliveries/req | JS→native calls/req | client CPU share | req/s ratio vs node:http | CPU/req ratio vs node:http | fixed rate: req/s | fixed rate: p99 µs | fixed rate: CPU µs/req | fixed rate: CPU/req ratio vs node:http | pipelined ×${HTTP_PIPELINE}: req/s | pipelined: CPU µs/req | pipelined: CPU/req ratio vs node:http |${floor ? ' CPU/req ratio vs C floor: saturated / fixed rate / pipelined |' : ''}`,
    `| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |${floor ? ' --- |' : ''}`,
  ]
  for (const t of HTTP_TARGETS) {
    const col = (k) => rounds.map((round) => round[t][k])
    const ratioTo = (to, k) => (t === to ? '1' : spread(rounds.map((round) => round[t][k] / round[to][k]), 2, 'x'))
    const ratio = (k) => ratioTo(base, k)
    const nl = TARGETS[t].netloop
    const toFloor = floor ? ` ${['serverCpuUsPerReq', 'fixedCpuUsPerReq', 'pipedCpuUsPerReq'].map((k) => ratioTo(floor, k)).join(' / ')} |` : ''
    lines.push(
      `| ${t} | ${spread(col('rps'))} | ${fmt(median(col('p50')))} | ${fmt(median(col('p99')))} (${fmt(Math.min(...col('p99')))}–${fmt(Math.max(...col('p99')))}) | ${spread(col('serverCpuUsPerReq'), 2)} | ${spread(col('serverUserUsPerReq'), 2)} | ${fmt(median(col('serverCores')), 2)} | ${nl ? fmt(median(col('deliveriesPerReq')), 3) : '–'} | ${nl ? fmt(median(col('jsCallsPerReq')), 4) : '–'} | ${fmt(median(col('clientCpuShare')), 2)} | ${ratio('rps')} | ${ratio('serverCpuUsPerReq')} | ${spread(col('fixedRps'))} | ${fmt(median(col('fixedP99')))} | ${spread(col('fixedCpuUsPerReq'), 2)} | ${ratio('fixedCpuUsPerReq')} | ${spread(col('pipedRps'))} | ${spread(col('pipedCpuUsPerReq'), 2)} | ${ratio('pipedCpuUsPerReq')} |${toFloor}`,
    )
  }
  const other = rounds.flatMap((round) => Object.values(round).map((r) => r.otherCores))
  lines.push('', `Other load during the windows (cores busy beyond server and client): median ${fmt(median(other), 2)}, max ${fmt(Math.max(...other), 2)}.`)
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------

const load1 = loadavg()[0]
const header = [
  `netloop channels vs node:net: ${new Date().toISOString()}, node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${load1.toFixed(2)} at start`,
  `${RUNS} rounds, ${SECONDS} s measured after ${WARMUP} s warm-up per run, ${SIZE} B messages, CPU pinning ${PIN ? 'on' : 'off'}`,
]
header.push(`addon ${addonAtStart.file}: ${addonAtStart.size} bytes, ${addonAtStart.mtime}, sha256 ${addonAtStart.sha256}`)
if (ADDON_B) {
  const b = describeAddon(resolve(ADDON_B))
  header.push(`addon B (netloop http-hello.ts (B)) ${b.file}: ${b.size} bytes, ${b.mtime}, sha256 ${b.sha256}`)
}
// A release build is ~1.2 MB; a debug build (opt-level 0, debug assertions) is ~25 MB and 2x slower.
if (addonAtStart.size > 8 << 20) header.push('WARNING: the addon looks like a DEBUG build (size): netloop figures are not representative')
if (load1 > 0.5) header.push(`WARNING: the machine is not quiet (load average ${load1.toFixed(2)}): figures will be noisy`)
header.push(...node24Note)
console.log(header.join('\n'))
const results = { header, runs: {}, tables: {} }

for (const [key, w] of Object.entries(WORKLOADS)) {
  if (!ONLY.includes(key)) continue
  if (noLoadGen) {
    console.log(`\n(${key} skipped: ${noLoadGen})`)
    continue
  }
  const rounds = await inRounds(
    RUNS,
    rotating(w.targets),
    (t) => loadRun(t, w),
    (r, t, x) => `${key} round ${r + 1}/${RUNS} ${t}: ${fmt(x.msgPerS)} msg/s, ${fmt(x.serverCpuUsPerMsg, 2)} µs CPU/msg`,
  )
  results.runs[key] = rounds
  const cmd = `echo_load 127.0.0.1 PORT ${w.conns} ${SIZE} ${SECONDS} ${WARMUP} ${w.mode} SERVER_PID`
  results.tables[key] = `### ${w.title}\n\nClient: \`${PIN ? `taskset -c ${w.pin[1]} ` : ''}${cmd}\`; servers ${PIN ? `on CPU ${w.pin[0]}` : 'unpinned'}.\n\n${loadTable(w, rounds)}`
  console.log(`\n${results.tables[key]}`)
}

if (ONLY.includes('resp')) {
  if (!haveResp) console.log('\n(RESP skipped: examples/resp-server.ts not found)')
  else if (!haveRedisBenchmark) console.log('\n(RESP skipped: redis-benchmark not installed; apt-get install -y redis-tools)')
  else {
    if (!haveRedisServer) console.log('\n(RESP: no redis-server row: redis-server not installed; apt-get install -y redis-server)')
    const rounds = await inRounds(
      RUNS,
      rotating(RESP_TARGETS),
      respRun,
      (r, t, x) => `resp round ${r + 1}/${RUNS} ${t}: ${Object.entries(x.tests).map(([k, v]) => `${k} ${fmt(v.rps)}/s`).join(', ')}`,
    )
    results.runs.resp = rounds
    results.tables.resp = `### RESP (redis-benchmark)\n\nClient: \`${PIN ? 'taskset -c 1 ' : ''}redis-benchmark -p PORT -c 50 -n N -P {1,16} -t {ping_mbulk,set,get} -q --csv\` (N = ${RESP_DEPTHS.map((d) => `${d.n} at -P ${d.P}`).join(', ')}), one invocation per test; servers ${PIN ? 'on CPU 0' : 'unpinned'}, each warmed up with ${quick ? '3 × 10 000' : '3 × 30 000'} requests first.\n\n${respTable(rounds)}`
    console.log(`\n${results.tables.resp}`)
  }
}

if (ONLY.includes('http')) {
  if (!haveHttp) console.log('\n(HTTP skipped: examples/http-hello.ts not found)')
  else if (!haveWrk) console.log('\n(HTTP skipped: wrk not installed; apt-get install -y wrk)')
  else {
    const rounds = await inRounds(
      RUNS,
      rotating(HTTP_TARGETS),
      httpRun,
      (r, t, x) => `http round ${r + 1}/${RUNS} ${t}: ${fmt(x.rps)} req/s, ${fmt(x.serverCpuUsPerReq, 2)} µs CPU/req, p99 ${fmt(x.p99)} µs`,
    )
    results.runs.http = rounds
    results.tables.http = [
      '### HTTP/1.1 hello (wrk)',
      '',
      `Client: \`${PIN ? 'taskset -c 1 ' : ''}wrk -t 1 -c ${HTTP_CONNS} -d ${HTTP_SECONDS}s --latency http://127.0.0.1:PORT/\` after a ${HTTP_WARMUP} s warm-up run, then the same at a fixed rate (the script's \`delay()\` returns ${HTTP_DELAY_MS} ms: each connection waits that long after a response), then pipelined (the script sends ${HTTP_PIPELINE} GETs in one write per connection and waits for their responses); servers ${PIN ? 'on CPU 0' : 'unpinned'}: examples/http-hello.ts (bundled to ${httpBin.replace(root + '/', '')}, 1 thread) against benches/node/servers/node-http.mjs (\`http.createServer((req, res) => res.writeHead(200, HEADERS).end(BODY))\`)${haveEpollHttp ? ' and the C floor benches/peers/epoll_http.c (one recv, a prebuilt response per `\\r\\n\\r\\n`, one send: the kernel\'s cost per request)' : ''}${haveRustHttp ? ', and the same pipeline on the netloop core alone (examples/rust/http_hello.rs: idle timeout, native codec, a Rust handler with the same frozen response, one loop)' : ''}. Each server answered two pipelined keep-alive GETs with 200, \`Content-Type: text/plain; charset=utf-8\` and \`Hello, World!\` before the run; every wrk run had no socket errors and no non-2xx/3xx responses. Server CPU over the measured wrk invocation; latencies are wrk's.`,
      '',
      httpTable(rounds),
    ].join('\n')
    console.log(`\n${results.tables.http}`)
  }
}

const addonAtEnd = addonId()
if (addonAtEnd.sha256 !== addonAtStart.sha256) console.log(`\nWARNING: the addon changed during the run (now ${addonAtEnd.size} bytes, ${addonAtEnd.mtime}): discard this run`)
console.log(`\nwaited ${(quietWaited / 1000).toFixed(1)} s in all for a quiet machine before runs`)
const jsonOut = opt('--json', join(root, 'target', 'bench-results', `channels-vs-net-${Date.now()}.json`))
mkdirSync(dirname(jsonOut), { recursive: true })
writeFileSync(jsonOut, JSON.stringify(results, null, 1))
console.log(`\nraw results: ${jsonOut}`)
// One JSON line per workload and server (the format of docs/benchmarks/results.jsonl:
// scripts/bench-compare.mjs --new FILE compares them with the last published run).
const jsonl = opt('--jsonl', undefined)
if (jsonl) {
  const git = (...a) => spawnSync('git', a, { cwd: root, encoding: 'utf8' }).stdout?.trim() ?? ''
  const commit = `${git('rev-parse', '--short=12', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? '-dirty' : ''}`
  const command = `node benches/node/channels-vs-net.mjs ${process.argv.slice(2).map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ')}`.trim()
  const started = /: (\d{4}-\d\d-\d\dT[\d:.]+Z),/.exec(header[0])?.[1]
  writeFileSync(jsonl, toJsonl(channelsRecords(results.runs, { pinned: PIN }), { date: started, commit, command, load: { loadavg1: Number(load1.toFixed(2)) }, runtime: `node ${process.versions.node}`, host: hostOf() }))
  console.log(`records: ${jsonl}`)
}
