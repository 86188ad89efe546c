// WebSocket servers side by side (issue 37), measured the way issue 38 asks: netloop with the
// echo in JS and with the native echo, node:http + `ws` (with and without bufferutil) on Node 20
// and Node 24, Bun's built-in server, and a minimal C epoll WebSocket echo as the floor
// (benches/peers/epoll_ws_echo.c: echo and idle only), all driven by the same native client
// (benches/load/ws-load, Rust).
//
//   node benches/node/ws.mjs [--quick] [--runs N] [--seconds S] [--only echo,window,rate,fanout,idle,idle-deflate]
//                            [--servers PREFIX,PREFIX] [--unpinned] [--rate MSG_PER_S]
//                            [--rate-share 0.3] [--idle-conns N] [--note TEXT] [--json FILE]
//                            [--jsonl FILE] [--record] [--addon FILE.node]
//                            [--quiet-wait SECONDS] [--quiet-wait-total SECONDS]
//   npm run bench -- --only ws
//
// Workloads:
//   echo    64 B text echo on 50 connections, one message in flight per connection: messages/s,
//           server CPU per message, round trip, JS crossings per message (netloop JS)
//   window  the same with 16 messages in flight per connection (--depth 16): what a server does
//           with many messages per wake-up (a client that pipelines, as a chat or a game does)
//   rate    the same at a fixed rate (--rate, else --rate-share (0.3) of the lowest median
//           msg/s of the echo workload, so every server can keep it): server CPU per message at
//           that rate
//   fanout  1 publisher and 1,000 subscribers (1,001 connections, the publisher subscribed too),
//           64 B, the publisher at most 64 messages ahead of the average subscriber: messages
//           delivered per second, server CPU per delivered message. netloop's
//           server needs the topics API (src/ws-topics.ts); without it it is skipped with a note
//   idle    --idle-conns (10,000; --quick 2,000) connections after the handshake: server RSS
//           per connection (connections from 127.0.0.1 and 127.0.0.2), garbage collected before
//           each reading (SIGUSR2: the servers collect on it)
//   idle-deflate  --idle-deflate-conns (1,000) connections with permessage-deflate accepted (each
//           server's defaults: context takeover both ways), each after one compressed 2,000-byte
//           message and its echo (compressed by the servers whose threshold it passes), then
//           idle: what a used compressed connection keeps (not run by default: add it to --only);
//           netloop and ws also with no context takeover either way
//
// Pinning: every server on CPU 0, the client on CPU 1 (taskset), unless --unpinned (then the
// tables say so: unpinned runs on 2 cores flip between two regimes and are not comparable with
// pinned ones). Servers alternate: each round runs every server once, the first one rotating
// from round to round; 3 rounds of 3 s after 1 s (--quick: 1 round of 1 s after 0.5 s). Figures
// are the median and min–max of the rounds. Server CPU is utime+stime of the server process
// (/proc/PID/stat, all threads) read by the client at the edges of its measured window; the
// client's own CPU share is reported so a saturated client shows (> 0.9: flagged). JS crossings
// per message: calls from native into JS (the binding's `jsCrossings()`, printed by the server
// when it exits) over every message of the run (warm-up included).
//
// Output: markdown tables on stdout, raw rounds as JSON (--json), and one record per workload and
// server in JSON lines (--jsonl, default target/bench-results/ws-<time>.jsonl; --record appends
// them to docs/benchmarks/results.jsonl as unpublished runs: scripts/bench-compare.mjs).
import { spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { CLK_TCK, addonUnderTest, flag, hostOf, opt, root, rotating, waitForQuiet } from './harness.mjs'
import { startServer } from '../peers/servers.mjs'
import { bun, nodeLine } from './runtimes.mjs'
import { fmtSummary, median, summarize } from './stats.mjs'

const quick = flag('--quick')
const RUNS = Number(opt('--runs', quick ? 1 : 3))
const SECONDS = Number(opt('--seconds', quick ? 1 : 3))
const WARMUP = quick ? 0.5 : 1
const ONLY = opt('--only', 'echo,window,rate,fanout,idle').split(',')
const WINDOW_DEPTH = 16
const PIN = !flag('--unpinned') && cpus().length >= 2
const IDLE_CONNS = Number(opt('--idle-conns', quick ? 2000 : 10000))
const IDLE_DEFLATE_CONNS = Number(opt('--idle-deflate-conns', quick ? 200 : 1000))
const RATE_SHARE = Number(opt('--rate-share', 0.3))
const QUIET_WAIT_S = Number(opt('--quiet-wait', quick ? 0 : 30))
const NOTE = opt('--note', '')
const started = new Date()
addonUnderTest()

const WORKLOADS = {
  echo: { title: '64 B text echo, 50 connections, 1 in flight each', conns: 50, mode: 'echo' },
  window: { title: `64 B text echo, 50 connections, ${WINDOW_DEPTH} in flight each`, conns: 50, mode: 'echo', depth: WINDOW_DEPTH },
  rate: { title: '64 B text echo, 50 connections, at a fixed rate', conns: 50, mode: 'echo', fixedRate: true },
  fanout: { title: 'Fan-out: 1 publisher, 1,000 subscribers, 64 B', conns: 1001, mode: 'fanout' },
  idle: { title: `${IDLE_CONNS.toLocaleString('en')} idle connections: server RSS per connection`, conns: IDLE_CONNS, mode: 'idle' },
  'idle-deflate': { title: `${IDLE_DEFLATE_CONNS.toLocaleString('en')} idle connections with permessage-deflate, after one 2,000-byte message each way: server RSS per connection`, conns: IDLE_DEFLATE_CONNS, mode: 'idle', deflate: true },
}
for (const k of ONLY) if (!WORKLOADS[k]) throw new Error(`unknown workload ${k} (known: ${Object.keys(WORKLOADS).join(', ')})`)

// ---------------------------------------------------------------------------------------------
// The client and the servers

function buildClient() {
  const dir = join(root, 'benches', 'load', 'ws-load')
  const r = spawnSync('cargo', ['build', '--release', '-q', '--manifest-path', join(dir, 'Cargo.toml'), '--target-dir', join(root, 'target', 'peers')], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'inherit', 'inherit'] })
  if (r.status !== 0) throw new Error('cargo build of benches/load/ws-load failed')
  return join(root, 'target', 'peers', 'release', 'ws-load')
}

/** The C floor (benches/peers/epoll_ws_echo.c), built with cc into target/peers when stale. */
function buildFloor() {
  const src = join(root, 'benches', 'peers', 'epoll_ws_echo.c')
  const bin = join(root, 'target', 'peers', 'epoll_ws_echo')
  mkdirSync(dirname(bin), { recursive: true })
  if (!existsSync(bin) || statSync(bin).mtimeMs < statSync(src).mtimeMs) {
    const r = spawnSync('cc', ['-O2', '-Wall', '-o', bin, src], { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`cc epoll_ws_echo.c failed: ${(r.stderr || r.error?.message || '').trim()}`)
  }
  return { cmd: bin, args: ['0'], portRe: /^listening (\d+)\s*$/m }
}

const servers = join(root, 'benches', 'node', 'servers')
const portRe = /^(\d+)\s*$/m
const skipped = []
const TARGETS = {}
const nodeRuntimes = [{ label: `Node ${process.versions.node.split('.')[0]}`, bin: process.execPath, version: process.versions.node }]
const n24 = nodeLine()
if (n24.bin) nodeRuntimes.push({ label: 'Node 24', bin: n24.bin, version: n24.version })
else skipped.push({ name: 'Node 24 peers', reason: n24.reason })

// Node servers run with --expose-gc: before each RSS reading of the idle workload the client
// sends SIGUSR2 and they collect (Bun: Bun.gc(true)), so memory is what they keep.
TARGETS['netloop JS echo'] = { cmd: process.execPath, args: ['--expose-gc', join(servers, 'ws-netloop.mjs')], portRe, runtime: `node ${process.versions.node}`, crossings: true, fanout: ['--fanout'] }
TARGETS['netloop native echo'] = { cmd: process.execPath, args: ['--expose-gc', join(servers, 'ws-netloop.mjs'), '--native'], portRe, runtime: `node ${process.versions.node}`, crossings: true, modes: ['echo', 'idle'] }
for (const n of nodeRuntimes) {
  const script = join(servers, 'ws-node.mjs')
  TARGETS[`ws (${n.label})`] = { cmd: 'env', args: ['WS_NO_BUFFER_UTIL=1', n.bin, '--expose-gc', script], portRe, runtime: `node ${n.version}`, fanout: ['--fanout'] }
  TARGETS[`ws + bufferutil (${n.label})`] = { cmd: n.bin, args: ['--expose-gc', script], portRe, runtime: `node ${n.version}`, fanout: ['--fanout'], modes: ['echo', 'fanout'] }
}
// With permessage-deflate only: both servers agreeing no context takeover either way (the
// client's offer allows the server to ask it), so a connection needs no state between messages.
const nct = ['--deflate-no-context-takeover']
TARGETS['netloop JS echo, no context takeover'] = { ...TARGETS['netloop JS echo'], args: [...TARGETS['netloop JS echo'].args, ...nct], deflateOnly: true, modes: ['idle'] }
TARGETS[`ws (${nodeRuntimes[0].label}), no context takeover`] = { ...TARGETS[`ws (${nodeRuntimes[0].label})`], args: [...TARGETS[`ws (${nodeRuntimes[0].label})`].args, ...nct], deflateOnly: true, modes: ['idle'] }
try {
  TARGETS['C epoll (floor)'] = { ...buildFloor(), runtime: 'C', modes: ['echo', 'idle'], noDeflate: true }
} catch (e) {
  skipped.push({ name: 'C epoll (floor)', reason: e.message })
}
const b = bun()
if (b.bin) TARGETS.Bun = { cmd: b.bin, args: [join(servers, 'ws-bun.mjs')], portRe, runtime: `bun ${b.version}`, fanout: ['--fanout'] }
else skipped.push({ name: 'Bun', reason: b.reason })
try {
  createRequire(import.meta.url)('bufferutil')
} catch {
  skipped.push({ name: 'bufferutil', reason: 'not installed: the `ws + bufferutil` servers measure ws alone' })
}
const BASE = `ws (${nodeRuntimes[0].label})`

const wanted = opt('--servers', undefined)?.split(',').map((s) => s.trim().toLowerCase())
const names = Object.keys(TARGETS).filter((n) => n === BASE || !wanted || wanted.some((w) => n.toLowerCase().startsWith(w)))
const runsIn = (name, w) => (!TARGETS[name].modes || TARGETS[name].modes.includes(w.mode)) && !(w.deflate && TARGETS[name].noDeflate) && !(!w.deflate && TARGETS[name].deflateOnly)

// ---------------------------------------------------------------------------------------------

let quietWaited = 0
async function loadRun(client, name, w, rate) {
  if (QUIET_WAIT_S > 0 && quietWaited < Number(opt('--quiet-wait-total', 120)) * 1000) quietWaited += waitForQuiet(QUIET_WAIT_S).waitedMs
  const base = TARGETS[name]
  const t = w.mode === 'fanout' ? { ...base, args: [...base.args, ...base.fanout] } : w.deflate ? { ...base, args: [...base.args, '--deflate'] } : base
  const nofile = w.mode === 'idle' ? Math.max(4096, w.conns + 1024) : undefined
  const server = await startServer(name, t, { cpu: PIN ? 0 : undefined, nofile })
  const args = ['--port', String(server.port), '--conns', String(w.conns), '--size', '64', '--seconds', String(SECONDS), '--warmup', String(WARMUP), '--mode', w.mode, '--server-pid', String(server.pid), '--clk-tck', String(CLK_TCK)]
  if (rate) args.push('--rate', String(Math.round(rate)))
  if (w.depth) args.push('--depth', String(w.depth))
  // Fan-out: the publisher stays at most 64 messages ahead of the average subscriber (a window
  // of 16 left ws's server idle between batches on a busy machine).
  if (w.mode === 'fanout') args.push('--window', '64')
  // 8 source addresses: each idle run opens --idle-conns connections whose client ports stay in
  // TIME_WAIT for a minute after it; with 2 (56k ports) the next servers' runs ran out (EADDRINUSE).
  if (w.mode === 'idle') args.push('--sources', '8', '--settle', quick ? '1' : '2', '--gc-signal')
  if (w.deflate) args.push('--deflate')
  let argv = [client, ...args]
  if (nofile) argv = ['prlimit', `--nofile=${nofile}:${nofile}`, '--', ...argv]
  if (PIN) argv = ['taskset', '-c', '1', ...argv]
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 120_000 })
  const err = await server.stop()
  if (r.status !== 0) throw new Error(`ws-load failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout).trim().split('\n').slice(-2).join(' | ')}`)
  const c = JSON.parse(r.stdout)
  const exitLine = err.split('\n').find((l) => l.startsWith('{"metrics"'))
  const crossings = exitLine ? JSON.parse(exitLine).jsCrossings : undefined
  if (w.mode === 'idle') return { bytesPerConn: c.bytes_per_connection, rssMiB: c.rss_after_kib / 1024, connectS: c.connect_s }
  const serverS = c.server_cpu_ticks / c.clock_ticks_per_s
  return {
    msgPerS: c.msg_per_s,
    cpuUsPerMsg: (serverS * 1e6) / c.messages,
    serverCores: serverS / c.seconds,
    clientCpuShare: c.client_cpu_share,
    p50: c.p50_us,
    p99: c.p99_us,
    crossingsPerMsg: base.crossings && crossings !== undefined ? crossings / c.total_messages : undefined,
  }
}

function table(key, w, rounds, failed, rate) {
  const idle = w.mode === 'idle'
  const rateName = w.mode === 'fanout' ? 'delivered msg/s' : 'msg/s'
  const head = idle
    ? ['server', 'bytes per connection', 'server RSS MiB', 'ratio vs ' + BASE]
    : ['server', rateName, 'server CPU µs/msg', 'server cores', 'client CPU share', ...(w.mode === 'echo' && !w.fixedRate ? ['p50 / p99 µs'] : []), 'JS crossings/msg', `${rateName} ratio vs ${BASE}`, `CPU ratio vs ${BASE}`]
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`]
  const records = []
  for (const t of names.filter((n) => runsIn(n, w))) {
    const rs = rounds.map((round) => round[t]).filter(Boolean)
    if (!rs.length) continue
    const col = (k) => rs.map((r) => r[k])
    const ratio = (k) => (t === BASE ? '1' : fmtSummary(summarize(rounds.filter((round) => round[t] && round[BASE]).map((round) => round[t][k] / round[BASE][k])), 2))
    const metrics = idle
      ? { bytesPerConn: summarize(col('bytesPerConn')), rssMiB: summarize(col('rssMiB')) }
      : {
          // At a fixed rate the throughput is the schedule's, not a figure of merit (not compared).
          [w.mode === 'fanout' ? 'deliveredPerS' : w.fixedRate ? 'achievedPerS' : 'msgPerS']: summarize(col('msgPerS')),
          cpuUsPerMsg: summarize(col('cpuUsPerMsg')),
          serverCores: summarize(col('serverCores')),
          clientCpuShare: summarize(col('clientCpuShare')),
          ...(TARGETS[t].crossings ? { crossingsPerMsg: summarize(col('crossingsPerMsg')) } : {}),
          ...(w.mode === 'echo' && !w.fixedRate ? { p50Us: summarize(col('p50')), p99Us: summarize(col('p99')) } : {}),
        }
    const client = median(col('clientCpuShare'))
    const row = idle
      ? [t, fmtSummary(metrics.bytesPerConn), fmtSummary(metrics.rssMiB, 1), ratio('bytesPerConn')]
      : [
          t,
          `${fmtSummary(summarize(col('msgPerS')))}${rate && median(col('msgPerS')) < 0.9 * rate ? ' (**rate not kept**)' : ''}`,
          fmtSummary(metrics.cpuUsPerMsg, 2),
          fmtSummary(metrics.serverCores, 2),
          `${fmtSummary(metrics.clientCpuShare, 2)}${client > 0.9 ? ' (**client saturated**)' : ''}`,
          ...(w.mode === 'echo' && !w.fixedRate ? [`${fmtSummary(metrics.p50Us)} / ${fmtSummary(metrics.p99Us)}`] : []),
          metrics.crossingsPerMsg ? fmtSummary(metrics.crossingsPerMsg, 3) : '–',
          ratio('msgPerS'),
          ratio('cpuUsPerMsg'),
        ]
    lines.push(`| ${row.join(' | ')} |`)
    records.push({ workload: key === 'echo' ? 'echo-50' : key === 'window' ? `echo-50-depth-${w.depth}` : key === 'rate' ? 'echo-50-fixed-rate' : key === 'fanout' ? 'fanout-1000' : w.deflate ? `idle-deflate-${w.conns}` : `idle-${w.conns}`, peer: t, runtime: TARGETS[t].runtime, ...(rate ? { rate: Math.round(rate) } : {}), metrics })
  }
  for (const [t, why] of Object.entries(failed)) lines.push('', `${t}: ${why}`)
  return { text: lines.join('\n'), records }
}

// ---------------------------------------------------------------------------------------------

const client = buildClient()
const load1 = loadavg()[0]
const pinText = PIN ? 'servers pinned to CPU 0, the client (ws-load) to CPU 1' : '**unpinned** (not comparable with pinned runs)'
const header = [
  `WebSocket servers side by side: ${started.toISOString()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${load1.toFixed(2)} at start${NOTE ? `; ${NOTE}` : ''}`,
  `${RUNS} round(s), ${SECONDS} s measured after ${WARMUP} s warm-up per run, ${pinText}`,
  ...skipped.map((s) => `skipped: ${s.name}: ${s.reason}`),
]
if (load1 > 0.5) header.push(`WARNING: the machine is not quiet (load average ${load1.toFixed(2)}): figures will be noisy`)
console.log(header.join('\n'))

const results = { header, runs: {}, tables: {} }
const allRecords = []
let fixedRate = opt('--rate', undefined) ? Number(opt('--rate')) : undefined
for (const key of Object.keys(WORKLOADS)) {
  if (!ONLY.includes(key)) continue
  const w = WORKLOADS[key]
  if (w.fixedRate && !fixedRate) {
    const echo = results.runs.echo
    if (!echo) {
      console.log(`\n### ${w.title}\n\nskipped: no --rate and no echo workload in this run to take ${RATE_SHARE} of`)
      continue
    }
    const medians = names.filter((n) => echo.some((r) => r[n])).map((n) => median(echo.map((r) => r[n]?.msgPerS).filter(Number.isFinite)))
    fixedRate = RATE_SHARE * Math.min(...medians)
  }
  const rate = w.fixedRate ? fixedRate : undefined
  const rounds = []
  const failed = {}
  const those = names.filter((n) => runsIn(n, w))
  for (let r = 0; r < RUNS; r++) {
    const round = {}
    for (const t of rotating(those)(r).filter((t) => !failed[t])) {
      try {
        round[t] = await loadRun(client, t, w, rate)
      } catch (e) {
        const m = /skipped: [^\n]*/.exec(e.message)
        failed[t] = m ? m[0] : `FAILED: ${e.message.split('\n')[0]}`
        process.stderr.write(`  ${key} round ${r + 1}/${RUNS} ${t}: ${failed[t]}\n`)
        continue
      }
      const x = round[t]
      process.stderr.write(`  ${key} round ${r + 1}/${RUNS} ${t}: ${w.mode === 'idle' ? `${x.bytesPerConn.toFixed(0)} B/connection` : `${x.msgPerS.toFixed(0)} msg/s, ${x.cpuUsPerMsg.toFixed(2)} µs CPU/msg, client ${x.clientCpuShare.toFixed(2)}`}\n`)
    }
    rounds.push(round)
  }
  results.runs[key] = rounds
  const { text, records } = table(key, w, rounds, failed, rate)
  const cmd = `ws-load --conns ${w.conns} --size 64 --mode ${w.mode}${rate ? ` --rate ${Math.round(rate)}` : ''}${w.depth ? ` --depth ${w.depth}` : ''}${w.mode === 'fanout' ? ' --window 64' : ''}${w.mode === 'idle' ? ` --sources 8 --gc-signal${w.deflate ? ' --deflate' : ''}` : ` --seconds ${SECONDS} --warmup ${WARMUP}`}`
  results.tables[key] = `### ${w.title}${rate ? ` (${Math.round(rate).toLocaleString('en')} msg/s)` : ''}\n\nClient: \`${PIN ? 'taskset -c 1 ' : ''}${cmd}\`; ${pinText}.\n\n${text}`
  console.log(`\n${results.tables[key]}`)
  allRecords.push(...records)
}

const commit = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim()
const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).stdout.trim() !== ''
const command = `node benches/node/ws.mjs ${process.argv.slice(2).map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ')}`.trim()
const lines = allRecords.map((r) =>
  JSON.stringify({ date: started.toISOString(), commit: `${commit}${dirty ? '-dirty' : ''}`, command, part: 'ws', ...r, pinned: PIN, rounds: RUNS, seconds: SECONDS, load: { loadavg1: Number(load1.toFixed(2)), note: NOTE || undefined }, host: hostOf(), published: false }),
)
const jsonl = opt('--jsonl', join(root, 'target', 'bench-results', `ws-${started.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}.jsonl`))
mkdirSync(dirname(jsonl), { recursive: true })
writeFileSync(jsonl, lines.map((l) => `${l}\n`).join(''))
console.log(`\nrecords: ${jsonl}`)
if (flag('--record')) {
  const file = join(root, 'docs', 'benchmarks', 'results.jsonl')
  if (!existsSync(dirname(file))) mkdirSync(dirname(file), { recursive: true })
  appendFileSync(file, lines.map((l) => `${l}\n`).join(''))
  console.log(`appended ${lines.length} records to docs/benchmarks/results.jsonl (unpublished)`)
}
const jsonOut = opt('--json', undefined)
if (jsonOut) {
  mkdirSync(dirname(jsonOut), { recursive: true })
  writeFileSync(jsonOut, JSON.stringify(results, null, 1))
}
