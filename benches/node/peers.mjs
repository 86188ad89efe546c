// netloop side by side with its peers (issue 11): the same echo workloads, driven by the same C
// load generator, against a minimal C epoll server (the floor), tokio (current_thread), Netty 4.1
// (NIO, 1 worker thread), the netloop Rust core's echo_server example (1 and 2 worker loops),
// netloop from TypeScript, Bun's JS echo (Bun.listen; issue 38's target is the TS echo at or
// below it) and node:net.
//
//   node benches/node/peers.mjs [--quick] [--runs N] [--seconds S] [--only echo-1,echo-50,echo-50-rate,bulk-4,stream-4,scale-50]
//                               [--rate MSG_PER_S] [--rate-share 0.3]
//                               [--servers NAME,NAME] [--no-pin] [--no-node24] [--json FILE] [--jsonl FILE] [--quiet-wait SECONDS]
//                               [--quiet-wait-total SECONDS] [--addon FILE.node] [--spin-us N]
//
// --servers keeps the servers whose names start with one of the NAMEs (e.g. `tokio,netloop Rust`;
// node:net is always kept, the ratios are taken to it).
//
// The Node servers (netloop TS, node:net) also run on Node 24 (`... (Node 24)`, fetched by
// runtimes.mjs into scripts/node-lines.sh's cache; --no-node24 leaves them out). The tables give
// every ratio to node:net and to the C epoll server of the same round, and for netloop TS the JS
// crossings per message (the binding's calls into JS, printed by the server when it exits, over
// every message of the run).
//
// All servers are pinned alike (CPU 0 in every workload): `netloop Rust (2 workers)` therefore
// runs its two loops on one core; it shows the cost of a second loop there, not a second core
// (benches/node/scaling.mjs is about several cores).
//
// Workloads (benches/load/echo_load.c):
//   echo-1   64 B ping-pong on 1 connection, server and client both pinned to CPU 0 (a ping-pong
//            across the two vCPUs of this VM measures the hypervisor's cross-CPU wake-up; see
//            channels-vs-net.mjs)
//   echo-50  64 B ping-pong on 50 connections, server on CPU 0, client on CPU 1
//   echo-50-rate  the same at a fixed rate (ECHO_LOAD_RATE): --rate, else --rate-share (0.3) of
//            the lowest echo-50 median of the run; the server CPU per message at that rate
//   bulk-4   16 KiB messages streamed on 4 connections, 4 in flight per connection, every echoed
//            byte checked against a pattern (echo_load's `bulk` mode); server CPU 0, client CPU 1
//   stream-4 16 KiB messages on 4 connections without a window: each connection writes as fast
//            as the socket takes them while reading the echo concurrently, every byte checked
//            (echo_load's `stream` mode): the server always has a backlog to read and a peer
//            ready for more. Server CPU 0, client CPU 1. Its table also gives the ratios to the C
//            epoll server (the floor), taken per round like those to node:net.
//   scale-50 64 B ping-pong on 50 connections with nothing pinned, for the servers that come with
//            one and with two worker threads: the netloop Rust echo_server (1 and 2 worker loops),
//            tokio (current_thread and multi_thread with 2 workers), Netty (1 and 2 workers).
//            Per pair and round: per-core efficiency = (server CPU per message with 1 worker) /
//            (with 2 workers), 1.0 meaning a second worker costs nothing per message; and the
//            server's context switches per message (all its threads, /proc/PID/task/*/status,
//            over the whole run including warm-up). On a 2-vCPU machine the client shares the
//            cores with the workers: the peers show how much of the cost is the machine's.
//            The Rust echo_server also runs as a second pair whose worker loops spin for
//            --spin-us µs before they sleep (default 0: no spin, against the core's default of
//            an adaptive 20 µs in the first pair; `off` leaves the pair out;
//            LoopConfig::spin_before_sleep, docs/decisions/0010).
//
// The servers are built on demand (benches/peers/servers.mjs: C with cc, tokio with cargo into
// target/peers, Netty's jars fetched with Maven and NettyEcho.java compiled with javac, the Rust
// echo_server into target/bench-build); one that cannot be built is reported as `skipped:` and
// left out. The netloop TS server loads the addon given with --addon (else the repo's; pass a
// private release build, e.g. target/bench-bin/netloop-release-now.node, as other engineers'
// builds overwrite the root addon). --addon-b FILE adds `netloop TS (B)`, the same server on
// another build, alternated with it in every round (an A/B on one host).
//
// Every run starts a fresh server process; the servers of a workload alternate within a round
// and the starting server rotates from round to round; 3 rounds of 3 s after 1 s of warm-up (the
// JVM: 3 s, for its JIT), or with --quick 1 round of 1 s after 0.5 s (JVM 2 s): about 6 minutes
// in all, under a minute with --quick. Reported per server: medians over the rounds with min–max
// of msg/s (MB/s for bulk), the client's p50/p99 round trip, the server's CPU per message (per MB
// for bulk: utime+stime of all its threads from /proc/PID/stat, read by the client at the edges
// of its measured window) and, but for bulk, the user-space part of it (utime alone: the
// server's own code, which a faster or slower kernel does not move; 10 ms ticks, so about ±2 %
// over a 3 s window), the server's cores, its peak RSS (VmHWM from /proc/PID/status at the
// end of the run) and the ratios to node:net taken per round (the servers of a round run close
// together), then their median and min–max. Before each run the harness waits (≤ --quiet-wait s,
// default 120, and ≤ --quiet-wait-total s in all, default no limit; --quick: 3 s and 12 s) for a
// quiet machine, and reports the load beyond server and client during the windows.
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { addonUnderTest, describeAddon, flag, fmt, hostOf, median, opt, root, rotating, spread, waitForQuiet } from './harness.mjs'
import { summarize } from './stats.mjs'
import { buildLoad, buildServers, memoryKiB, pickServers, startServer } from '../peers/servers.mjs'
import { nodeLine } from './runtimes.mjs'

const quick = flag('--quick')
const RUNS = Number(opt('--runs', quick ? 1 : 3))
const SECONDS = Number(opt('--seconds', quick ? 1 : 3))
const WARMUP = quick ? 0.5 : 1
const JVM_WARMUP = quick ? 2 : 3
const ONLY = opt('--only', 'echo-1,echo-50,echo-50-rate,bulk-4,stream-4,scale-50').split(',')
const RATE_SHARE = Number(opt('--rate-share', 0.3))
const PIN = !flag('--no-pin') && cpus().length >= 2
const QUIET_WAIT_S = Number(opt('--quiet-wait', quick ? 3 : 120))
// --quick must stay within about a minute: at most 12 s of waiting for quiet in all, then none.
const QUIET_BUDGET_MS = Number(opt('--quiet-wait-total', quick ? 12 : Infinity)) * 1000
const { addonId } = addonUnderTest()

const WORKLOADS = {
  'echo-1': { title: '64 B echo, 1 connection', conns: 1, size: 64, mode: 'echo', pin: [0, 0] },
  'echo-50': { title: '64 B echo, 50 connections', conns: 50, size: 64, mode: 'echo', pin: [0, 1] },
  'echo-50-rate': { title: '64 B echo, 50 connections, at a fixed rate', conns: 50, size: 64, mode: 'echo', pin: [0, 1], fixedRate: true },
  'bulk-4': { title: '16 KiB bulk echo, 4 connections (4 messages in flight each, every byte checked)', conns: 4, size: 16384, mode: 'bulk', depth: 4, pin: [0, 1] },
  'stream-4': { title: '16 KiB stream echo, 4 connections (no window: writer and reader concurrent, every byte checked)', conns: 4, size: 16384, mode: 'stream', pin: [0, 1] },
  'scale-50': { title: '64 B echo, 50 connections, one worker against two (nothing pinned)', conns: 50, size: 64, mode: 'echo', pin: [undefined, undefined], scaling: true },
}
/** The servers of the scaling workload: [one worker, two workers]. */
const SCALING_PAIRS = [
  ['netloop Rust (1 worker)', 'netloop Rust (2 workers)'],
  ['tokio current_thread', 'tokio multi_thread (2 workers)'],
  ['Netty 4.1 NIO (1 worker)', 'Netty 4.1 NIO (2 workers)'],
]
for (const k of ONLY) if (!WORKLOADS[k]) throw new Error(`unknown workload ${k} (known: ${Object.keys(WORKLOADS).join(', ')})`)

// ---------------------------------------------------------------------------------------------

const loadBin = buildLoad('echo_load')
const { targets: TARGETS, skipped } = buildServers(undefined, opt('--servers', undefined) && `${opt('--servers')},node:net`)
const SPIN_ARG = opt('--spin-us', '0')
const SPIN_US = Number(SPIN_ARG)
if (SPIN_ARG !== 'off') {
  const pair = [1, 2].map((w) => {
    const base = TARGETS[`netloop Rust (${w} worker${w > 1 ? 's' : ''})`]
    const name = `netloop Rust, spin ${SPIN_US} µs (${w} worker${w > 1 ? 's' : ''})`
    if (base) TARGETS[name] = { ...base, args: [base.args[0], String(w), String(SPIN_US)], scaling: true }
    return name
  })
  SCALING_PAIRS.push(pair)
}
// The Node servers again on Node 24 (the npm package of its official build, fetched once into
// scripts/node-lines.sh's cache; --no-node24 leaves them out; skipped with a note when it
// cannot be fetched): issue 38 asks for every node:* ratio on both lines.
if (!flag('--no-node24')) {
  const n24 = nodeLine()
  if (!n24.bin) skipped.push({ name: 'Node 24 servers', reason: n24.reason })
  else {
    for (const name of ['netloop TS', 'netloop TS (autoRelease)', 'node:net']) {
      if (TARGETS[name]) TARGETS[`${name} (Node 24)`] = { ...TARGETS[name], cmd: n24.bin }
    }
  }
}
// --addon-b FILE: the netloop TS echo once more with another build of the addon, as `netloop TS
// (B)`, alternated with the first in every round (and picked with it by --servers): an A/B of
// two builds on one host in the same minutes, which two runs an hour apart cannot give (the
// VM's kernel cost moves by more than the change measured).
const ADDON_B = opt('--addon-b', undefined)
if (ADDON_B && TARGETS['netloop TS']) {
  TARGETS['netloop TS (B)'] = { ...TARGETS['netloop TS'], env: { NAPI_RS_NATIVE_LIBRARY_PATH: resolve(ADDON_B) } }
}
const BASE = 'node:net'
const picked = pickServers(Object.keys(TARGETS), opt('--servers', undefined))
const names = Object.keys(TARGETS).filter((n) => (n === BASE || picked.includes(n)) && !TARGETS[n].scaling)
const scalingNames = SCALING_PAIRS.filter((pair) => pair.every((n) => TARGETS[n] && picked.includes(n))).flat()

/** Context switches of all of a process's threads so far (voluntary and not). */
function contextSwitches(pid) {
  let n = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
      for (const m of s.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)/gm)) n += Number(m[1])
    } catch {
      // the thread ended meanwhile
    }
  }
  return n
}

let quietWaited = 0
const waitQuiet = () => {
  if (quietWaited < QUIET_BUDGET_MS) quietWaited += waitForQuiet(QUIET_WAIT_S).waitedMs
}

async function loadRun(name, w) {
  waitQuiet()
  const t = TARGETS[name]
  const [scpu, ccpu] = PIN ? w.pin : [undefined, undefined]
  const server = await startServer(name, t, { cpu: scpu })
  const warmup = t.jvm ? JVM_WARMUP : WARMUP
  const args = ['127.0.0.1', String(server.port), String(w.conns), String(w.size), String(SECONDS), String(warmup), w.mode, String(server.pid)]
  if (w.depth) args.push(String(w.depth))
  const env = w.rate ? { ...process.env, ECHO_LOAD_RATE: String(Math.round(w.rate)) } : process.env
  const r = spawnSync(ccpu === undefined ? loadBin : 'taskset', ccpu === undefined ? args : ['-c', String(ccpu), loadBin, ...args], { encoding: 'utf8', env })
  const mem = server.alive() ? memoryKiB(server.pid) : {}
  const switches = server.alive() ? contextSwitches(server.pid) : NaN
  const exitLines = await server.stop()
  // netloop servers print their loop's metrics and the binding's calls into JS when they exit.
  const exit = (exitLines ?? '').split('\n').find((l) => l.startsWith('{"metrics"'))
  const crossings = exit ? JSON.parse(exit).jsCrossings : undefined
  if (r.status !== 0) throw new Error(`echo_load against ${name} failed (${r.status}): ${r.stderr.trim()}`)
  const c = JSON.parse(r.stdout)
  const serverS = c.server_cpu_ticks / c.clock_ticks_per_s
  const mb = (c.messages * c.size) / 1e6
  return {
    target: name,
    msgPerS: c.msg_per_s,
    mbPerS: c.mb_per_s,
    p50: c.p50_us,
    p99: c.p99_us,
    serverCpuUsPerMsg: (serverS * 1e6) / c.messages,
    // The server's own code alone (utime): what a faster or slower kernel does not move.
    serverUserUsPerMsg: c.server_user_ticks >= 0 ? (c.server_user_ticks / c.clock_ticks_per_s) * 1e6 / c.messages : undefined,
    serverCpuUsPerMB: (serverS * 1e6) / mb,
    serverCores: serverS / c.seconds,
    peakRssMiB: mem.hwm / 1024,
    switchesPerMsg: switches / c.total_messages,
    crossingsPerMsg: crossings === undefined ? undefined : crossings / c.total_messages,
    clientCpuShare: c.client_cpu_share,
    clientUserShare: c.client_user_s / c.seconds,
    otherCores: Math.max(0, c.machine_busy_ticks / c.clock_ticks_per_s / c.seconds - serverS / c.seconds - c.client_cpu_share),
    raw: c,
  }
}

const FLOOR = 'C epoll'

/** True if server `name` takes part in workload `w` (a server may name the modes it runs in). */
const runsIn = (name, w) => !TARGETS[name].modes || TARGETS[name].modes.includes(w.mode)

function table(w, rounds, failed) {
  const bulk = w.mode === 'bulk' || w.mode === 'stream'
  const vsFloor = names.includes(FLOOR)
  const [rate, rateName, cpuKey, cpuName] = bulk
    ? ['mbPerS', 'MB/s', 'serverCpuUsPerMB', 'server CPU µs/MB']
    : ['msgPerS', 'msg/s', 'serverCpuUsPerMsg', 'server CPU µs/msg']
  const lines = [
    `| server | ${rateName} | ${bulk ? 'msg/s | ' : ''}p50 µs | p99 µs | ${cpuName} | ${bulk ? '' : 'of which user µs/msg | '}server cores | JS crossings/msg | peak RSS MiB | client CPU share (user) | ${rateName} ratio vs node:net | CPU ratio vs node:net |${vsFloor ? ` ${rateName} ratio vs ${FLOOR} | CPU ratio vs ${FLOOR} |` : ''}`,
    `| --- | --- | ${bulk ? '--- | ' : ''}--- | --- | --- | ${bulk ? '' : '--- | '}--- | --- | --- | --- | --- | --- |${vsFloor ? ' --- | --- |' : ''}`,
  ]
  for (const t of names.filter((n) => runsIn(n, w))) {
    const rs = rounds.map((round) => round[t]).filter(Boolean)
    if (!rs.length) continue
    const col = (k) => rs.map((r) => r[k])
    const ratio = (k, base = BASE) => {
      if (t === base) return '1'
      const xs = rounds.filter((round) => round[t] && round[base]).map((round) => round[t][k] / round[base][k])
      return xs.length ? spread(xs, 2, 'x') : '–'
    }
    const p99 = col('p99')
    lines.push(
      `| ${t} | ${spread(col(rate))} | ${bulk ? `${spread(col('msgPerS'))} | ` : ''}${fmt(median(col('p50')))} | ${fmt(median(p99))} (${fmt(Math.min(...p99))}–${fmt(Math.max(...p99))}) | ${spread(col(cpuKey), 2)} | ${bulk ? '' : `${rs.every((r) => r.serverUserUsPerMsg !== undefined) ? spread(col('serverUserUsPerMsg'), 2) : '–'} | `}${fmt(median(col('serverCores')), 2)} | ${rs.some((r) => r.crossingsPerMsg !== undefined) ? spread(col('crossingsPerMsg').filter((x) => x !== undefined), 3) : '–'} | ${fmt(median(col('peakRssMiB')), 1)} | ${fmt(median(col('clientCpuShare')), 2)} (${fmt(median(col('clientUserShare')), 2)}) | ${ratio(rate)} | ${ratio(cpuKey)} |${vsFloor ? ` ${ratio(rate, FLOOR)} | ${ratio(cpuKey, FLOOR)} |` : ''}`,
    )
  }
  const other = rounds.flatMap((round) => Object.values(round).map((r) => r.otherCores))
  if (other.length) lines.push('', `Other load during the windows (cores busy beyond server and client): median ${fmt(median(other), 2)}, max ${fmt(Math.max(...other), 2)}.`)
  for (const [t, why] of Object.entries(failed)) lines.push(`${t}: failed: ${why}`)
  return lines.join('\n')
}

/** The scaling workload's table: each server, then each pair's per-core efficiency. */
function scalingTable(rounds, failed) {
  const lines = [
    '| server | msg/s | p50 µs | server CPU µs/msg | server cores | context switches/msg | client CPU share |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ]
  for (const t of scalingNames) {
    const rs = rounds.map((round) => round[t]).filter(Boolean)
    if (!rs.length) continue
    const col = (k) => rs.map((r) => r[k])
    lines.push(
      `| ${t} | ${spread(col('msgPerS'))} | ${fmt(median(col('p50')))} | ${spread(col('serverCpuUsPerMsg'), 2)} | ${fmt(median(col('serverCores')), 2)} | ${spread(col('switchesPerMsg'), 3)} | ${fmt(median(col('clientCpuShare')), 2)} |`,
    )
  }
  lines.push('', '| pair | per-core efficiency, 2 workers ÷ 1 (CPU/msg of 1 ÷ CPU/msg of 2) | msg/s ratio, 2 ÷ 1 |', '| --- | --- | --- |')
  for (const [one, two] of SCALING_PAIRS) {
    const rs = rounds.filter((round) => round[one] && round[two])
    if (!rs.length) continue
    const eff = rs.map((round) => round[one].serverCpuUsPerMsg / round[two].serverCpuUsPerMsg)
    const rate = rs.map((round) => round[two].msgPerS / round[one].msgPerS)
    lines.push(`| ${two.replace(/ \(2 workers\)$/, '')} | ${spread(eff, 2)} | ${spread(rate, 2, 'x')} |`)
  }
  for (const [t, why] of Object.entries(failed)) lines.push(`${t}: failed: ${why}`)
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------

const addonAtStart = names.includes('netloop TS') ? addonId() : undefined
const load1 = loadavg()[0]
const header = [
  `netloop vs peers: ${new Date().toISOString()}, node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${load1.toFixed(2)} at start`,
  `${RUNS} round(s), ${SECONDS} s measured after ${WARMUP} s warm-up per run (JVM ${JVM_WARMUP} s), CPU pinning ${PIN ? 'on' : 'off'}`,
]
if (addonAtStart) {
  header.push(`addon ${addonAtStart.file}: ${addonAtStart.size} bytes, ${addonAtStart.mtime}, sha256 ${addonAtStart.sha256}`)
  if (addonAtStart.size > 8 << 20) header.push('WARNING: the addon looks like a DEBUG build (size): netloop TS figures are not representative')
}
if (names.includes('netloop TS (B)')) {
  const b = describeAddon(resolve(ADDON_B))
  header.push(`addon B (netloop TS (B)) ${b.file}: ${b.size} bytes, ${b.mtime}, sha256 ${b.sha256}`)
}
for (const s of skipped) header.push(`skipped: ${s.name}: ${s.reason}`)
if (load1 > 0.5) header.push(`WARNING: the machine is not quiet (load average ${load1.toFixed(2)}): figures will be noisy`)
console.log(header.join('\n'))
const results = { header, skipped, runs: {}, tables: {} }
const started = new Date()
/** Records for docs/benchmarks/results.jsonl (stats.mjs): one per workload and server. */
const records = []

for (const key of Object.keys(WORKLOADS)) {
  if (!ONLY.includes(key)) continue
  const w = WORKLOADS[key]
  if (w.fixedRate) {
    // --rate, else RATE_SHARE of the lowest median msg/s of echo-50 in this run: every server
    // keeps it, so the CPU per message compares the cost of a message, not a saturated loop.
    const echo = results.runs['echo-50']
    const medians = echo ? names.map((n) => median(echo.map((r) => r[n]?.msgPerS).filter(Number.isFinite))).filter(Number.isFinite) : []
    w.rate = opt('--rate', undefined) ? Number(opt('--rate')) : medians.length ? RATE_SHARE * Math.min(...medians) : undefined
    if (!w.rate) {
      console.log(`\n### ${w.title}\n\nskipped: no --rate and no echo-50 run to take ${RATE_SHARE} of`)
      continue
    }
    w.baseTitle = w.title
    w.title = `${w.title}: ${Math.round(w.rate).toLocaleString('en')} msg/s (${opt('--rate', undefined) ? '--rate' : `${RATE_SHARE} of the slowest server's echo-50 median`})`
  }
  const rounds = []
  const failed = {}
  const servers = w.scaling ? scalingNames : names.filter((n) => runsIn(n, w))
  if (!servers.length) continue
  for (let r = 0; r < RUNS; r++) {
    const order = rotating(servers)(r).filter((t) => !failed[t])
    const round = {}
    for (const t of order) {
      try {
        round[t] = await loadRun(t, w)
      } catch (e) {
        failed[t] = e.message.split('\n')[0]
        process.stderr.write(`  ${key} round ${r + 1}/${RUNS} ${t}: FAILED: ${failed[t]}\n`)
        continue
      }
      const x = round[t]
      const rate = w.mode === 'bulk' || w.mode === 'stream' ? `${fmt(x.mbPerS)} MB/s, ${fmt(x.serverCpuUsPerMB, 1)} µs CPU/MB` : `${fmt(x.msgPerS)} msg/s, ${fmt(x.serverCpuUsPerMsg, 2)} µs CPU/msg`
      process.stderr.write(`  ${key} round ${r + 1}/${RUNS} ${t}: ${rate}, peak RSS ${fmt(x.peakRssMiB, 1)} MiB\n`)
    }
    rounds.push(round)
  }
  results.runs[key] = rounds
  const cmd = `${w.rate ? `ECHO_LOAD_RATE=${Math.round(w.rate)} ` : ''}echo_load 127.0.0.1 PORT ${w.conns} ${w.size} ${SECONDS} ${WARMUP} ${w.mode} SERVER_PID${w.depth ? ` ${w.depth}` : ''}`
  const jvm = servers.some((t) => TARGETS[t].jvm) ? ` (the JVM's warm-up: ${JVM_WARMUP} s)` : ''
  const pinned = PIN && w.pin[0] !== undefined
  const body = w.scaling ? scalingTable(rounds, failed) : table(w, rounds, failed)
  for (const t of servers) {
    const rs = rounds.map((round) => round[t]).filter(Boolean)
    if (!rs.length) continue
    const col = (k) => rs.map((x) => x[k])
    const bulk = w.mode === 'bulk' || w.mode === 'stream'
    // At a fixed rate the throughput is the schedule's, not a figure of merit (not compared).
    const metrics = bulk ? { mbPerS: summarize(col('mbPerS')), cpuUsPerMB: summarize(col('serverCpuUsPerMB')) } : { [w.rate ? 'achievedPerS' : 'msgPerS']: summarize(col('msgPerS')), cpuUsPerMsg: summarize(col('serverCpuUsPerMsg')) }
    Object.assign(metrics, { serverCores: summarize(col('serverCores')), clientCpuShare: summarize(col('clientCpuShare')) })
    if (rs.some((x) => x.crossingsPerMsg !== undefined)) metrics.crossingsPerMsg = summarize(col('crossingsPerMsg'))
    if (!bulk && rs.every((x) => x.serverUserUsPerMsg !== undefined)) metrics.userUsPerMsg = summarize(col('serverUserUsPerMsg'))
    const runtime = TARGETS[t].node ? `node ${TARGETS[t].cmd === process.execPath ? process.versions.node : (/node-(\d+\.\d+\.\d+)/.exec(TARGETS[t].cmd)?.[1] ?? '?')}` : undefined
    records.push({ workload: w.baseTitle ?? w.title, peer: t, runtime, ...(w.rate ? { rate: Math.round(w.rate) } : {}), pinned: PIN && w.pin[0] !== undefined, metrics })
  }
  results.tables[key] = `### ${w.title}\n\nClient: \`${pinned ? `taskset -c ${w.pin[1]} ` : ''}${cmd}\`${jvm}; servers ${pinned ? `on CPU ${w.pin[0]}` : 'unpinned'}.\n\n${body}`
  console.log(`\n${results.tables[key]}`)
}

if (addonAtStart) {
  const addonAtEnd = addonId()
  if (addonAtEnd.sha256 !== addonAtStart.sha256) console.log(`\nWARNING: the addon changed during the run (now ${addonAtEnd.size} bytes, ${addonAtEnd.mtime}): discard the netloop TS figures`)
}
console.log(`\nwaited ${(quietWaited / 1000).toFixed(1)} s in all for a quiet machine before runs`)
const jsonOut = opt('--json', join(root, 'target', 'bench-results', `peers-${Date.now()}.json`))
mkdirSync(dirname(jsonOut), { recursive: true })
writeFileSync(jsonOut, JSON.stringify(results, null, 1))
console.log(`\nraw results: ${jsonOut}`)
// One JSON line per workload and server (--jsonl; the format of docs/benchmarks/results.jsonl:
// scripts/bench-compare.mjs --new FILE compares them with the last published run).
const jsonl = opt('--jsonl', undefined)
if (jsonl) {
  const git = (...a) => spawnSync('git', a, { cwd: root, encoding: 'utf8' }).stdout?.trim() ?? ''
  const commit = `${git('rev-parse', '--short=12', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? '-dirty' : ''}`
  const command = `node benches/node/peers.mjs ${process.argv.slice(2).map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ')}`.trim()
  mkdirSync(dirname(jsonl), { recursive: true })
  writeFileSync(jsonl, records.map((r) => `${JSON.stringify({ date: started.toISOString(), commit, command, part: 'peers', ...r, rounds: RUNS, seconds: SECONDS, load: { loadavg1: Number(load1.toFixed(2)) }, host: hostOf(), published: false })}\n`).join(''))
  console.log(`records: ${jsonl}`)
}
