// Memory per connection (issue 11): 10 000 idle connections held open against each echo server
// (netloop from TypeScript, the netloop Rust core's echo_server with 1 worker loop, node:net,
// tokio current_thread, a minimal C epoll server and Netty 4.1 NIO if Java and Maven are there),
// then one 64 B echo on every one of them.
//
//   node benches/node/memory.mjs [--quick] [--runs N] [--conns N] [--servers NAME,NAME]
//                                [--json FILE] [--quiet-wait SECONDS] [--quiet-wait-total SECONDS]
//                                [--addon FILE.node]
//
// Per server and round, a fresh process (its fd limit raised to the hard limit with prlimit):
//   1. warm-up: echo_load, 50 connections of 64 B ping-pong for 0.5 s (JIT, buffer pools), then
//      1 s of rest; baseline = VmRSS (/proc/PID/status) and the number of entries in /proc/PID/fd;
//   2. benches/load/idle_load.c opens N connections (non-blocking connects), keeping at most
//      min(256, backlog / 2) of them in the handshake or in the server's accept queue (read with
//      sock_diag: beyond the listen backlog the kernel would complete handshakes the server
//      never sees while they stay idle, see idle_load.c); accept time = until every connection
//      is established and out of the accept queue (the server's accept rate under that window);
//      the harness then checks that /proc/PID/fd holds baseline + N entries;
//   3. 0.5 s later: RSS with N idle connections that never carried a byte;
//   4. idle_load sends one 64 B message on each and checks every echo; 0.5 s later: RSS after
//      one echo on each (buffers a server allocated for a read or a write and kept show here);
//   5. idle_load closes everything, the server is stopped.
// Node servers (netloop TS, node:net) run with --expose-gc and make a full collection (SIGUSR2,
// benches/node/servers/common.mjs) 300 ms before every RSS reading.
// Reported: KiB per connection = (RSS − baseline) / N for both states, the accept time, the
// baseline and the peak RSS (VmHWM), medians over the rounds with min–max. RSS is the server's
// user-space memory: the kernel's socket memory (alike for every server) is not in it, so the
// C server's figure is ~0. Listen backlog: Send-Q of `ss -ltn` (tokio's default is 128, node's
// 511). Listen queue drops (TcpExt ListenDrops of /proc/net/netstat,
// machine-wide, over the accept phase) should be 0 with the window above: a
// drop means the server's accept queue overflowed and the accept time holds a retransmission. --quick: 2 000
// connections, 1 round; default: 10 000 connections, 3 rounds. Servers are not pinned (one
// process at a time; nothing here is a matter of CPU time). The servers are built on demand as
// for benches/node/peers.mjs (benches/peers/servers.mjs); one that cannot be built is reported as
// `skipped:`.
//
// N connections to one server address need N local ports (net.ipv4.ip_local_port_range,
// usually 32768–60999) and N fds in idle_load and in the server (the hard RLIMIT_NOFILE): the
// harness checks both first and says so, and uses fewer connections, if N does not fit.
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { addonUnderTest, flag, fmt, median, opt, root, rotating, spread, waitForQuiet } from './harness.mjs'
import { buildLoad, buildServers, memoryKiB, pickServers, startServer } from '../peers/servers.mjs'

const quick = flag('--quick')
const RUNS = Number(opt('--runs', quick ? 1 : 3))
let CONNS = Number(opt('--conns', quick ? 2000 : 10000))
// Waiting for a quiet machine before each run: ≤ --quiet-wait s per run, ≤ --quiet-wait-total s in all.
const QUIET_WAIT_S = Number(opt('--quiet-wait', quick ? 5 : 60))
const QUIET_BUDGET_MS = Number(opt('--quiet-wait-total', quick ? 10 : Infinity)) * 1000
const SIZE = 64
const PENDING = 256 // connections in the handshake or the accept queue, at most (idle_load: ≤ backlog / 2)
const { addonId } = addonUnderTest()

// ---------------------------------------------------------------------------------------------
// Limits: local ports towards one address, fds in the client and in the server.

const notes = []
const [portLo, portHi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
const hardNofile = Number(spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim()) || Infinity
const ports = portHi - portLo + 1
const fit = Math.min(ports - 100, hardNofile - 200)
if (CONNS > fit) {
  notes.push(
    `WARNING: ${CONNS} connections do not fit here (local port range ${portLo}–${portHi}: ${ports} ports; hard fd limit ${hardNofile}, for idle_load and for the server each): using ${fit}`,
  )
  CONNS = fit
}
const NOFILE = Number.isFinite(hardNofile) ? hardNofile : 1 << 20

// ---------------------------------------------------------------------------------------------

const loadBin = buildLoad('echo_load')
const idleBin = buildLoad('idle_load')
const WANTED = ['netloop TS', 'netloop Rust', 'node:net', 'tokio', 'C epoll', 'Netty']
const { targets: built, skipped } = buildServers(WANTED, opt('--servers', undefined))
const names = pickServers(Object.keys(built).filter((n) => n !== 'netloop Rust (2 workers)' && !built[n].scaling && !built[n].modes), opt('--servers', undefined))

const fdCount = (pid) => readdirSync(`/proc/${pid}/fd`).length
/** TcpExt ListenDrops of the machine (/proc/net/netstat; it counts the ListenOverflows too). */
function listenDrops() {
  const l = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((x) => x.startsWith('TcpExt:'))
  const [keys, vals] = l.map((x) => x.split(/\s+/).slice(1))
  return Number(vals[keys.indexOf('ListenDrops')] ?? 0)
}

/** The listen backlog of the socket listening on 127.0.0.1:port (Send-Q of `ss -ltn`). */
function backlog(port) {
  const r = spawnSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'utf8' })
  return Number(r.stdout?.trim().split(/\s+/)[2]) || undefined
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
let quietWaited = 0

/** idle_load as a child whose JSON lines can be awaited one by one. */
function startIdle(port, serverPid) {
  const args = ['127.0.0.1', String(port), String(CONNS), String(SIZE), String(PENDING), String(serverPid)]
  const child = spawn('prlimit', [`--nofile=${NOFILE}:${NOFILE}`, '--', idleBin, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const lines = []
  const waiters = []
  createInterface({ input: child.stdout }).on('line', (l) => (waiters.length ? waiters.shift().resolve(l) : lines.push(l)))
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
  exited.then((code) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`idle_load exited (${code}): ${err.trim()}`))
  })
  return {
    exited,
    exitCode: () => child.exitCode,
    error: () => err.trim(),
    next: () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((resolve, reject) => waiters.push({ resolve, reject }))).then(JSON.parse),
    send: () => child.stdin.write('\n'),
    end: () => child.stdin.end(),
  }
}

async function memoryRun(name) {
  if (quietWaited < QUIET_BUDGET_MS) quietWaited += waitForQuiet(QUIET_WAIT_S).waitedMs
  // Node servers run with --expose-gc and collect on SIGUSR2 before every RSS reading: the
  // figures are then what the server keeps, not when V8 happened to collect last.
  const t = built[name].node ? { ...built[name], args: ['--expose-gc', ...built[name].args] } : built[name]
  const server = await startServer(name, t, { nofile: NOFILE })
  const memoryNow = async () => {
    if (t.node) {
      process.kill(server.pid, 'SIGUSR2')
      await sleep(300)
    }
    return memoryKiB(server.pid)
  }
  try {
    // 1. warm-up, rest, baseline
    const w = spawnSync(loadBin, ['127.0.0.1', String(server.port), '50', String(SIZE), '0.5', t.jvm ? '1' : '0.2', 'echo'], { encoding: 'utf8' })
    if (w.status !== 0) throw new Error(`warm-up echo_load failed: ${w.stderr.trim()}`)
    await sleep(1000)
    const base = await memoryNow()
    const listenBacklog = backlog(server.port)
    const fd0 = fdCount(server.pid)
    // 2. N connections; accept time from /proc/PID/fd
    const drops0 = listenDrops()
    const idle = startIdle(server.port, server.pid)
    const connected = await idle.next()
    const drops = listenDrops() - drops0
    // idle_load saw every connection leave the accept queue: the server must hold them all.
    const deadline = performance.now() + 10_000
    while (fdCount(server.pid) < fd0 + CONNS) {
      if (!server.alive()) throw new Error('the server died while accepting')
      if (performance.now() > deadline) throw new Error(`the server holds ${fdCount(server.pid) - fd0} of ${CONNS} connections`)
      await sleep(20)
    }
    // 3. idle
    await sleep(500)
    const idleMem = await memoryNow()
    const fdIdle = fdCount(server.pid)
    // 4. one echo on each
    idle.send()
    const echoed = await idle.next()
    await sleep(500)
    const echoMem = await memoryNow()
    // 5. done
    idle.send()
    idle.end()
    const code = await idle.exited
    if (code !== 0) throw new Error(`idle_load exited ${code}: ${idle.error()}`)
    return {
      target: name,
      conns: CONNS,
      baselineMiB: base.rss / 1024,
      idleKiBPerConn: (idleMem.rss - base.rss) / CONNS,
      echoKiBPerConn: (echoMem.rss - base.rss) / CONNS,
      acceptS: connected.connect_s,
      pacedBy: connected.paced_by,
      window: connected.max_pending,
      listenDrops: drops,
      backlog: listenBacklog,
      echoS: echoed.echo_s,
      peakMiB: echoMem.hwm / 1024,
      fdsPerConn: (fdIdle - fd0) / CONNS,
      raw: { base, idleMem, echoMem, fd0, fdIdle },
    }
  } finally {
    await server.stop()
  }
}

// ---------------------------------------------------------------------------------------------

const addonAtStart = names.includes('netloop TS') ? addonId() : undefined
const header = [
  `memory per connection: ${new Date().toISOString()}, node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${loadavg()[0].toFixed(2)} at start`,
  `${CONNS} connections, ${RUNS} round(s), local port range ${portLo}–${portHi}, hard fd limit ${hardNofile}`,
  ...notes,
]
if (addonAtStart) header.push(`addon ${addonAtStart.file}: ${addonAtStart.size} bytes, ${addonAtStart.mtime}, sha256 ${addonAtStart.sha256}`)
for (const s of skipped) header.push(`skipped: ${s.name}: ${s.reason}`)
console.log(header.join('\n'))

const rounds = []
const failed = {}
for (let r = 0; r < RUNS; r++) {
  const round = {}
  for (const t of rotating(names)(r).filter((t) => !failed[t])) {
    try {
      round[t] = await memoryRun(t)
    } catch (e) {
      failed[t] = e.message.split('\n')[0]
      process.stderr.write(`  round ${r + 1}/${RUNS} ${t}: FAILED: ${failed[t]}\n`)
      continue
    }
    const x = round[t]
    process.stderr.write(
      `  round ${r + 1}/${RUNS} ${t}: baseline ${fmt(x.baselineMiB, 1)} MiB, idle ${fmt(x.idleKiBPerConn, 2)} KiB/conn, after echo ${fmt(x.echoKiBPerConn, 2)} KiB/conn, accepted in ${fmt(x.acceptS, 2)} s\n`,
    )
  }
  rounds.push(round)
}

const lines = [
  `### ${CONNS} idle connections, then one 64 B echo on each`,
  '',
  `Client: \`idle_load 127.0.0.1 PORT ${CONNS} ${SIZE} ${PENDING} SERVER_PID\` (at most min(${PENDING}, backlog / 2) connections in the handshake or the accept queue), after a 0.5 s warm-up with \`echo_load\` (50 connections); servers unpinned, fd limit ${NOFILE}. RSS from /proc/PID/status; KiB/conn = (RSS − baseline) / ${CONNS}, idle and after one echo on each.`,
  '',
  '| server | baseline RSS MiB | KiB/conn idle | KiB/conn after one echo | accept all s | listen backlog | listen queue drops | peak RSS MiB | fds/conn |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
]
for (const t of names) {
  const rs = rounds.map((round) => round[t]).filter(Boolean)
  if (!rs.length) continue
  const col = (k) => rs.map((x) => x[k])
  lines.push(
    `| ${t} | ${spread(col('baselineMiB'), 1)} | ${spread(col('idleKiBPerConn'), 2)} | ${spread(col('echoKiBPerConn'), 2)} | ${spread(col('acceptS'), 2)} | ${fmt(median(col('backlog')))} | ${fmt(median(col('listenDrops')))} | ${fmt(median(col('peakMiB')), 1)} | ${fmt(median(col('fdsPerConn')), 2)} |`,
  )
}
for (const [t, why] of Object.entries(failed)) lines.push(`${t}: failed: ${why}`)
const tableText = lines.join('\n')
console.log(`\n${tableText}`)
if (addonAtStart && addonId().sha256 !== addonAtStart.sha256) console.log('\nWARNING: the addon changed during the run: discard the netloop TS figures')
console.log(`\nwaited ${(quietWaited / 1000).toFixed(1)} s in all for a quiet machine before runs`)
const jsonOut = opt('--json', join(root, 'target', 'bench-results', `memory-${Date.now()}.json`))
mkdirSync(dirname(jsonOut), { recursive: true })
writeFileSync(jsonOut, JSON.stringify({ header, runs: rounds, failed, table: tableText }, null, 1))
console.log(`\nraw results: ${jsonOut}`)
