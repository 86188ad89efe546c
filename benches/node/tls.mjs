// TLS (issue 16, "Speed and memory"): a netloop TLS server from TypeScript (SslHandler, rustls,
// then a JS echo handler) against a node:tls server running the same JS echo logic (a
// `tls.createServer` whose socket handler writes each 'data' chunk back), both on one thread,
// driven by the same native OpenSSL load client; for the record, the netloop Rust core
// (crates/tls/examples/tls_echo_server.rs, one loop) against tokio-rustls (current_thread) on
// the 64 B echo.
//
//   node benches/node/tls.mjs [--quick] [--runs N] [--seconds S] [--warmup S]
//                             [--only echo-50,bulk-4,handshake-ecdsa,handshake-rsa,resume,https-hello,idle]
//                             [--conns N] [--idle-runs N] [--connectors N] [--servers NAME,NAME]
//                             [--no-pin] [--json FILE] [--quiet-wait SECONDS]
//                             [--quiet-wait-total SECONDS] [--addon FILE.node]
//   npm run bench -- --only tls [--quick]
//
// Workloads (client: benches/load/tls_load.c on OpenSSL 3, TLS 1.3, OpenSSL's default offer:
// the server picks the cipher; the server's certificate is verified against the test CA for
// `localhost`; certificates from scripts/make-certs.sh in target/bench-certs):
//   echo-50          64 B ping-pong on 50 TLS connections (one message in flight each, every
//                    echo checked), ECDSA P-256 certificate. Server CPU per message (issue's
//                    target: netloop TS ≤ 0.6× node:tls) and msg/s. Also the netloop Rust core
//                    and tokio-rustls (same certificate, same client), for the record.
//   bulk-4           16 KiB messages streamed on 4 connections, 4 in flight each, every echoed
//                    byte checked against a pattern: MB/s (target ≥ 1.2× node:tls) and server CPU
//                    per MB.
//   handshake-ecdsa  --connectors (default 16) concurrent connectors, each in a loop: connect,
//                    full TLS 1.3 handshake, one 32 B echo, close_notify, close (the server closes
//                    first): handshakes/s (target ≥ node:tls) and server CPU per handshake, ECDSA
//                    P-256 certificate. OpenSSL 3.0's client costs more per full handshake than the
//                    servers (about twice a rustls server's CPU here, even verifying the chain in
//                    full only once per run): with one core for the client, the client bounds
//                    handshakes/s whenever a server stays under ~0.9 of its core. The tables give
//                    handshakes per server core-second (1 / CPU per handshake) beside it, and the
//                    target is checked on that. The client also counts servers that close TCP
//                    after its close_notify without sending their own.
//   handshake-rsa    the same with the RSA-2048 certificate.
//   resume           as handshake-ecdsa, each connector offering the TLS 1.3 ticket its previous
//                    connection got (SSL_set_session): resumed handshakes/s, server CPU per
//                    handshake and the share of handshakes really resumed (SSL_session_reused).
//   https-hello      HTTPS "Hello, World!": examples/http-hello.ts --tls (SslHandler, the native
//                    HTTP codec and the example's JS handler) against node:https with the same
//                    response (benches/node/servers/node-http.mjs --tls), `wrk -t 1 -c 50` over
//                    TLS with keep-alive (wrk's OpenSSL picks the version and cipher), SECONDS
//                    after a WARMUP run; then the same at a fixed low rate (each connection waits
//                    5 ms after a response): server CPU per request at the servers' maximum and
//                    at equal load, requests/s, wrk's client CPU share. No target: reported.
//   idle             --conns TLS connections (default 10 000; --quick 2 000), each after its
//                    handshake and one 64 B echo, held idle: server memory per connection
//                    (target ≤ 0.5× node:tls). As benches/node/memory.mjs: a fresh server with
//                    its fd limit raised (prlimit), a 0.5 s warm-up (tls_load echo, 50
//                    connections), 1 s of rest, baseline RSS; tls_load opens the connections
//                    (at most min(128, backlog / 2) in progress at once), the harness checks that
//                    the server holds baseline + N fds, waits 0.5 s and reads RSS again:
//                    KiB/conn = (RSS − baseline) / N. Node servers run with --expose-gc and make
//                    a full collection (SIGUSR2) 300 ms before every RSS reading. Unpinned.
//
// echo-50, bulk-4 and the handshake workloads: the server pinned to CPU 0, the client to CPU 1;
// every run starts a fresh server; the servers of a workload alternate within a round and the
// starting one rotates from round to round; 3 rounds of 3 s after 1 s of warm-up (the client
// connects and handshakes in the warm-up), --quick: 1 round of 1 s after 0.5 s; idle: --idle-runs
// rounds (default 1). Server CPU: utime+stime of all its threads (/proc/PID/stat), read by the
// client at the edges of its measured window. Reported per server: medians over the rounds with
// min–max, the client's CPU share (1.0 would be a whole core: the client must stay below the
// server to not be the bottleneck), and ratios against node:tls taken per round (the servers of a
// round run back to back), then their median and min–max. The last table checks the issue's
// targets against the medians (a --quick run is one noisy round: not figures to quote).
//
// Skips: without OpenSSL's headers (or cc) the whole part prints `skipped: ...` and exits 0; a
// server that cannot be built (cargo missing, a compile error) is left out with a line saying so.
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { CLK_TCK, addonUnderTest, flag, fmt, machineBusy, median, opt, root, rotating, spread, waitForQuiet } from './harness.mjs'
import { wrk, writeWrkScripts } from './wrk.mjs'
import { memoryKiB, procTicks, startServer } from '../peers/servers.mjs'
import { benchCerts, buildTlsLoad, buildTlsServers, withCert } from '../peers/tls-servers.mjs'

const quick = flag('--quick')
const RUNS = Number(opt('--runs', quick ? 1 : 3))
const SECONDS = Number(opt('--seconds', quick ? 1 : 3))
const WARMUP = Number(opt('--warmup', quick ? 0.5 : 1))
const IDLE_RUNS = Number(opt('--idle-runs', 1))
const CONNECTORS = Number(opt('--connectors', 16))
let CONNS = Number(opt('--conns', quick ? 2000 : 10000))
const ONLY = opt('--only', 'echo-50,bulk-4,handshake-ecdsa,handshake-rsa,resume,https-hello,idle').split(',')
const PIN = !flag('--no-pin') && cpus().length >= 2
const QUIET_WAIT_S = Number(opt('--quiet-wait', quick ? 3 : 60))
const QUIET_BUDGET_MS = Number(opt('--quiet-wait-total', quick ? 12 : Infinity)) * 1000
const { addonId } = addonUnderTest()
const BASE = 'node:tls'

const WORKLOADS = {
  'echo-50': { title: '64 B echo, 50 TLS connections (ECDSA P-256 certificate)', mode: 'echo', conns: 50, size: 64, cert: 'ecdsa', servers: ['netloop TS', 'node:tls', 'node:tls (AES-128-GCM first)', 'netloop Rust', 'tokio-rustls'] },
  'bulk-4': { title: '16 KiB bulk echo, 4 TLS connections (4 messages in flight each, every byte checked)', mode: 'bulk', conns: 4, size: 16384, depth: 4, cert: 'ecdsa', servers: ['netloop TS', 'netloop TS (autoRelease)', 'node:tls', 'node:tls (AES-128-GCM first)'] },
  'handshake-ecdsa': { title: `Full TLS 1.3 handshakes, ECDSA P-256 certificate (${CONNECTORS} connectors; connect, handshake, 32 B echo, close)`, mode: 'handshake', conns: CONNECTORS, size: 32, cert: 'ecdsa', servers: ['netloop TS', 'node:tls'] },
  'handshake-rsa': { title: `Full TLS 1.3 handshakes, RSA-2048 certificate (${CONNECTORS} connectors; connect, handshake, 32 B echo, close)`, mode: 'handshake', conns: CONNECTORS, size: 32, cert: 'rsa', servers: ['netloop TS', 'node:tls'] },
  resume: { title: `Resumed TLS 1.3 handshakes (session tickets), ECDSA P-256 certificate (${CONNECTORS} connectors)`, mode: 'resume', conns: CONNECTORS, size: 32, cert: 'ecdsa', servers: ['netloop TS', 'node:tls'] },
  'https-hello': { title: 'HTTPS "Hello, World!", wrk -c 50 over TLS with keep-alive (ECDSA P-256 certificate)', mode: 'https', conns: 50, cert: 'ecdsa', base: 'node:https', servers: ['netloop http-hello.ts', 'node:https'] },
  idle: { title: 'idle TLS connections after the handshake and one 64 B echo', mode: 'idle', size: 64, cert: 'ecdsa', servers: ['netloop TS', 'node:tls'] },
}
for (const k of ONLY) if (!WORKLOADS[k]) throw new Error(`unknown workload ${k} (known: ${Object.keys(WORKLOADS).join(', ')})`)

// ---------------------------------------------------------------------------------------------
// Tools, certificates, servers

let loadBin
let certs
try {
  loadBin = buildTlsLoad()
  certs = benchCerts()
} catch (e) {
  console.log(`skipped: the TLS benchmark needs the OpenSSL load client and the test certificates: ${e.message}`)
  process.exit(0)
}
const wantedServers = [...new Set(ONLY.flatMap((k) => WORKLOADS[k].servers))]
const picked = opt('--servers', undefined)?.split(',').map((s) => s.trim().toLowerCase())
const { targets: TARGETS, skipped } = buildTlsServers(wantedServers.filter((n) => n === BASE || !picked || picked.some((p) => n.toLowerCase().startsWith(p))))

// Idle: local ports towards one address, fds in the client and in the server.
const notes = []
const [portLo, portHi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
const hardNofile = Number(spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim()) || Infinity
const fit = Math.min(portHi - portLo + 1 - 100, hardNofile - 200)
if (ONLY.includes('idle') && CONNS > fit) {
  notes.push(`WARNING: ${CONNS} connections do not fit here (local port range ${portLo}–${portHi}; hard fd limit ${hardNofile}): using ${fit}`)
  CONNS = fit
}
const NOFILE = Number.isFinite(hardNofile) ? hardNofile : 1 << 20

let quietWaited = 0
const waitQuiet = () => {
  if (quietWaited < QUIET_BUDGET_MS) quietWaited += waitForQuiet(QUIET_WAIT_S).waitedMs
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// ---------------------------------------------------------------------------------------------
// Load runs

function clientArgs(w, port, pid, extra = {}) {
  const a = { mode: w.mode, port, ca: certs.ca, conns: w.conns, size: w.size, seconds: SECONDS, warmup: WARMUP, 'server-pid': pid, ...(w.depth ? { depth: w.depth } : {}), ...extra }
  return Object.entries(a).flatMap(([k, v]) => [`--${k}`, String(v)])
}

async function loadRun(name, w) {
  waitQuiet()
  const [scpu, ccpu] = PIN ? [0, 1] : [undefined, undefined]
  const server = await startServer(name, withCert(TARGETS[name], certs[w.cert]), { cpu: scpu })
  const args = clientArgs(w, server.port, server.pid)
  const r = spawnSync(ccpu === undefined ? loadBin : 'taskset', ccpu === undefined ? args : ['-c', String(ccpu), loadBin, ...args], { encoding: 'utf8' })
  const mem = server.alive() ? memoryKiB(server.pid) : {}
  await server.stop()
  if (r.status !== 0) throw new Error(`tls_load against ${name} failed (${r.status}): ${`${r.stderr}`.trim()}`)
  const c = JSON.parse(r.stdout)
  const serverS = c.server_cpu_ticks / c.clock_ticks_per_s
  return {
    target: name,
    rate: c.msg_per_s,
    mbPerS: c.mb_per_s,
    p50: c.p50_us,
    p99: c.p99_us,
    serverCpuUs: (serverS * 1e6) / c.messages,
    serverCpuUsPerMB: (serverS * 1e6) / ((c.messages * c.size) / 1e6),
    serverCores: serverS / c.seconds,
    peakRssMiB: mem.hwm / 1024,
    clientCpuShare: c.client_cpu_share,
    resumedShare: c.resumed_share,
    // Handshakes one whole core of the server would make at this CPU per handshake.
    capacity: 1e6 / ((serverS * 1e6) / c.messages),
    noCloseNotifyShare: c.closed_without_close_notify / c.total_messages,
    otherCores: Math.max(0, c.machine_busy_ticks / c.clock_ticks_per_s / c.seconds - serverS / c.seconds - c.client_cpu_share),
    session: `${c.protocol} ${c.cipher} ${c.group}`,
    raw: c,
  }
}

// ---------------------------------------------------------------------------------------------
// HTTPS with wrk

let wrkScripts
const haveWrk = spawnSync('wrk', ['-v']).error === undefined

async function httpsRun(name, w) {
  if (!haveWrk) throw new Error('wrk is not installed')
  if (!wrkScripts) {
    const dir = join(root, 'target', 'bench-bin')
    mkdirSync(dir, { recursive: true })
    wrkScripts = writeWrkScripts(dir)
  }
  waitQuiet()
  const [scpu, ccpu] = PIN ? [0, 1] : [undefined, undefined]
  const server = await startServer(name, withCert(TARGETS[name], certs[w.cert]), { cpu: scpu })
  try {
    const url = `https://127.0.0.1:${server.port}/`
    const run = (seconds, script) => wrk({ url, conns: w.conns, seconds: Math.max(1, Math.round(seconds)), cpu: ccpu, script })
    run(WARMUP, wrkScripts.plain) // handshakes and JIT, not measured
    const t0 = procTicks(server.pid)
    const busy0 = machineBusy()
    const b = run(SECONDS, wrkScripts.plain)
    const serverS = (procTicks(server.pid) - t0) / CLK_TCK
    const busyS = (machineBusy() - busy0) / CLK_TCK
    const t1 = procTicks(server.pid)
    const fixed = run(SECONDS, wrkScripts.rate)
    const fixedS = (procTicks(server.pid) - t1) / CLK_TCK
    const mem = server.alive() ? memoryKiB(server.pid) : {}
    return {
      target: name,
      rate: b.requests / (b.duration_us / 1e6),
      p50: b.p50_us,
      p99: b.p99_us,
      serverCpuUs: (serverS * 1e6) / b.requests,
      serverCores: serverS / b.wall,
      clientCpuShare: b.clientS / b.wall,
      otherCores: Math.max(0, (busyS - serverS - b.clientS) / b.wall),
      fixedRate: fixed.requests / (fixed.duration_us / 1e6),
      fixedCpuUs: (fixedS * 1e6) / fixed.requests,
      fixedP99: fixed.p99_us,
      peakRssMiB: mem.hwm / 1024,
      raw: { wrk: b, fixed },
    }
  } finally {
    await server.stop()
  }
}

function httpsTable(w, names, rounds, failed) {
  const base = w.base
  const lines = [
    `| server | requests/s | p50 µs | p99 µs | server CPU µs/req | server cores | peak RSS MiB | client CPU share | req/s ratio vs ${base} | CPU/req ratio vs ${base} | fixed rate: req/s | fixed rate: p99 µs | fixed rate: CPU µs/req | fixed rate: CPU/req ratio vs ${base} |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ]
  for (const t of names) {
    const rs = rounds.map((round) => round[t]).filter(Boolean)
    if (!rs.length) continue
    const col = (k) => rs.map((r) => r[k])
    lines.push(
      `| ${t} | ${spread(col('rate'))} | ${fmt(median(col('p50')))} | ${spread(col('p99'))} | ${spread(col('serverCpuUs'), 1)} | ${fmt(median(col('serverCores')), 2)} | ${fmt(median(col('peakRssMiB')), 1)} | ${fmt(median(col('clientCpuShare')), 2)} | ${ratio(rounds, t, base, 'rate')} | ${ratio(rounds, t, base, 'serverCpuUs')} | ${spread(col('fixedRate'))} | ${spread(col('fixedP99'))} | ${spread(col('fixedCpuUs'), 1)} | ${ratio(rounds, t, base, 'fixedCpuUs')} |`,
    )
  }
  const other = rounds.flatMap((round) => Object.values(round).map((r) => r.otherCores))
  if (other.length) lines.push('', `Other load during the windows (cores busy beyond server and client): median ${fmt(median(other), 2)}, max ${fmt(Math.max(...other), 2)}.`)
  for (const [t, why] of Object.entries(failed)) lines.push(`${t}: failed: ${why}`)
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------
// Idle connections

/** The listen backlog of the socket listening on 127.0.0.1:port (Send-Q of `ss -ltn`). */
function backlog(port) {
  const r = spawnSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'utf8' })
  return Number(r.stdout?.trim().split(/\s+/)[2]) || undefined
}
const fdCount = (pid) => readdirSync(`/proc/${pid}/fd`).length

async function idleRun(name, w) {
  waitQuiet()
  const t = TARGETS[name]
  const server = await startServer(name, withCert(t, certs[w.cert], ['--expose-gc']), { nofile: NOFILE })
  const memoryNow = async () => {
    if (t.node) {
      process.kill(server.pid, 'SIGUSR2')
      await sleep(300)
    }
    return memoryKiB(server.pid)
  }
  let child
  try {
    // 1. warm-up, rest, baseline
    const warm = spawnSync(loadBin, clientArgs({ mode: 'echo', conns: 50, size: 64 }, server.port, server.pid, { seconds: 0.5, warmup: 0.2 }), { encoding: 'utf8' })
    if (warm.status !== 0) throw new Error(`warm-up tls_load failed: ${`${warm.stderr}`.trim()}`)
    await sleep(1000)
    const base = await memoryNow()
    const listenBacklog = backlog(server.port)
    const pending = Math.max(1, Math.min(128, Math.floor((listenBacklog ?? 256) / 2)))
    const fd0 = fdCount(server.pid)
    // 2. N connections, each with its handshake and one echo done
    const args = ['--mode', 'idle', '--port', String(server.port), '--ca', certs.ca, '--conns', String(CONNS), '--size', String(w.size), '--pending', String(pending)]
    child = spawn('prlimit', [`--nofile=${NOFILE}:${NOFILE}`, '--', loadBin, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
    const line = await new Promise((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve)
      exited.then((code) => reject(new Error(`tls_load idle exited (${code}): ${err.trim()}`)))
    })
    const connected = JSON.parse(line)
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
    // 4. done
    child.stdin.end('\n')
    const code = await exited
    if (code !== 0) throw new Error(`tls_load idle exited ${code}: ${err.trim()}`)
    return {
      target: name,
      conns: CONNS,
      baselineMiB: base.rss / 1024,
      kibPerConn: (idleMem.rss - base.rss) / CONNS,
      connectS: connected.connect_s,
      pending,
      backlog: listenBacklog,
      peakMiB: idleMem.hwm / 1024,
      fdsPerConn: (fdIdle - fd0) / CONNS,
      session: `${connected.protocol} ${connected.cipher} ${connected.group}`,
      raw: { base, idleMem, fd0, fdIdle, connected },
    }
  } finally {
    if (child && child.exitCode === null) child.kill('SIGKILL')
    await server.stop()
  }
}

// ---------------------------------------------------------------------------------------------
// Tables

/** Per-round ratios of `key` between `t` and `base`, as `median (min–max)x`. */
function ratio(rounds, t, base, key) {
  if (t === base) return '1'
  const xs = rounds.filter((r) => r[t] && r[base]).map((r) => r[t][key] / r[base][key])
  return xs.length ? spread(xs, 2, 'x') : '–'
}
const ratios = (rounds, t, base, key) => rounds.filter((r) => r[t] && r[base]).map((r) => r[t][key] / r[base][key])

function loadTable(w, names, rounds, failed) {
  const bulk = w.mode === 'bulk'
  const hs = w.mode === 'handshake' || w.mode === 'resume'
  const [rateName, cpuKey, cpuName, lat] = bulk
    ? ['MB/s', 'serverCpuUsPerMB', 'server CPU µs/MB', 'µs']
    : hs
      ? ['handshakes/s', 'serverCpuUs', 'server CPU µs/handshake', 'µs (connect to echo)']
      : ['msg/s', 'serverCpuUs', 'server CPU µs/msg', 'µs']
  const rateKey = bulk ? 'mbPerS' : 'rate'
  const lines = [
    `| server | ${rateName} | ${w.mode === 'resume' ? 'resumed share | ' : ''}p50 ${lat} | p99 ${lat} | ${cpuName} | ${hs ? 'handshakes per server core-second | ' : ''}server cores | peak RSS MiB | client CPU share | ${rateName} ratio vs ${BASE} | CPU ratio vs ${BASE} |`,
    `| --- | --- | ${w.mode === 'resume' ? '--- | ' : ''}${hs ? '--- | ' : ''}--- | --- | --- | --- | --- | --- | --- | --- |`,
  ]
  for (const t of names) {
    const rs = rounds.map((round) => round[t]).filter(Boolean)
    if (!rs.length) continue
    const col = (k) => rs.map((r) => r[k])
    lines.push(
      `| ${t} | ${spread(col(rateKey))} | ${w.mode === 'resume' ? `${fmt(Math.min(...col('resumedShare')), 3)} | ` : ''}${fmt(median(col('p50')))} | ${spread(col('p99'))} | ${spread(col(cpuKey), bulk ? 0 : 1)} | ${hs ? `${spread(col('capacity'))} | ` : ''}${fmt(median(col('serverCores')), 2)} | ${fmt(median(col('peakRssMiB')), 1)} | ${fmt(median(col('clientCpuShare')), 2)} | ${ratio(rounds, t, BASE, rateKey)} | ${ratio(rounds, t, BASE, cpuKey)} |`,
    )
  }
  if (names.includes('netloop Rust') && names.includes('tokio-rustls')) {
    const cpu = ratios(rounds, 'netloop Rust', 'tokio-rustls', cpuKey)
    const rate = ratios(rounds, 'netloop Rust', 'tokio-rustls', rateKey)
    if (cpu.length) lines.push('', `The Rust core against tokio-rustls (per round): server CPU per message ${spread(cpu, 2, 'x')}, msg/s ${spread(rate, 2, 'x')}.`)
  }
  const sessions = [...new Set(rounds.flatMap((round) => Object.values(round).map((r) => r.session)))]
  lines.push('', `Negotiated: ${sessions.join('; ')}.`)
  const other = rounds.flatMap((round) => Object.values(round).map((r) => r.otherCores))
  if (other.length) lines.push(`Other load during the windows (cores busy beyond server and client): median ${fmt(median(other), 2)}, max ${fmt(Math.max(...other), 2)}.`)
  if (hs) {
    const bound = rounds.some((round) => Object.values(round).some((r) => r.serverCores < 0.9))
    if (bound) lines.push('Some servers used under 0.9 of their core: the client (OpenSSL 3.0 costs more per handshake than the servers) bounds handshakes/s there; compare the CPU per handshake (and the handshakes per server core-second it gives).')
    const noNotify = names.filter((t) => rounds.some((round) => round[t]?.noCloseNotifyShare > 0.01))
    if (noNotify.length) lines.push(`Closed TCP after the client's close_notify without sending its own (RFC 8446 6.1 requires one): ${noNotify.map((t) => `${t} (${fmt(100 * median(rounds.map((round) => round[t]?.noCloseNotifyShare).filter((x) => x !== undefined)), 0)} % of connections)`).join(', ')}.`)
  }
  for (const [t, why] of Object.entries(failed)) lines.push(`${t}: failed: ${why}`)
  return lines.join('\n')
}

function idleTable(names, rounds, failed) {
  const lines = [
    `| server | baseline RSS MiB | KiB/conn | KiB/conn ratio vs ${BASE} | handshake + echo of all s | listen backlog | peak RSS MiB | fds/conn |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ]
  for (const t of names) {
    const rs = rounds.map((round) => round[t]).filter(Boolean)
    if (!rs.length) continue
    const col = (k) => rs.map((x) => x[k])
    lines.push(
      `| ${t} | ${spread(col('baselineMiB'), 1)} | ${spread(col('kibPerConn'), 2)} | ${ratio(rounds, t, BASE, 'kibPerConn')} | ${spread(col('connectS'), 2)} | ${fmt(median(col('backlog')))} | ${fmt(median(col('peakMiB')), 1)} | ${fmt(median(col('fdsPerConn')), 2)} |`,
    )
  }
  const sessions = [...new Set(rounds.flatMap((round) => Object.values(round).map((r) => r.session)))]
  lines.push('', `Negotiated: ${sessions.join('; ')}.`)
  for (const [t, why] of Object.entries(failed)) lines.push(`${t}: failed: ${why}`)
  return lines.join('\n')
}

/** The issue's targets, from the per-round ratios of netloop TS to node:tls. */
function targetsTable(runs) {
  const rows = []
  const check = (key, what, ratioKey, goal, cmp, extra = '', server = 'netloop TS') => {
    const rounds = runs[key]
    if (!rounds) return
    const xs = ratios(rounds, server, BASE, ratioKey)
    if (!xs.length) return rows.push(`| ${what} | – | not measured |`)
    const m = median(xs)
    rows.push(`| ${what} | ${spread(xs, 2, 'x')}${extra} | ${cmp(m, goal) ? 'met' : 'missed'} (median) |`)
  }
  check('echo-50', '64 B echo, 50 connections: server CPU per message ≤ 0.6× node:tls', 'serverCpuUs', 0.6, (m, g) => m <= g)
  // netloop's SslContext prefers TLS_AES_128_GCM_SHA256 and node:tls follows the client's order
  // (AES-256-GCM first): the same ratios against node:tls made to prefer AES-128-GCM too.
  const same = 'node:tls (AES-128-GCM first)'
  for (const [key, what, k] of [['echo-50', '64 B echo, CPU per message', 'serverCpuUs'], ['bulk-4', '16 KiB bulk, MB/s', 'mbPerS']]) {
    const xs = runs[key] ? ratios(runs[key], 'netloop TS', same, k) : []
    if (xs.length) rows.push(`| ${what} against node:tls with the same cipher (AES-128-GCM first; reported) | ${spread(xs, 2, 'x')} | no target |`)
  }
  // On two vCPUs the client shares the machine: when it runs at nearly a whole core against
  // netloop, the MB/s is the client's and the servers' CPU per MB is the figure to compare
  // (docs/decisions/0007-tls.md, "The default"); the row says so, with that ratio.
  const clientBound = (key, server = 'netloop TS') => {
    const shares = (runs[key] ?? []).map((r) => r[server]?.clientCpuShare).filter((x) => x !== undefined)
    return shares.length > 0 && median(shares) >= 0.9
      ? `; client-bound (tls_load at ${fmt(median(shares), 2)} of a core); server CPU per MB ${spread(ratios(runs[key], server, BASE, 'serverCpuUs'), 2, 'x')}`
      : ''
  }
  check('bulk-4', '16 KiB bulk: MB/s ≥ 1.2× node:tls', 'mbPerS', 1.2, (m, g) => m >= g, clientBound('bulk-4'))
  const released = 'netloop TS (autoRelease)'
  check('bulk-4', '16 KiB bulk, the echo handler with `autoRelease`: MB/s ≥ 1.2× node:tls', 'mbPerS', 1.2, (m, g) => m >= g, clientBound('bulk-4', released), released)
  // The client may bound handshakes/s (see the table): the target is checked on what a core of
  // each server makes (the inverse of its CPU per handshake); handshakes/s is shown beside it.
  check('handshake-ecdsa', 'full handshakes/s, ECDSA P-256: ≥ node:tls (per server core-second)', 'capacity', 1, (m, g) => m >= g, runs['handshake-ecdsa'] ? `; measured handshakes/s ${spread(ratios(runs['handshake-ecdsa'], 'netloop TS', BASE, 'rate'), 2, 'x')}` : '')
  if (runs['handshake-rsa']) {
    const cpu = (t) => median(runs['handshake-rsa'].map((r) => r[t]?.serverCpuUs).filter((x) => x !== undefined))
    rows.push(`| server CPU per handshake, RSA-2048 (reported) | netloop TS ${fmt(cpu('netloop TS'))} µs, node:tls ${fmt(cpu(BASE))} µs; ratio ${ratio(runs['handshake-rsa'], 'netloop TS', BASE, 'serverCpuUs')} | no target |`)
  }
  if (runs.resume) {
    const rate = (t) => median(runs.resume.map((r) => r[t]?.rate).filter((x) => x !== undefined))
    const cpu = (t) => median(runs.resume.map((r) => r[t]?.serverCpuUs).filter((x) => x !== undefined))
    rows.push(`| resumed handshakes (reported) | netloop TS ${fmt(rate('netloop TS'))}/s at ${fmt(cpu('netloop TS'))} µs CPU each, node:tls ${fmt(rate(BASE))}/s at ${fmt(cpu(BASE))} µs; ratio ${ratio(runs.resume, 'netloop TS', BASE, 'rate')} (handshakes/s), ${ratio(runs.resume, 'netloop TS', BASE, 'serverCpuUs')} (CPU) | no target |`)
  }
  if (runs['https-hello']) {
    const r = runs['https-hello']
    const cpu = (t, k) => median(r.map((x) => x[t]?.[k]).filter((x) => x !== undefined))
    rows.push(`| HTTPS hello, wrk -c 50 (reported): netloop http-hello.ts --tls against node:https | CPU/req ${ratio(r, 'netloop http-hello.ts', 'node:https', 'serverCpuUs')} (${fmt(cpu('netloop http-hello.ts', 'serverCpuUs'), 1)} against ${fmt(cpu('node:https', 'serverCpuUs'), 1)} µs), req/s ${ratio(r, 'netloop http-hello.ts', 'node:https', 'rate')}; at a fixed rate CPU/req ${ratio(r, 'netloop http-hello.ts', 'node:https', 'fixedCpuUs')} | no target |`)
  }
  check('idle', `${CONNS} idle TLS connections: memory per connection ≤ 0.5× node:tls`, 'kibPerConn', 0.5, (m, g) => m <= g)
  if (!rows.length) return undefined
  return ['| target (netloop TS against node:tls, per round) | ratio, median (min–max) | |', '| --- | --- | --- |', ...rows].join('\n')
}

// ---------------------------------------------------------------------------------------------

const addonAtStart = TARGETS['netloop TS'] ? addonId() : undefined
const load1 = loadavg()[0]
const header = [
  `TLS: netloop against node:tls, ${new Date().toISOString()}, node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${load1.toFixed(2)} at start`,
  `${RUNS} round(s), ${SECONDS} s measured after ${WARMUP} s warm-up per run, CPU pinning ${PIN ? 'on (server CPU 0, client CPU 1)' : 'off'}; idle: ${CONNS} connections, ${IDLE_RUNS} round(s)`,
  `client: tls_load (${spawnSync('openssl', ['version'], { encoding: 'utf8' }).stdout?.trim() || 'OpenSSL'}), CA ${certs.ca}`,
  ...notes,
]
if (addonAtStart) {
  header.push(`addon ${addonAtStart.file}: ${addonAtStart.size} bytes, ${addonAtStart.mtime}, sha256 ${addonAtStart.sha256}`)
  if (addonAtStart.size > 8 << 20) header.push('WARNING: the addon looks like a DEBUG build (size): netloop TS figures are not representative')
}
for (const s of skipped) header.push(`skipped: ${s.name}: ${s.reason}`)
if (load1 > 0.5) header.push(`WARNING: the machine is not quiet (load average ${load1.toFixed(2)}): figures will be noisy`)
console.log(header.join('\n'))
const results = { header, skipped, runs: {}, tables: {} }

for (const key of Object.keys(WORKLOADS)) {
  if (!ONLY.includes(key)) continue
  const w = WORKLOADS[key]
  const names = w.servers.filter((n) => TARGETS[n])
  if (!names.includes(w.base ?? BASE) || names.length < 2) continue
  const idle = w.mode === 'idle'
  const runs = idle ? IDLE_RUNS : RUNS
  const rounds = []
  const failed = {}
  for (let r = 0; r < runs; r++) {
    const round = {}
    for (const t of rotating(names)(r).filter((t) => !failed[t])) {
      try {
        round[t] = idle ? await idleRun(t, w) : w.mode === 'https' ? await httpsRun(t, w) : await loadRun(t, w)
      } catch (e) {
        failed[t] = e.message.split('\n')[0]
        process.stderr.write(`  ${key} round ${r + 1}/${runs} ${t}: FAILED: ${failed[t]}\n`)
        continue
      }
      const x = round[t]
      const what = idle
        ? `${fmt(x.kibPerConn, 2)} KiB/conn, baseline ${fmt(x.baselineMiB, 1)} MiB, all connected in ${fmt(x.connectS, 2)} s`
        : w.mode === 'bulk'
          ? `${fmt(x.mbPerS)} MB/s, ${fmt(x.serverCpuUsPerMB)} µs CPU/MB`
          : w.mode === 'https'
            ? `${fmt(x.rate)} req/s, ${fmt(x.serverCpuUs, 1)} µs CPU each (fixed rate: ${fmt(x.fixedCpuUs, 1)}), wrk CPU share ${fmt(x.clientCpuShare, 2)}`
          : `${fmt(x.rate)} ${w.mode === 'echo' ? 'msg' : 'handshakes'}/s, ${fmt(x.serverCpuUs, 1)} µs CPU each, client CPU share ${fmt(x.clientCpuShare, 2)}${w.mode === 'resume' ? `, resumed ${fmt(x.resumedShare * 100, 1)} %` : ''}`
      process.stderr.write(`  ${key} round ${r + 1}/${runs} ${t}: ${what}\n`)
    }
    rounds.push(round)
  }
  results.runs[key] = rounds
  let text
  if (w.mode === 'https') {
    text = `### ${w.title}\n\nClient: \`${PIN ? 'taskset -c 1 ' : ''}wrk -t 1 -c ${w.conns} -d ${SECONDS}s --latency https://127.0.0.1:PORT/\` after a ${WARMUP} s warm-up run, then the same at a fixed rate (each connection waits 5 ms after a response); servers ${PIN ? 'on CPU 0' : 'unpinned'}, ${certs[w.cert].name} certificate: examples/http-hello.ts --tls (bundled, one loop) against node-http.mjs --tls (\`https.createServer\`, the same response).\n\n${httpsTable(w, names, rounds, failed)}`
  } else if (idle) {
    text = `### ${CONNS} ${w.title}\n\nClient: \`tls_load --mode idle --conns ${CONNS} --size ${w.size} --pending min(128, backlog / 2)\` after a 0.5 s warm-up (\`tls_load --mode echo\`, 50 connections); servers unpinned, fd limit ${NOFILE}, ECDSA P-256 certificate. KiB/conn = (RSS − baseline) / ${CONNS}, RSS from /proc/PID/status after a full GC in node servers.\n\n${idleTable(names, rounds, failed)}`
  } else {
    const cmd = `tls_load --mode ${w.mode} --conns ${w.conns} --size ${w.size}${w.depth ? ` --depth ${w.depth}` : ''} --seconds ${SECONDS} --warmup ${WARMUP} --server-pid PID`
    text = `### ${w.title}\n\nClient: \`${PIN ? 'taskset -c 1 ' : ''}${cmd}\`; servers ${PIN ? 'on CPU 0' : 'unpinned'}, ${certs[w.cert].name} certificate.\n\n${loadTable(w, names, rounds, failed)}`
  }
  results.tables[key] = text
  console.log(`\n${text}`)
}

const targets = targetsTable(results.runs)
if (targets) {
  results.tables.targets = targets
  console.log(`\n### Issue 16's targets${quick ? ' (quick run: one noisy round, not figures to quote)' : ''}\n\n${targets}`)
}
if (addonAtStart && addonId().sha256 !== addonAtStart.sha256) console.log('\nWARNING: the addon changed during the run: discard the netloop TS figures')
console.log(`\nwaited ${(quietWaited / 1000).toFixed(1)} s in all for a quiet machine before runs`)
const jsonOut = opt('--json', join(root, 'target', 'bench-results', `tls-${Date.now()}.json`))
mkdirSync(dirname(jsonOut), { recursive: true })
writeFileSync(jsonOut, JSON.stringify(results, null, 1))
console.log(`\nraw results: ${jsonOut}`)
