// `npm run bench`: every benchmark of the project, one after the other, and one report.
//
//   node benches/run.mjs [--quick] [--addon FILE.node] [--only PART,PART | PART...] [--no-build] [--dry-run]
//                        [--quiet-wait SECONDS] [--quiet-wait-total SECONDS]
//   npm run bench -- --quick
//
// Parts, in order (--only picks some):
//   criterion        cargo bench -p netloop-benches (the Rust core; --quick: criterion's own
//                    quick mode: no warm-up, each bench stops once its estimate is stable)
//   schedule         benches/node/schedule.mjs   loop.execute/schedule against setImmediate/setTimeout
//   wakeup           benches/node/wakeup.mjs     cross-thread wake-up latency
//   channels-vs-net  benches/node/channels-vs-net.mjs   echo, lines, RESP, HTTP against node:net/http
//   peers            benches/node/peers.mjs      netloop against C, tokio, Netty (if present)
//   memory           benches/node/memory.mjs     (if present)
//   tls              benches/node/tls.mjs        TLS: netloop (TS, and the Rust core) against node:tls
//                                                (and tokio-rustls); skipped without OpenSSL's headers
//   http-client      benches/node/http-client.mjs  HttpClientCodec against node:http's client and
//                                                fetch, all asking the C HTTP server
//   http-file        benches/node/http-file.mjs  serving a file over HTTP: FileRegion (sendfile)
//                                                against node:http's createReadStream().pipe()
//   duplex           benches/node/duplex.mjs     toDuplex() and diagnostics/tracing subscribers
//                                                against the channel echo and node:net
//   scaling          benches/node/scaling.mjs    worker threads against node:net threads and cluster
//   ws               benches/node/ws.mjs         WebSocket: netloop (JS and native echo) against
//                                                node:http + ws (± bufferutil, Node 20 and 24) and
//                                                Bun; echo, fixed-rate echo, fan-out, idle memory
//                                                (`npm run bench -- --only ws`)
//
// First the TypeScript is compiled (`npx tsc -p tsconfig.json`; --no-build skips it). The netloop
// servers load the addon given with --addon, else the one `npm install` put at the repository's
// root (netloop.linux-x64-gnu.node). Every part runs as a child process with the shared options
// (--quick, --addon) and the durations this file picks for it (PARTS below: quick and full
// settings sized so that `--quick` took under 3 minutes and a full run under 15 on a 2-vCPU
// machine before the ws part and peers' Node 24, Bun and fixed-rate servers: they add about
// 1.5 minutes to `--quick` and 12 to a full run); its output is echoed live and captured. A workload whose tool is missing (wrk,
// redis-benchmark, cc, cargo, OpenSSL's headers) is skipped by its part with a line saying so.
//
// The report, target/bench-results/report-<ISO 8601 time>.md, holds the machine (CPU, vCPUs,
// kernel, node, rustc, git commit and whether the tree is dirty, the addon's size and hash), the
// exact commands, each part's output (its markdown tables) and wall time. It is rewritten after
// every part, so an interrupted run leaves what it measured. The parts' raw JSON goes next to it
// (report-<time>/PART.json). Exit status: 1 if a part failed, else 0.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, release, version as osVersion } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { addonUnderTest, flag, opt, positionals, root } from './node/harness.mjs'

const quick = flag('--quick')
const dryRun = flag('--dry-run')
const started = new Date()
const stamp = started.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '') // 20261123T160500Z
const outDir = join(root, 'target', 'bench-results')
const reportFile = join(outDir, `report-${stamp}.md`)
const jsonDir = join(outDir, `report-${stamp}`)
const rel = (p) => relative(root, p) || '.'

// ---------------------------------------------------------------------------------------------
// Options passed through

// The parts run in the repository's root: the addon's path is given relative to it.
const addonArg = opt('--addon', undefined) && rel(resolve(opt('--addon')))
if (addonArg && !existsSync(join(root, addonArg))) fail(`--addon ${opt('--addon')}: no such file`)
const shared = [...(quick ? ['--quick'] : []), ...(addonArg ? ['--addon', addonArg] : [])]
// Waiting for a quiet machine (other builds on a shared VM) is bounded per run (--quiet-wait)
// and per part (--quiet-wait-total), so the whole run keeps to its time budget; the parts report
// how long they waited. A quick run does not wait at all (each check alone costs half a second
// per run, ~30 s in all), so its figures are only as good as the machine is quiet.
const quietWait = opt('--quiet-wait', quick ? '0' : '15')
const quietTotal = opt('--quiet-wait-total', quick ? '0' : '30')
const quiet = ['--quiet-wait', quietWait, '--quiet-wait-total', quietTotal]
const json = (name) => ['--json', rel(join(jsonDir, `${name}.json`))]

const have = (cmd, arg = '--version') => spawnSync(cmd, [arg], { stdio: 'ignore' }).error === undefined

/** The [[bench]] targets of benches/Cargo.toml (the lib target takes no criterion options). */
function criterionBenches() {
  const toml = readFileSync(join(root, 'benches', 'Cargo.toml'), 'utf8')
  return [...toml.matchAll(/\[\[bench\]\]\s*\nname\s*=\s*"([^"]+)"/g)].map((m) => m[1])
}

const node = (script, ...args) => ({ cmd: process.execPath, args: [script, ...args], shown: ['node', script, ...args] })
const cargoBench = (...args) => ({ cmd: 'cargo', args: ['bench', '-p', 'netloop-benches', ...criterionBenches().flatMap((b) => ['--bench', b]), ...args] })

// Per part: the commands (run in order) and, when it cannot run, why. Durations: see the
// settings of each script; the quick ones here are what `--quick` of the whole run gets.
const PARTS = [
  {
    name: 'criterion',
    title: 'Rust core (criterion)',
    skip: () => (have('cargo') ? undefined : 'cargo not found'),
    // Compiled first (a separate step, so the run's time shows the compile apart).
    commands: () => [cargoBench('--no-run'), cargoBench('--', '--noplot', ...(quick ? ['--quick'] : []))],
    markdown: criterionTable,
  },
  {
    name: 'schedule',
    title: 'Scheduling from JS: loop.execute/schedule against setImmediate/setTimeout',
    commands: () => [node('benches/node/schedule.mjs', ...shared)],
  },
  {
    name: 'wakeup',
    title: 'Cross-thread wake-up latency',
    commands: () => [node('benches/node/wakeup.mjs', ...shared)],
  },
  {
    name: 'channels-vs-net',
    title: 'Channels from TypeScript against node:net and node:http',
    commands: () => [
      node(
        'benches/node/channels-vs-net.mjs',
        ...shared,
        // quick: 1 round of 1 s after 0.5 s (wrk: 1 s after 1 s), fewer RESP requests;
        // full: 3 rounds of 2 s after 1 s, the script's RESP requests (100 000 and 1 000 000).
        ...(quick ? ['--runs', '1', '--seconds', '1', '--warmup', '0.5', '--resp-n', '50000', '--resp-n-pipelined', '200000'] : ['--runs', '3', '--seconds', '2']),
        ...quiet,
        ...json('channels-vs-net'),
      ),
    ],
  },
  {
    name: 'peers',
    title: 'Peers: C epoll, tokio, Netty, netloop, node:net',
    optional: 'benches/node/peers.mjs',
    // quick: the script's (1 round of 1 s); full: 3 rounds of 2 s (issue 38: a median and spread
    // need at least 3; the script's own default, 3 × 3 s, takes longer).
    commands: () => [node('benches/node/peers.mjs', ...shared, ...(quick ? [] : ['--runs', '3', '--seconds', '2']), ...quiet, ...json('peers'), '--jsonl', rel(join(jsonDir, 'peers.jsonl')))],
  },
  {
    name: 'memory',
    title: 'Memory',
    optional: 'benches/node/memory.mjs',
    // quick: the script's (2 000 connections, 1 round); full: 10 000 connections, 1 round.
    commands: () => [node('benches/node/memory.mjs', ...shared, ...(quick ? [] : ['--runs', '1']), ...quiet, ...json('memory'))],
  },
  {
    name: 'tls',
    title: 'TLS: netloop against node:tls (and the Rust core against tokio-rustls)',
    optional: 'benches/node/tls.mjs',
    // quick: the script's (1 round of 1 s after 0.5 s, 2 000 idle connections); full: 3 rounds
    // of 2 s after 1 s, 10 000 idle connections in 1 round. No OpenSSL headers: it prints a
    // `skipped:` line and exits 0.
    commands: () => [node('benches/node/tls.mjs', ...shared, ...(quick ? [] : ['--runs', '3', '--seconds', '2']), ...quiet, ...json('tls'))],
  },
  {
    name: 'http-client',
    title: 'HTTP clients: HttpClientCodec against node:http and fetch',
    optional: 'benches/node/http-client.mjs',
    // quick: 1 round of 1 s after 0.5 s; full: 3 rounds of 2 s after 1 s (the script's).
    commands: () => [node('benches/node/http-client.mjs', ...shared, ...(quick ? ['--runs', '1', '--seconds', '1', '--warmup', '0.5'] : []), ...quiet, ...json('http-client'))],
  },
  {
    name: 'http-file',
    title: 'Serving a file over HTTP: FileRegion (sendfile) against node:http',
    optional: 'benches/node/http-file.mjs',
    // quick: 1 round of 1 s after 0.5 s (wrk: 1 s after 1 s); full: 3 rounds of 3 s after 1 s
    // (the script's). No wrk: it prints a `skipped:` line and exits 0.
    commands: () => [node('benches/node/http-file.mjs', ...shared, ...(quick ? ['--runs', '1', '--seconds', '1', '--warmup', '0.5'] : []), ...quiet, ...json('http-file'))],
  },
  {
    name: 'duplex',
    title: 'Node interop: toDuplex() and diagnostics subscribers against the channel echo and node:net',
    optional: 'benches/node/duplex.mjs',
    // quick: the script's (3 rounds of 1.5 s); full: 3 rounds of 2 s after 1 s.
    commands: () => [node('benches/node/duplex.mjs', ...shared, ...(quick ? [] : ['--runs', '3', '--seconds', '2']), '--quiet-wait', quietWait)],
  },
  {
    name: 'scaling',
    title: 'Several cores: worker threads',
    commands: () => [
      node(
        'benches/node/scaling.mjs',
        ...shared,
        // quick: 1 round of 1 s after 0.5 s, 100 000 requests per RESP test; full: 2 rounds of
        // 2 s after 1 s, 500 000 requests per RESP test.
        ...(quick ? ['--runs', '1', '--seconds', '1', '--warmup', '0.5', '--resp-n', '100000', '--resp-warmup-n', '10000'] : ['--runs', '2', '--seconds', '2', '--resp-n', '500000']),
        ...quiet,
        ...json('scaling'),
      ),
    ],
  },
  {
    name: 'ws',
    title: 'WebSocket: netloop against node:http + ws (Node 20 and 24) and Bun',
    optional: 'benches/node/ws.mjs',
    // quick: 1 round of 1 s after 0.5 s, 2 000 idle connections; full: 3 rounds of 3 s after
    // 1 s, 10 000 idle connections (the script's). Its JSON lines go beside the report.
    commands: () => [node('benches/node/ws.mjs', ...shared, ...quiet, ...json('ws'), '--jsonl', rel(join(jsonDir, 'ws.jsonl')))],
  },
]

// Parts named on the command line (`npm run bench -- ws tls`) are the same as --only ws,tls.
const named = positionals()
const only = opt('--only', undefined)?.split(',') ?? (named.length ? named : undefined)
if (only) {
  const unknown = only.filter((n) => !PARTS.some((p) => p.name === n))
  if (unknown.length) fail(`--only: unknown part ${unknown.join(', ')} (parts: ${PARTS.map((p) => p.name).join(', ')})`)
}
const selected = PARTS.filter((p) => !only || only.includes(p.name))

// ---------------------------------------------------------------------------------------------
// The machine

function sh(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8' })
  return r.status === 0 ? r.stdout.replace(/\s+$/, '') : undefined
}

function machine() {
  const cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? '?'
  const memGiB = Number(/MemTotal:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) / 1024 / 1024
  const commit = sh('git', ['rev-parse', 'HEAD']) ?? '?'
  const subject = sh('git', ['log', '-1', '--format=%s']) ?? ''
  const changed = (sh('git', ['status', '--porcelain', '--untracked-files=no']) ?? '').split('\n').filter(Boolean)
  const untracked = (sh('git', ['status', '--porcelain']) ?? '').split('\n').filter((l) => l.startsWith('??'))
  const { file, addonId } = addonUnderTest()
  let addon
  try {
    const id = addonId()
    addon = `${rel(id.file)}: ${id.size} bytes, modified ${id.mtime}, sha256 ${id.sha256}${id.size > 8 << 20 ? ' (**looks like a debug build**: netloop figures are not representative; pass --addon with a release build)' : ''}`
  } catch (e) {
    addon = `${rel(file)}: missing (${e.code ?? e.message}); run \`npm install\` or pass --addon`
  }
  const version = (cmd, arg, re = /(.*)/) => {
    const r = spawnSync(cmd, [arg], { encoding: 'utf8' })
    return r.error ? 'not installed' : (re.exec(`${r.stdout}${r.stderr}`.trim())?.[1] ?? 'installed')
  }
  return {
    rows: [
      ['CPU', cpuModel],
      ['vCPUs', String(cpus().length)],
      ['memory', `${memGiB.toFixed(1)} GiB`],
      ['kernel', `${release()} (${osVersion()})`],
      ['node', process.version],
      ['rustc', sh('rustc', ['-V']) ?? 'not installed'],
      ['git commit', `${commit} (${subject})`],
      ['working tree', changed.length ? `dirty: ${changed.length} tracked files changed (${changed.slice(0, 8).map((l) => l.slice(3)).join(', ')}${changed.length > 8 ? ', ...' : ''})${untracked.length ? `, ${untracked.length} untracked` : ''}` : `clean${untracked.length ? ` (${untracked.length} untracked)` : ''}`],
      ['addon', addon],
      ['tools', `wrk: ${version('wrk', '-v', /^(wrk \S+)/)}; redis-benchmark: ${version('redis-benchmark', '--version')}; cc: ${version('cc', '--version', /^(.*)/)}; cargo: ${version('cargo', '--version')}`],
      ['load average at start', readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')],
    ],
  }
}

// ---------------------------------------------------------------------------------------------
// Running

function fail(message) {
  process.stderr.write(`bench: ${message}\n`)
  process.exit(2)
}

const shown = (c) => (c.shown ?? [c.cmd, ...c.args]).map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ')

/** Runs a command, echoing its output live; resolves with the captured stdout and stderr. */
function run(c) {
  process.stdout.write(`\n$ ${shown(c)}\n`)
  if (dryRun) return Promise.resolve({ code: 0, stdout: '', stderr: '', seconds: 0 })
  const t0 = process.hrtime.bigint()
  const child = spawn(c.cmd, c.args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => {
    stdout += d
    process.stdout.write(d)
  })
  child.stderr.on('data', (d) => {
    stderr += d
    process.stderr.write(d)
  })
  return new Promise((resolve) => {
    child.once('error', (e) => resolve({ code: 127, stdout, stderr: `${stderr}${e.message}\n`, seconds: Number(process.hrtime.bigint() - t0) / 1e9 }))
    child.once('close', (code, signal) => resolve({ code: code ?? 128, signal, stdout, stderr, seconds: Number(process.hrtime.bigint() - t0) / 1e9 }))
  })
}

/** Criterion's text output as a table: benchmark, time [low estimate high], throughput. */
function criterionTable(stdout) {
  const rows = []
  let pending // a bench id printed on its own line (long ids), its time on the next
  let inChange = false // the `change:` block (against the previous run) repeats time and thrpt
  for (const line of stdout.split('\n')) {
    if (/^\S/.test(line)) {
      inChange = false
      pending = undefined
      if (/^(Benchmarking|Running|Found|Gnuplot|WARNING|Warning)\b/.test(line)) continue
      const m = /^(\S+)\s+time:\s+\[(.+?)\]/.exec(line)
      if (m) rows.push({ bench: m[1], time: m[2], thrpt: '' })
      else pending = /^(\S+)\s*$/.exec(line)?.[1]
      continue
    }
    if (/^\s+change:/.test(line)) inChange = true
    if (inChange) continue
    const t = /^\s+time:\s+\[(.+?)\]/.exec(line)
    if (t && pending) {
      rows.push({ bench: pending, time: t[1], thrpt: '' })
      pending = undefined
      continue
    }
    const th = /^\s+thrpt:\s+\[(.+?)\]/.exec(line)
    if (th && rows.length && !rows[rows.length - 1].thrpt) rows[rows.length - 1].thrpt = th[1]
  }
  if (!rows.length) return undefined
  const mid = (s) => s.split(/\s+(?=\d)/)[1] ?? s
  return [
    '| bench | time (estimate) | time [low estimate high] | throughput (estimate) |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.bench} | ${mid(r.time)} | ${r.time} | ${r.thrpt ? mid(r.thrpt) : '–'} |`),
  ].join('\n')
}

// ---------------------------------------------------------------------------------------------
// The report

const results = []
let build
const info = machine()

function fence(text) {
  const t = text.replace(/\s+$/, '')
  return t ? `\`\`\`text\n${t}\n\`\`\`` : '_(no output)_'
}

function writeReport(done) {
  if (dryRun) return
  const total = (Date.now() - started.getTime()) / 1000
  const lines = [
    `# netloop benchmarks, ${started.toISOString()}`,
    '',
    `\`${['node benches/run.mjs', ...process.argv.slice(2)].join(' ')}\`: ${quick ? 'quick' : 'full'} run, ${done ? `finished in ${fmtS(total)}` : `**incomplete** (${fmtS(total)} so far)`}.`,
    '',
    '## Machine',
    '',
    '| | |',
    '| --- | --- |',
    ...info.rows.map(([k, v]) => `| ${k} | ${v.replace(/\|/g, '\\|')} |`),
    '',
    '## Wall time',
    '',
    '| part | wall time | status |',
    '| --- | --- | --- |',
    ...(build ? [`| build (tsc) | ${fmtS(build.seconds)} | ${build.status} |`] : []),
    ...results.map((r) => `| ${r.name} | ${r.seconds === undefined ? '–' : fmtS(r.seconds)} | ${r.status} |`),
    `| **total** | ${fmtS(total)} | |`,
    '',
    '## Commands',
    '',
    '```sh',
    ...(build ? [build.command] : []),
    ...results.flatMap((r) => r.commands),
    '```',
  ]
  if (build?.output) lines.push('', '### build output', '', fence(build.output))
  for (const r of results) {
    lines.push('', `## ${r.name}: ${r.title}`, '', `${r.status}; ${r.seconds === undefined ? '' : `wall time ${fmtS(r.seconds)}`}`)
    for (const s of r.steps ?? []) {
      lines.push('', `\`${s.command}\` (${fmtS(s.seconds)}, exit ${s.code}${s.signal ? `, ${s.signal}` : ''})`)
      // Criterion's text becomes a table (its text folded below); the node parts print markdown.
      if (s.table) lines.push('', s.table, '', details('output', fence(s.stdout)))
      else if (s.stdout.trim()) lines.push('', asMarkdown(s.stdout))
      const err = s.stderr.replace(/^npm warn .*\n?/gm, '').trim()
      if (err) {
        const tail = err.split('\n').slice(-200).join('\n')
        if (s.code !== 0) lines.push('', 'stderr (last lines):', '', fence(err.split('\n').slice(-30).join('\n')))
        else lines.push('', details('stderr (progress lines, the figures of each run)', fence(tail)))
      }
    }
  }
  mkdirSync(outDir, { recursive: true })
  writeFileSync(reportFile, `${lines.join('\n')}\n`)
}

const details = (summary, body) => `<details><summary>${summary}</summary>\n\n${body}\n\n</details>`

/**
 * A part's stdout as markdown: its tables and headings as they are; other runs of several lines
 * (headers, notes) keep their line breaks.
 */
function asMarkdown(text) {
  return text
    .replace(/\s+$/, '')
    .split(/\n\s*\n/)
    .map((block) => {
      const ls = block.split('\n')
      if (ls.length === 1 || ls.every((l) => l.startsWith('|')) || (ls[0].startsWith('#') && ls.length === 1)) return block
      return ls.map((l) => (l.startsWith('|') ? l : `${l.replace(/^\s+/, '')}  `)).join('\n')
    })
    .join('\n\n')
}

function fmtS(s) {
  return s >= 60 ? `${Math.floor(s / 60)} min ${(s % 60).toFixed(0).padStart(2, '0')} s` : `${s.toFixed(1)} s`
}

// ---------------------------------------------------------------------------------------------

console.log(`netloop benchmarks (${quick ? 'quick' : 'full'} run): ${selected.map((p) => p.name).join(', ')}`)
for (const [k, v] of info.rows) console.log(`  ${k}: ${v}`)
if (!dryRun) mkdirSync(jsonDir, { recursive: true })

const needsJs = selected.some((p) => p.name !== 'criterion')
if (needsJs && !flag('--no-build')) {
  const c = { cmd: 'npx', args: ['tsc', '-p', 'tsconfig.json'] }
  const r = await run(c)
  const emitted = existsSync(join(root, 'index.js'))
  build = { command: shown(c), seconds: r.seconds, status: r.code === 0 ? 'ok' : emitted ? `exit ${r.code} (index.js is there: type errors still emit, or an earlier build; running on)` : `FAILED (exit ${r.code})`, output: `${r.stdout}${r.stderr}`.replace(/^npm warn .*\n?/gm, '') }
  if (!emitted) {
    writeReport(true)
    fail(`the TypeScript did not compile (index.js missing); report: ${rel(reportFile)}`)
  }
}
if (needsJs && !addonArg && !existsSync(join(root, 'netloop.linux-x64-gnu.node'))) {
  fail('no native addon at the repository root (netloop.linux-x64-gnu.node): run `npm install`, or pass --addon FILE.node')
}

let failed = 0
for (const p of selected) {
  const r = { name: p.name, title: p.title, commands: [], steps: [] }
  results.push(r)
  if (p.optional && !existsSync(join(root, p.optional))) {
    r.status = 'skipped: not present'
    console.log(`\n== ${p.name}: skipped: not present (${p.optional})`)
    writeReport(false)
    continue
  }
  const why = p.skip?.()
  if (why) {
    r.status = `skipped: ${why}`
    console.log(`\n== ${p.name}: skipped: ${why}`)
    writeReport(false)
    continue
  }
  console.log(`\n== ${p.name}: ${p.title}`)
  const t0 = Date.now()
  r.status = 'ok'
  for (const c of p.commands()) {
    r.commands.push(shown(c))
    const s = await run(c)
    r.steps.push({ command: shown(c), seconds: s.seconds, code: s.code, signal: s.signal, stdout: s.stdout, stderr: s.stderr, table: p.markdown?.(s.stdout) })
    if (s.code !== 0) {
      r.status = `FAILED (exit ${s.code}${s.signal ? `, ${s.signal}` : ''})`
      failed++
      break
    }
  }
  r.seconds = (Date.now() - t0) / 1000
  console.log(`== ${p.name}: ${r.status}, ${fmtS(r.seconds)}`)
  writeReport(false)
}

writeReport(true)
console.log(`\nWall time: ${results.map((r) => `${r.name} ${r.seconds === undefined ? r.status : fmtS(r.seconds)}`).join(', ')}; total ${fmtS((Date.now() - started.getTime()) / 1000)}`)
console.log(`Report: ${rel(reportFile)}`)
process.exit(failed ? 1 : 0)
