// Serving a file over HTTP: netloop's HttpServerCodec answering every GET with the file as a
// `FileRegion` body (the native codec writes the head with Content-Length, then the file with
// sendfile(2): no byte of it through JS or user space) against node:http streaming the file
// (`fs.createReadStream(file).pipe(res)`, the idiomatic way); for reference, both answering
// with the file read once at start into a Buffer (node:http's best case: no file I/O per
// request), all on one thread, all driven by wrk.
//
//   node benches/node/http-file.mjs [--quick] [--runs N] [--seconds S] [--warmup S]
//                                   [--sizes 16384,1048576] [--addon FILE.node] [--json FILE]
//                                   [--quiet-wait S] [--quiet-wait-total S] [--no-pin]
//   npm run bench -- --only http-file [--quick]
//
// Servers (benches/node/servers/, one fresh process per run, keep-alive):
//   netloop FileRegion  netloop-http-file.mjs FILE: `new HttpResponse(200, headers,
//                       FileRegion.open(FILE))` per request (an open and an fstat per request;
//                       the descriptor is closed natively after the write), one loop on the main
//                       thread, ctx.writeAndFlush
//   netloop SharedFile  netloop-http-file.mjs FILE --shared: the file opened once
//                       (`SharedFile.open(FILE).region()`), that one region the body of every
//                       response (no open, fstat or close per request)
//   node:http stream    node-http-file.mjs FILE: `res.writeHead(200, { content-type,
//                       content-length })` then `fs.createReadStream(FILE).pipe(res)` (the base
//                       of the ratios)
//   node:http buffer    node-http-file.mjs FILE --buffer: `res.writeHead(200, headers).end(buf)`
//                       with the file read at start (reference)
//   netloop Buffer      netloop-http-file.mjs FILE --buffer: `new HttpResponse(200, headers,
//                       buf)` with the same Buffer (lent to the write without a copy, as
//                       bodies of 8 KiB and more are; reference)
// The file: --sizes bytes of random data (default 16 KiB and 1 MiB) in
// target/bench-bin/http-file-SIZE.bin, written once and reused, read once before the runs (so
// it is in the page cache; the servers read it from there).
//
// Client: `wrk -t 1 -c C -d S --latency -s wrk-json.lua http://127.0.0.1:PORT/` (one GET in
// flight per connection, kept alive), C = 16 for files of 256 KiB and more (16 MiB in flight at
// 1 MiB), 50 below (as the hello benchmarks), after a warm-up run (wrk takes whole seconds: the
// durations are rounded, at least 1). Every run checks that wrk saw no socket error, timeout or
// non-2xx response (benches/node/wrk.mjs throws). Before its warm-up, each fresh server is
// checked with node:http's client (two GETs on one kept-alive connection): status 200, the
// file's exact Content-Length and a body whose sha256 is the file's; a server that fails the
// check (or a run) is left out of the following rounds and its row says why.
//
// How measured: the server pinned to CPU 0 and wrk to CPU 1 (--no-pin, or one CPU: unpinned);
// the servers of a size alternate within a round, the first one rotating from round to round;
// 3 rounds of 3 s after 1 s of warm-up (--quick: 1 round of 1 s after 0.5 s, i.e. 1 s). Server
// CPU: utime+stime of all its threads (/proc/PID/stat) over the measured wrk run; MB are 10^6
// bytes of file (the bodies; heads not counted); peak RSS is the server's VmHWM at the end of the
// run; wrk's CPU share is its CPU over the run's wall time (near 1.0, wrk is the bottleneck).
// Tables: medians over the rounds with min–max; ratios against node:http stream are taken per
// round (servers of a round run back to back), then their median and min–max.
//
// Skips: without wrk the part prints `skipped: wrk is not installed` and exits 0.
import { spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { CLK_TCK, addonUnderTest, flag, fmt, machineBusy, median, opt, root, rotating, spread, waitForQuiet } from './harness.mjs'
import { wrk, writeWrkScripts } from './wrk.mjs'
import { memoryKiB, procTicks, startServer } from '../peers/servers.mjs'

const quick = flag('--quick')
const RUNS = Number(opt('--runs', quick ? 1 : 3))
const SECONDS = Number(opt('--seconds', quick ? 1 : 3))
const WARMUP = Number(opt('--warmup', quick ? 0.5 : 1))
const SIZES = opt('--sizes', '16384,1048576').split(',').map(Number)
const PIN = !flag('--no-pin') && cpus().length >= 2
const QUIET_WAIT = Number(opt('--quiet-wait', quick ? 3 : 20))
const { addonId } = addonUnderTest()
const BASE = 'node:http stream'
for (const s of SIZES) if (!Number.isInteger(s) || s < 1) throw new Error(`--sizes: ${s} is not a size in bytes`)

if (spawnSync('wrk', ['-v']).error !== undefined) {
  console.log('skipped: wrk is not installed')
  process.exit(0)
}

const binDir = join(root, 'target', 'bench-bin')
mkdirSync(binDir, { recursive: true })
const wrkScript = writeWrkScripts(binDir).plain
const servers = join(root, 'benches', 'node', 'servers')

const SERVERS = [
  { name: 'netloop FileRegion', script: 'netloop-http-file.mjs', args: [], netloop: true },
  { name: 'netloop SharedFile', script: 'netloop-http-file.mjs', args: ['--shared'], netloop: true },
  { name: 'node:http stream', script: 'node-http-file.mjs', args: [] },
  { name: 'node:http buffer', script: 'node-http-file.mjs', args: ['--buffer'] },
  { name: 'netloop Buffer', script: 'netloop-http-file.mjs', args: ['--buffer'], netloop: true },
]
const NAMES = SERVERS.map((s) => s.name)

const sizeName = (n) => (n % (1 << 20) === 0 ? `${n >> 20} MiB` : n % 1024 === 0 ? `${n >> 10} KiB` : `${n} B`)
const connsFor = (size) => (size >= 256 * 1024 ? 16 : 50)
// wrk's -d takes whole seconds.
const wrkSeconds = (s) => Math.max(1, Math.round(s))

/** The file of `size` random bytes (made once, reused), read once: its path and sha256. */
function benchFile(size) {
  const path = join(binDir, `http-file-${size}.bin`)
  if (!existsSync(path) || statSync(path).size !== size) {
    const tmp = `${path}.${process.pid}.tmp`
    writeFileSync(tmp, randomBytes(size))
    renameSync(tmp, path)
  }
  const sha256 = createHash('sha256').update(readFileSync(path)).digest('hex')
  return { path, size, sha256 }
}

/** One GET with `agent`: status, headers, body's length and sha256. */
function get(port, agent) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      const h = createHash('sha256')
      let length = 0
      res.on('data', (d) => {
        h.update(d)
        length += d.length
      })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, length, sha256: h.digest('hex'), reused: req.reusedSocket }))
      res.on('error', reject)
    })
    req.setTimeout(10_000, () => req.destroy(new Error('no complete answer within 10 s')))
    req.on('error', reject)
  })
}

/** Two GETs on one kept-alive connection: 200, the exact Content-Length, the file's bytes. */
async function checkServer(name, port, file) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    for (let i = 0; i < 2; i++) {
      const r = await get(port, agent).catch((e) => {
        throw new Error(`check of ${name} failed: GET ${i + 1}: ${e.message}`)
      })
      const bad = []
      if (r.status !== 200) bad.push(`status ${r.status}`)
      if (r.headers['content-length'] !== String(file.size)) bad.push(`content-length ${JSON.stringify(r.headers['content-length'])} (the file has ${file.size} bytes)`)
      if (r.length !== file.size) bad.push(`a body of ${r.length} bytes (the file has ${file.size})`)
      else if (r.sha256 !== file.sha256) bad.push(`a body whose sha256 ${r.sha256.slice(0, 12)} is not the file's ${file.sha256.slice(0, 12)}`)
      if (bad.length) throw new Error(`check of ${name} failed: GET ${i + 1} got ${bad.join(', ')}`)
    }
  } finally {
    agent.destroy()
  }
}

/** One run: a fresh server, the check, wrk's warm-up, the measured wrk run. */
async function runOne(s, file) {
  waitForQuiet(QUIET_WAIT)
  const [scpu, ccpu] = PIN ? [0, 1] : [undefined, undefined]
  const target = { cmd: process.execPath, args: [join(servers, s.script), file.path, ...s.args], portRe: /^(\d+)\s*$/m }
  const server = await startServer(s.name, target, { cpu: scpu })
  try {
    await checkServer(s.name, server.port, file)
    const run = (seconds) => wrk({ url: `http://127.0.0.1:${server.port}/`, conns: connsFor(file.size), seconds: wrkSeconds(seconds), cpu: ccpu, script: wrkScript })
    const warm = run(WARMUP) // connections, JIT, not measured
    const t0 = procTicks(server.pid)
    const busy0 = machineBusy()
    const b = run(SECONDS)
    const serverS = (procTicks(server.pid) - t0) / CLK_TCK
    const busyS = (machineBusy() - busy0) / CLK_TCK
    if (!server.alive()) throw new Error(`${s.name} exited during the run`)
    const mem = memoryKiB(server.pid)
    const rate = b.requests / (b.duration_us / 1e6)
    const mb = (b.requests * file.size) / 1e6
    return {
      target: s.name,
      rate,
      mbPerS: (rate * file.size) / 1e6,
      p50: b.p50_us,
      p99: b.p99_us,
      serverCpuUsPerReq: (serverS * 1e6) / b.requests,
      serverCpuUsPerMB: (serverS * 1e6) / mb,
      serverCores: serverS / b.wall,
      peakRssMiB: mem.hwm / 1024,
      wrkCpuShare: b.clientS / b.wall,
      otherCores: Math.max(0, (busyS - serverS - b.clientS) / b.wall),
      raw: { wrk: b, warmup: warm, mem },
    }
  } finally {
    await server.stop()
  }
}

/** The first line of an error's message, and the `...Error: ...` line of a server's stderr in it. */
function reason(e) {
  const lines = e.message.split('\n')
  const thrown = lines.slice(1).find((l) => /^\s*\w*Error\b[^:]*: /.test(l))
  return thrown ? `${lines[0].slice(0, 120)}... ${thrown.trim()}` : lines[0]
}

/** Per-round ratios of `key` between `t` and the base, as `median (min–max)x`. */
function ratio(rounds, t, key) {
  if (t === BASE) return '1'
  const xs = rounds.filter((r) => r[t] && r[BASE]).map((r) => r[t][key] / r[BASE][key])
  return xs.length ? spread(xs, 2, 'x') : '–'
}

function table(file, rounds, failed) {
  const lines = [
    `| server | req/s | MB/s | p50 µs | p99 µs | server CPU µs/req | server CPU µs/MB | server cores | peak RSS MiB | wrk CPU share | CPU/MB ratio vs ${BASE} | MB/s ratio vs ${BASE} |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ]
  for (const t of NAMES) {
    const rs = rounds.map((round) => round[t]).filter(Boolean)
    if (!rs.length) continue
    const col = (k) => rs.map((r) => r[k])
    lines.push(
      `| ${t} | ${spread(col('rate'))} | ${spread(col('mbPerS'))} | ${spread(col('p50'))} | ${spread(col('p99'))} | ${spread(col('serverCpuUsPerReq'), 1)} | ${spread(col('serverCpuUsPerMB'))} | ${fmt(median(col('serverCores')), 2)} | ${fmt(median(col('peakRssMiB')), 1)} | ${fmt(median(col('wrkCpuShare')), 2)} | ${ratio(rounds, t, 'serverCpuUsPerMB')} | ${ratio(rounds, t, 'mbPerS')} |`,
    )
  }
  const other = rounds.flatMap((round) => Object.values(round).map((r) => r.otherCores))
  if (other.length) lines.push('', `Other load during the windows (cores busy beyond server and wrk): median ${fmt(median(other), 2)}, max ${fmt(Math.max(...other), 2)}.`)
  for (const [t, why] of Object.entries(failed)) lines.push(`${t}: FAILED: ${why}`)
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------

const addonAtStart = addonId()
const load1 = loadavg()[0]
const header = [
  `HTTP file serving: netloop FileRegion against node:http, ${new Date().toISOString()}, node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} at start`,
  `${RUNS} round(s), ${wrkSeconds(SECONDS)} s measured after ${wrkSeconds(WARMUP)} s warm-up per run, CPU pinning ${PIN ? 'on (server CPU 0, wrk CPU 1)' : 'off'}; ${/^(wrk \S+)/.exec(`${spawnSync('wrk', ['-v'], { encoding: 'utf8' }).stdout}`)?.[1] ?? 'wrk'}`,
  `addon ${addonAtStart.file}: ${addonAtStart.size} bytes, ${addonAtStart.mtime}, sha256 ${addonAtStart.sha256}`,
]
if (addonAtStart.size > 8 << 20) header.push('WARNING: the addon looks like a DEBUG build (size): netloop figures are not representative')
if (load1 > 0.5) header.push(`WARNING: the machine is not quiet (load average ${load1.toFixed(2)}): figures will be noisy`)
console.log(header.join('\n'))
const results = { header, sizes: SIZES, runs: {}, failed: {}, tables: {} }

for (const size of SIZES) {
  const file = benchFile(size)
  const conns = connsFor(size)
  const rounds = []
  const failed = {}
  for (let r = 0; r < RUNS; r++) {
    const round = {}
    for (const t of rotating(NAMES)(r).filter((t) => !failed[t])) {
      try {
        round[t] = await runOne(SERVERS.find((s) => s.name === t), file)
      } catch (e) {
        failed[t] = reason(e)
        process.stderr.write(`  ${sizeName(size)} round ${r + 1}/${RUNS} ${t}: FAILED: ${failed[t]}\n`)
        continue
      }
      const x = round[t]
      process.stderr.write(
        `  ${sizeName(size)} round ${r + 1}/${RUNS} ${t}: ${fmt(x.rate)} req/s, ${fmt(x.mbPerS)} MB/s, ${fmt(x.serverCpuUsPerMB)} µs CPU/MB, server ${fmt(x.serverCores, 2)} cores, wrk CPU share ${fmt(x.wrkCpuShare, 2)}\n`,
      )
    }
    rounds.push(round)
  }
  results.runs[size] = rounds
  results.failed[size] = failed
  const text = `### ${sizeName(size)} file (${size} bytes) over HTTP, ${conns} connections\n\nClient: \`${PIN ? 'taskset -c 1 ' : ''}wrk -t 1 -c ${conns} -d ${wrkSeconds(SECONDS)}s --latency -s wrk-json.lua http://127.0.0.1:PORT/\` after a ${wrkSeconds(WARMUP)} s warm-up run; servers ${PIN ? 'on CPU 0' : 'unpinned'}, one fresh process per run, file ${file.path.slice(root.length + 1)} (sha256 ${file.sha256.slice(0, 12)}), in the page cache. MB = 10^6 bytes of file.\n\n${table(file, rounds, failed)}`
  results.tables[size] = text
  console.log(`\n${text}`)
}

if (addonId().sha256 !== addonAtStart.sha256) console.log('\nWARNING: the addon changed during the run: discard the netloop figures')
const jsonOut = opt('--json', join(root, 'target', 'bench-results', `http-file-${Date.now()}.json`))
mkdirSync(dirname(jsonOut), { recursive: true })
writeFileSync(jsonOut, JSON.stringify(results, null, 1))
console.log(`\nraw results: ${jsonOut}`)
