// Several cores in one port (issue 8 §7): netloop worker groups (1 and 2 worker threads; boss
// hand-off and SO_REUSEPORT) against the Node 20 alternatives on the same work: node:net on 1
// and 2 worker threads sharing one listening fd, and node:cluster with 1 and 2 worker processes.
//
//   node benches/node/scaling.mjs [--quick] [--runs N] [--seconds S] [--only echo,resp]
//                                 [--no-pin] [--quiet-wait SECONDS] [--addon FILE.node] [--json FILE]
//                                 [--targets SUBSTR,...] [--resp-n N] [--warmup S] [--resp-warmup-n N]
//                                 [--quiet-wait-total SECONDS] [--spin-us N]
//
// --runs, --seconds, --warmup: rounds, echo seconds measured and warmed up per run (5, 3, 1;
// --quick: 3, 1.5, 0.5); --resp-n, --resp-warmup-n: redis-benchmark requests per test and per
// warm-up test (1 000 000 and 100 000; --quick: 300 000 and 30 000). A workload whose tool is
// missing (cc for echo_load, redis-benchmark) is skipped with a line saying so.
//
// Workloads: the 50-connection 64 B echo of channels-vs-net.mjs (benches/load/echo_load.c, one
// message in flight per connection) and RESP under `redis-benchmark -c 50 -P 16` (GET and SET),
// served by examples/resp-handlers.ts (netloop workers run the example's own module, compiled by
// esbuild; node:net runs net-resp.mjs's decoder, commands and store, cut out of that file).
//
// Reported per target, medians over alternating rounds with min–max: throughput, server CPU per
// message (utime+stime of every thread of every server process: for cluster the primary and its
// workers), peak RSS (VmHWM summed over the server's processes), the ratio 2 workers / 1 worker
// (taken per round) and the per-core efficiency: messages per server CPU-second with 2 workers
// divided by that with 1 (goal ≥ 0.9). Both workers busy: per-thread CPU over the measured window
// (/proc/PID/task/*/stat) and, for netloop, each worker loop's metrics() printed at exit.
// "msgs per JS delivery" (netloop): messages of the run over the native→JS deliveries of all
// worker loops, i.e. how many messages one wake-up of JS carried (the loop's batching).
//
// Placement: the client is pinned to CPU 1, the servers are not pinned. On a 2-vCPU machine the
// load generator shares the cores with the server: 2 server workers cannot get 2 full cores, so
// the throughput ratio 2/1 is bounded well below 2; the per-core efficiency is the figure that
// says whether a second worker costs extra CPU per message.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { bundleExample } from './bundle.mjs'
import { CLK_TCK, addonUnderTest, flag, fmt, inRounds, machineBusy, median, newer, opt, root, rotating, sleepSync, spread, waitForQuiet } from './harness.mjs'

const quick = flag('--quick')
const RUNS = Number(opt('--runs', quick ? 3 : 5))
const SECONDS = Number(opt('--seconds', quick ? 1.5 : 3))
const WARMUP = Number(opt('--warmup', quick ? 0.5 : 1))
const ONLY = opt('--only', 'echo,resp').split(',')
const PIN = !flag('--no-pin') && cpus().length >= 2
const CLIENT_CPU = 1
const RESP_N = Number(opt('--resp-n', quick ? 300_000 : 1_000_000))
const RESP_WARMUP_N = Number(opt('--resp-warmup-n', quick ? 30_000 : 100_000))
const { given: ADDON, file: addonFile, addonId } = addonUnderTest()
const addonAtStart = addonId()

// ---------------------------------------------------------------------------------------------
// Build: the load generator, the RESP example and its handlers, the node:net RESP handler.

const binDir = join(root, 'target', 'bench-bin', 'scaling')
mkdirSync(binDir, { recursive: true })
const loadSrc = join(root, 'benches', 'load', 'echo_load.c')
const loadBin = join(binDir, 'echo_load')
/** Why echo_load cannot run (no C compiler to build it), else undefined. */
let noLoadGen
if (ONLY.includes('echo') && newer(loadSrc, loadBin)) {
  if (spawnSync('cc', ['--version']).error === undefined) execFileSync('cc', ['-O2', '-Wall', '-o', loadBin, loadSrc], { stdio: 'inherit' })
  else noLoadGen = 'no C compiler (cc) to build benches/load/echo_load.c; apt-get install -y gcc'
}

const bundle = (src, out) => bundleExample(root, src, out)
const respHandlersSrc = join(root, 'examples', 'resp-handlers.ts')
const respHandlersJs = join(binDir, 'resp-handlers.js') // resp-server.cjs finds it by require.resolve('./resp-handlers')
const respServerJs = join(binDir, 'resp-server.cjs')
const haveResp = existsSync(respHandlersSrc)
if (haveResp) {
  bundle(respHandlersSrc, respHandlersJs)
  bundle(join(root, 'examples', 'resp-server.ts'), respServerJs)
}
// net-resp.mjs (the node:net port of the example) as a connection handler: its server setup cut
// off, the rest (decoder, encoder, commands, store) unchanged.
const netRespSrc = join(root, 'benches', 'node', 'servers', 'net-resp.mjs')
const netRespHandler = join(binDir, 'net-resp-handler.mjs')
if (newer(netRespSrc, netRespHandler)) {
  let s = readFileSync(netRespSrc, 'utf8')
  const edits = [
    ["import { exitOnTerm, ready } from './common.mjs'\n", ''],
    ['const server = net.createServer({ noDelay: true }, (socket) => {', 'export function onConnection(socket) {'],
    ["  socket.on('error', () => {})\n})\nserver.listen(0, '127.0.0.1', () => ready(server.address().port))\nexitOnTerm()", "  socket.on('error', () => {})\n}"],
  ]
  for (const [from, to] of edits) {
    if (!s.includes(from)) throw new Error(`net-resp.mjs changed: cannot find ${JSON.stringify(from)}`)
    s = s.replace(from, to)
  }
  writeFileSync(netRespHandler, `// Generated by benches/node/scaling.mjs from benches/node/servers/net-resp.mjs\n${s}`)
}
const haveRedisBenchmark = spawnSync('redis-benchmark', ['--version']).status === 0

// ---------------------------------------------------------------------------------------------
// Targets: a family (its 1- and 2-worker variants form the ratio) and the server command.

const servers = join(root, 'benches', 'node', 'servers')
const echoModule = join(servers, 'scaling-echo-module.mjs')
// --spin-us N: the netloop worker loops' spinBeforeSleepMicros (default: the library's default).
const SPIN_US = opt('--spin-us', undefined)
const netloopArgs = (app, n, reuse) => [join(servers, 'scaling-netloop.mjs'), '--module', app === 'resp' ? respHandlersJs : echoModule, '--threads', String(n), ...(reuse ? ['--reuse-port'] : []), ...(SPIN_US === undefined ? [] : ['--spin-us', SPIN_US])]
const netRespUrl = pathToFileURL(netRespHandler).href
const TARGETS = [
  { name: 'netloop hand-off 1w', family: 'netloop hand-off', n: 1, netloop: true, args: (app) => netloopArgs(app, 1, false) },
  { name: 'netloop hand-off 2w', family: 'netloop hand-off', n: 2, netloop: true, args: (app) => netloopArgs(app, 2, false) },
  { name: 'netloop reuse-port 1w', family: 'netloop reuse-port', n: 1, netloop: true, args: (app) => netloopArgs(app, 1, true) },
  { name: 'netloop reuse-port 2w', family: 'netloop reuse-port', n: 2, netloop: true, args: (app) => netloopArgs(app, 2, true) },
  { name: 'node:net threads 1w', family: 'node:net threads (shared fd)', n: 1, args: (app) => [join(servers, 'scaling-net-threads.mjs'), '--app', app, '--threads', '1', '--resp-handler', netRespUrl] },
  { name: 'node:net threads 2w', family: 'node:net threads (shared fd)', n: 2, args: (app) => [join(servers, 'scaling-net-threads.mjs'), '--app', app, '--threads', '2', '--resp-handler', netRespUrl] },
  { name: 'node:cluster 1p', family: 'node:cluster', n: 1, args: (app) => [join(servers, 'scaling-cluster.mjs'), '--app', app, '--procs', '1', '--resp-handler', netRespUrl] },
  { name: 'node:cluster 2p', family: 'node:cluster', n: 2, args: (app) => [join(servers, 'scaling-cluster.mjs'), '--app', app, '--procs', '2', '--resp-handler', netRespUrl] },
]
// --targets netloop,cluster: only the targets whose name contains one of these (for a look at a few).
const PICK = opt('--targets', undefined)?.split(',')
if (PICK) TARGETS.splice(0, TARGETS.length, ...TARGETS.filter((t) => PICK.some((p) => t.name.includes(p))))

// ---------------------------------------------------------------------------------------------
// /proc readings

function statFields(path) {
  const s = readFileSync(path, 'utf8')
  return { comm: s.slice(s.indexOf('(') + 1, s.lastIndexOf(')')), f: s.slice(s.lastIndexOf(')') + 2).split(' ') }
}
/** The server's processes: the pid and its descendants (cluster workers). */
function processTree(pid) {
  const kids = new Map()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const { f } = statFields(`/proc/${d}/stat`)
      const ppid = Number(f[1])
      if (!kids.has(ppid)) kids.set(ppid, [])
      kids.get(ppid).push(Number(d))
    } catch {}
  }
  const out = []
  const walk = (p) => {
    out.push(p)
    for (const k of kids.get(p) ?? []) walk(k)
  }
  walk(pid)
  return out
}
/** utime+stime ticks of every thread of every process: Map "pid/tid comm" -> ticks. */
function threadTicks(pids) {
  const m = new Map()
  for (const pid of pids) {
    let tids = []
    try {
      tids = readdirSync(`/proc/${pid}/task`)
    } catch {
      continue
    }
    for (const tid of tids) {
      try {
        const { comm, f } = statFields(`/proc/${pid}/task/${tid}/stat`)
        const label = tid !== String(pid) ? comm : pids.length > 1 && pid === pids[0] ? 'primary' : 'main'
        m.set(`${pid}/${tid} ${label}`, Number(f[11]) + Number(f[12]))
      } catch {}
    }
  }
  return m
}
const sumTicks = (m) => [...m.values()].reduce((a, b) => a + b, 0)
/** Peak RSS (VmHWM) and current RSS of the processes, summed, in MiB. */
function rssOf(pids) {
  let hwm = 0
  let rss = 0
  for (const pid of pids) {
    try {
      const st = readFileSync(`/proc/${pid}/status`, 'utf8')
      hwm += Number(/VmHWM:\s+(\d+)/.exec(st)[1]) / 1024
      rss += Number(/VmRSS:\s+(\d+)/.exec(st)[1]) / 1024
    } catch {}
  }
  return { hwm, rss }
}
/** Per-thread CPU (cores) over a window, threads above 2 % of a core, busiest first. */
function threadShares(t0, t1, seconds) {
  const out = []
  for (const [k, v] of t1) {
    const share = (v - (t0.get(k) ?? 0)) / CLK_TCK / seconds
    if (share >= 0.02) out.push([k, share])
  }
  return out.sort((a, b) => b[1] - a[1]).map(([k, s]) => `${k} ${s.toFixed(2)}`)
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Waits (≤ QUIET_WAIT_S) for less than 0.25 of a core busy over half a second (as channels-vs-net.mjs). */
const QUIET_WAIT_S = Number(opt('--quiet-wait', 120))
let quietWaited = 0
let notQuiet = 0
function waitQuiet() {
  const r = waitForQuiet(QUIET_WAIT_S)
  if (r.quiet === false) notQuiet++
  quietWaited += r.waitedMs
}

// ---------------------------------------------------------------------------------------------
// Server processes

function startServer(t, app) {
  const child = spawn(process.execPath, t.args(app), { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  return new Promise((resolve, reject) => {
    let out = ''
    const onData = (d) => {
      out += d
      const m = /^(\d+)\s*$/m.exec(out)
      if (!m) return
      child.stdout.off('data', onData)
      child.stdout.resume()
      resolve({
        pid: child.pid,
        port: Number(m[1]),
        async stop() {
          child.kill('SIGTERM')
          const how = await Promise.race([exited, sleep(10_000).then(() => 'timeout')])
          if (how === 'timeout') {
            child.kill('SIGKILL')
            process.stderr.write(`[${t.name}] did not exit on SIGTERM\n`)
          }
          const lines = err.split('\n')
          const line = lines.find((l) => l.startsWith('{"scaling"'))
          const other = lines.filter((l) => l && !l.startsWith('{"scaling"'))
          if (other.length) process.stderr.write(`[${t.name}] ${other.slice(0, 5).join('\n')}\n`)
          if (how !== 'timeout' && how.code !== 0) process.stderr.write(`[${t.name}] exit ${JSON.stringify(how)}\n`)
          return line ? JSON.parse(line).scaling : undefined
        },
      })
    }
    child.stdout.on('data', onData)
    exited.then((how) => reject(new Error(`${t.name} exited before listening: ${JSON.stringify(how)} ${err}`)))
  })
}

const clientCmd = (cmd, args) => (PIN ? ['taskset', ['-c', String(CLIENT_CPU), cmd, ...args]] : [cmd, args])

/** Runs `fn` (which resolves when the client is done) and reads server CPU over [from, to] s after it starts. */
async function window(pids, fromS, toS, clientDone) {
  await sleep(fromS * 1000)
  const t0 = threadTicks(pids)
  const w0 = process.hrtime.bigint()
  await Promise.race([sleep((toS - fromS) * 1000), clientDone])
  const t1 = threadTicks(pids)
  const seconds = Number(process.hrtime.bigint() - w0) / 1e9
  return { t0, t1, seconds }
}

function runAsync(cmd, args) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err })))
}

// ---------------------------------------------------------------------------------------------
// Workloads

async function echoRun(t) {
  waitQuiet()
  const server = await startServer(t, 'echo')
  const pids = processTree(server.pid)
  const [cmd, args] = clientCmd(loadBin, ['127.0.0.1', String(server.port), '50', '64', String(SECONDS), String(WARMUP), 'echo'])
  const b0 = machineBusy()
  const client = runAsync(cmd, args)
  // The client's window is [WARMUP, WARMUP + SECONDS] after its connections are up (a few ms):
  // read the server's CPU over the middle of it, and count messages at the client's rate.
  const w = await window(pids, WARMUP + 0.1, WARMUP + SECONDS - 0.1, client)
  const r = await client
  const busyS = (machineBusy() - b0) / CLK_TCK
  const mem = rssOf(pids)
  const metrics = await server.stop()
  if (r.code !== 0) throw new Error(`echo_load against ${t.name} failed (${r.code}): ${r.err}`)
  const c = JSON.parse(r.out)
  const cpuS = (sumTicks(w.t1) - sumTicks(w.t0)) / CLK_TCK
  return {
    target: t.name,
    rate: c.msg_per_s,
    cpuUsPerMsg: (cpuS * 1e6) / (c.msg_per_s * w.seconds),
    serverCores: cpuS / w.seconds,
    clientShare: c.client_cpu_share,
    rssMiB: mem.hwm,
    threads: threadShares(w.t0, w.t1, w.seconds),
    machineCores: busyS / (SECONDS + WARMUP),
    processes: pids.length,
    p99: c.p99_us,
    perDelivery: perDelivery(metrics, c.total_messages),
    metrics,
  }
}

/** Messages per native→JS delivery over all worker loops (netloop: its batching), whole run. */
function perDelivery(metrics, messages) {
  const ws = metrics?.workers
  if (!ws || ws[0]?.deliveries === undefined) return undefined
  return messages / ws.reduce((a, m) => a + m.deliveries, 0)
}

function redisBenchmarkArgs(port, test, n) {
  return ['-p', String(port), '-c', '50', '-n', String(n), '-P', '16', '-t', test, '-q', '--csv']
}
function parseCsv(out) {
  const row = out.trim().split('\n').find((l) => !l.startsWith('"test"')).split(',').map((x) => x.replace(/"/g, ''))
  return { test: row[0], rps: Number(row[1]) }
}

async function respRun(t) {
  waitQuiet()
  const server = await startServer(t, 'resp')
  const pids = processTree(server.pid)
  const [wcmd, wargs] = clientCmd('redis-benchmark', redisBenchmarkArgs(server.port, 'set,get', RESP_WARMUP_N))
  const warm = spawnSync(wcmd, wargs, { encoding: 'utf8' }) // warm-up (JIT), not measured
  if (warm.status !== 0) throw new Error(`redis-benchmark warm-up against ${t.name} failed: ${warm.stderr}`)
  const out = { target: t.name, tests: {} }
  let threads
  for (const test of ['get', 'set']) {
    const [cmd, args] = clientCmd('redis-benchmark', redisBenchmarkArgs(server.port, test, RESP_N))
    const t0 = threadTicks(pids)
    const w0 = process.hrtime.bigint()
    const r = await runAsync(cmd, args)
    const wall = Number(process.hrtime.bigint() - w0) / 1e9
    const t1 = threadTicks(pids)
    if (r.code !== 0) throw new Error(`redis-benchmark against ${t.name} failed: ${r.err}`)
    const b = parseCsv(r.out)
    const cpuS = (sumTicks(t1) - sumTicks(t0)) / CLK_TCK
    // CPU over the whole invocation (connect, run, close) per request.
    out.tests[b.test] = { rate: b.rps, cpuUsPerMsg: (cpuS * 1e6) / RESP_N, serverCores: cpuS / wall }
    if (test === 'get') threads = threadShares(t0, t1, wall)
  }
  out.rssMiB = rssOf(pids).hwm
  out.threads = threads
  out.processes = pids.length
  out.metrics = await server.stop()
  const pd = perDelivery(out.metrics, 2 * RESP_WARMUP_N + 2 * RESP_N)
  for (const v of Object.values(out.tests)) v.perDelivery = pd
  return out
}

// ---------------------------------------------------------------------------------------------
// Statistics and tables


/** rounds: [{ [target]: { rate, cpuUsPerMsg, rssMiB, serverCores } }] */
function table(rounds, unit) {
  const lines = [
    `| server | ${unit}/s | server CPU µs/${unit} | server cores | peak RSS MiB (sum) | ${unit}/s 2w÷1w | per-core efficiency 2w÷1w | ${unit}s per JS delivery |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ]
  for (const t of TARGETS) {
    const col = (k) => rounds.map((r) => r[t.name][k])
    let ratio = ''
    let eff = ''
    if (t.n === 2 && TARGETS.some((o) => o.family === t.family && o.n === 1)) {
      const one = TARGETS.find((o) => o.family === t.family && o.n === 1).name
      ratio = spread(rounds.map((r) => r[t.name].rate / r[one].rate), 2, 'x')
      // messages per server CPU-second, 2 workers over 1 worker = CPU/msg of 1 over CPU/msg of 2
      eff = spread(rounds.map((r) => r[one].cpuUsPerMsg / r[t.name].cpuUsPerMsg), 2)
    }
    lines.push(`| ${t.name} | ${spread(col('rate'))} | ${spread(col('cpuUsPerMsg'), 2)} | ${fmt(median(col('serverCores')), 2)} | ${spread(col('rssMiB'), 1)} | ${ratio} | ${eff} | ${t.netloop ? fmt(median(col('perDelivery')), 1) : '–'} |`)
  }
  return lines.join('\n')
}

/** netloop 2w against both Node alternatives' 2-worker figures (medians). */
function verdict(rounds, label) {
  const med = (name, k) => median(rounds.map((r) => r[name][k]))
  const alt = ['node:net threads 2w', 'node:cluster 2p']
  if (!alt.every((a) => a in rounds[0])) return []
  return ['netloop hand-off 2w', 'netloop reuse-port 2w'].filter((n) => n in rounds[0]).map((n) => {
    const cpu = alt.every((a) => med(n, 'cpuUsPerMsg') < med(a, 'cpuUsPerMsg'))
    const rss = alt.every((a) => med(n, 'rssMiB') < med(a, 'rssMiB'))
    return `${label}: ${n} ${cpu ? 'beats' : 'does NOT beat'} both Node alternatives on CPU per message (${fmt(med(n, 'cpuUsPerMsg'), 2)} µs against ${alt.map((a) => fmt(med(a, 'cpuUsPerMsg'), 2)).join(' / ')}) and ${rss ? 'beats' : 'does NOT beat'} them on peak RSS (${fmt(med(n, 'rssMiB'), 1)} MiB against ${alt.map((a) => fmt(med(a, 'rssMiB'), 1)).join(' / ')}).`
  })
}

function busyLines(rounds) {
  // The last round's per-thread CPU and, for netloop, the metrics of each worker loop.
  const last = rounds[rounds.length - 1]
  const lines = []
  for (const t of TARGETS) {
    if (t.n !== 2) continue
    const r = last[t.name]
    lines.push(`- ${t.name}: threads (cores) ${r.threads.join(', ')}`)
    const ws = r.metrics?.workers
    if (ws && t.netloop) lines.push(`  worker loops: ${ws.map((m, i) => `#${i} channels ${m.channels} bytesIn ${fmt(m.bytesIn)} deliveries ${fmt(m.deliveries)} iterations ${fmt(m.iterations)}`).join('; ')}`)
    else if (ws) lines.push(`  connections per worker: ${ws.map((w) => w.connections).join(' / ')}`)
  }
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------

const load1 = loadavg()[0]
let head = `git ${(() => { try { return execFileSync('git', ['describe', '--always', '--dirty'], { cwd: root, encoding: 'utf8' }).trim() } catch { return '?' } })()}`
const header = [
  `netloop scaling (worker threads): ${new Date().toISOString()}, node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${load1.toFixed(2)} at start, ${head}`,
  `${RUNS} rounds (targets alternate, the first rotates), client ${PIN ? `pinned to CPU ${CLIENT_CPU}` : 'unpinned'}, servers unpinned; echo: 50 connections × 64 B, ${SECONDS} s measured after ${WARMUP} s; RESP: redis-benchmark -c 50 -P 16 -n ${RESP_N}`,
  `addon ${addonAtStart.file}: ${addonAtStart.size} bytes, ${addonAtStart.mtime}, sha256 ${addonAtStart.sha256}`,
]
if (addonAtStart.size > 8 << 20) header.push('WARNING: the addon looks like a DEBUG build (size): netloop figures are not representative (pass --addon with a release build)')
if (load1 > 0.5) header.push(`WARNING: the machine is not quiet (load average ${load1.toFixed(2)})`)
if (cpus().length === 2) header.push('NOTE: 2 vCPUs: the load generator shares the two cores with the server, so 2 server workers cannot get 2 full cores.')
console.log(header.join('\n'))
const results = { header, runs: {}, tables: {} }

const order = rotating(TARGETS)

if (ONLY.includes('echo') && noLoadGen) console.log(`\n(echo skipped: ${noLoadGen})`)
else if (ONLY.includes('echo')) {
  const rounds = await inRounds(
    RUNS,
    order,
    echoRun,
    (r, t, x) => `echo ${r + 1}/${RUNS} ${t.name}: ${fmt(x.rate)} msg/s, ${fmt(x.cpuUsPerMsg, 2)} µs CPU/msg, ${fmt(x.serverCores, 2)} cores, ${fmt(x.rssMiB, 1)} MiB, machine ${fmt(x.machineCores, 2)} cores`,
    (t) => t.name,
  )
  results.runs.echo = rounds
  results.tables.echo = [
    `### 64 B echo, 50 connections`,
    '',
    `Client: \`${PIN ? `taskset -c ${CLIENT_CPU} ` : ''}echo_load 127.0.0.1 PORT 50 64 ${SECONDS} ${WARMUP} echo\`; server CPU over the middle of its window.`,
    '',
    table(rounds, 'msg'),
    '',
    ...verdict(rounds, 'echo'),
    '',
    'Both workers busy (last round):',
    busyLines(rounds),
  ].join('\n')
  console.log(`\n${results.tables.echo}`)
}

if (ONLY.includes('resp')) {
  if (!haveResp) console.log('\n(RESP skipped: examples/resp-handlers.ts not found)')
  else if (!haveRedisBenchmark) console.log('\n(RESP skipped: redis-benchmark not installed; apt-get install -y redis-tools)')
  else {
    const rounds = await inRounds(
      RUNS,
      order,
      respRun,
      (r, t, x) => `resp ${r + 1}/${RUNS} ${t.name}: ${Object.entries(x.tests).map(([k, v]) => `${k} ${fmt(v.rate)}/s ${fmt(v.cpuUsPerMsg, 2)} µs`).join(', ')}, ${fmt(x.rssMiB, 1)} MiB`,
      (t) => t.name,
    )
    results.runs.resp = rounds
    const parts = [`### RESP, redis-benchmark -c 50 -P 16`, '', `Client: \`${PIN ? `taskset -c ${CLIENT_CPU} ` : ''}redis-benchmark -p PORT -c 50 -n ${RESP_N} -P 16 -t {get,set} -q --csv\`, one invocation per test after a warm-up of set,get; server CPU over each whole invocation.`]
    for (const test of Object.keys(rounds[0][TARGETS[0].name].tests)) {
      const flat = rounds.map((round) => Object.fromEntries(Object.entries(round).map(([k, v]) => [k, { ...v.tests[test], rssMiB: v.rssMiB }])))
      parts.push('', `${test}:`, '', table(flat, 'req'), '', ...verdict(flat, `RESP ${test}`))
    }
    parts.push('', 'Both workers busy (last round, during GET):', busyLines(rounds))
    results.tables.resp = parts.join('\n')
    console.log(`\n${results.tables.resp}`)
  }
}

// The RESP example itself with --threads 2: both workers busy (its --stats prints each worker
// loop's metrics() at exit; per-thread CPU from /proc).
if (ONLY.includes('resp') && haveResp && haveRedisBenchmark) {
  waitQuiet()
  const child = spawn(process.execPath, [respServerJs, '--threads', '2', '--port', '0', '--stats'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  const exited = new Promise((r) => child.once('exit', r))
  for (let i = 0; i < 200 && !/listening on .*:(\d+)/.test(out); i++) await sleep(50)
  const port = Number(/listening on .*:(\d+)/.exec(out)?.[1])
  if (!port) throw new Error(`resp-server.cjs --threads 2 did not start: ${out}`)
  const pids = processTree(child.pid)
  const t0 = threadTicks(pids)
  const w0 = process.hrtime.bigint()
  const [cmd, args] = clientCmd('redis-benchmark', redisBenchmarkArgs(port, 'get', RESP_N))
  const r = await runAsync(cmd, args)
  const wall = Number(process.hrtime.bigint() - w0) / 1e9
  const t1 = threadTicks(pids)
  child.kill('SIGTERM')
  await exited
  const stats = /stats (.*)/.exec(out)?.[1]
  const lines = [
    `### examples/resp-server.ts --threads 2 (bundled: ${respServerJs.replace(root + '/', '')})`,
    '',
    `GET -P 16: ${fmt(parseCsv(r.out).rps)} req/s. Threads (cores): ${threadShares(t0, t1, wall).join(', ')}`,
    `Worker loops' metrics() (--stats): ${stats ?? '(none printed)'}`,
  ]
  results.tables.example = lines.join('\n')
  console.log(`\n${results.tables.example}`)
}

const addonAtEnd = addonId()
if (addonAtEnd.sha256 !== addonAtStart.sha256) console.log(`\nWARNING: the addon changed during the run (now ${addonAtEnd.size} bytes, ${addonAtEnd.mtime}): discard this run`)
console.log(`\nwaited ${(quietWaited / 1000).toFixed(1)} s in all for a quiet machine before runs${notQuiet ? `; ${notQuiet} runs started on a busy machine` : ''}`)
const jsonOut = opt('--json', join(root, 'target', 'bench-results', `scaling-${Date.now()}.json`))
mkdirSync(dirname(jsonOut), { recursive: true })
writeFileSync(jsonOut, JSON.stringify(results, null, 1))
console.log(`raw results: ${jsonOut}`)
