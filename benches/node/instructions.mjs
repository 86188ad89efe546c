// Instructions per request of the HTTP hello servers under callgrind: the A/B measure that
// holds where the wall clock cannot resolve a few per cent (issue 38; docs/benchmarks.md,
// "A/B of two builds"). Instructions do not move with the host's load or its kernel.
//
//   node benches/node/instructions.mjs [--targets ts,rust] [--addon FILE.node] [--addon-b FILE.node]
//                                      [--connections 50] [--delay-ms 0] [--warmup 10] [--seconds 8]
//                                      [--top 25] [--json FILE]
//
// Targets (each a fresh process under `valgrind --tool=callgrind`):
//   ts     examples/http-hello.ts bundled (benches/node/bundle.mjs), on the addon under test
//          (`--addon`, default the repository's build), with `node --perf-basic-prof` so that
//          JIT code is named; `--addon-b` runs it once more on a second build (`ts (B)`).
//   rust   examples/rust/http_hello.rs, the same pipeline on the netloop core alone, built
//          with debug info into target/cg-build (its own target directory).
// Load: `wrk -t1 -c CONNECTIONS` (with a Lua `delay()` of --delay-ms after each response when
// it is not 0: the fixed-rate regime, one request a wake-up) for --warmup seconds, then the
// profile's counters are zeroed (`callgrind_control -z`), `wrk` runs --seconds more, and the
// profile is dumped (`callgrind_control -d`). Requests: wrk's count of the measured run. Reported:
// the self instructions per request of the loop's thread (the busiest) by object (addon, JIT
// code, node, libc, ...) and its top functions, and the other threads' as one figure (V8's
// concurrent compiler and GC helpers: it moves between identical runs). Under callgrind a
// server runs 20-50x slower, so --warmup must let V8 finish its optimizing (the default 10 s
// does for the hello example; `node --trace-opt` says when).
//
// Needs valgrind (callgrind_control included) and wrk; cargo for `rust`. Runs in a few minutes.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { bundleExample } from './bundle.mjs'
import { parseCallgrind, perRequest, perfMap } from './callgrind.mjs'
import { describeAddon, markdownTable, opt, root } from './harness.mjs'
import { writeWrkScripts, wrk } from './wrk.mjs'

const TARGETS = opt('--targets', 'ts,rust').split(',')
const ADDON = resolve(opt('--addon', join(root, 'netloop.linux-x64-gnu.node')))
const ADDON_B = opt('--addon-b', undefined)
const CONNS = Number(opt('--connections', 50))
const DELAY_MS = Number(opt('--delay-ms', 0))
const WARMUP = Number(opt('--warmup', 10))
const SECONDS = Number(opt('--seconds', 8))
const TOP = Number(opt('--top', 25))
const JSON_OUT = opt('--json', undefined)

for (const [cmd, arg] of [['valgrind', '--version'], ['callgrind_control', '-h'], ['wrk', '-v']]) {
  if (spawnSync(cmd, [arg]).error) {
    console.error(`instructions: ${cmd} is needed (Debian: apt-get install valgrind wrk)`)
    process.exit(1)
  }
}

const binDir = join(root, 'target', 'bench-bin')
mkdirSync(binDir, { recursive: true })
const work = mkdtempSync(join(tmpdir(), 'netloop-instructions-'))
const scripts = writeWrkScripts(work, { delayMs: DELAY_MS })
const script = DELAY_MS > 0 ? scripts.rate : scripts.plain

const runs = []
if (TARGETS.includes('ts')) {
  const bundle = join(binDir, 'http-hello-instructions.cjs')
  bundleExample(root, join(root, 'examples', 'http-hello.ts'), bundle)
  const ts = (label, addon) => ({ label, addon, cmd: process.execPath, args: ['--perf-basic-prof', bundle, '--port', '0'], env: { NAPI_RS_NATIVE_LIBRARY_PATH: addon } })
  runs.push(ts('ts', ADDON))
  if (ADDON_B) runs.push(ts('ts (B)', resolve(ADDON_B)))
}
if (TARGETS.includes('rust')) {
  const dir = join(root, 'target', 'cg-build')
  const r = spawnSync('cargo', ['build', '--release', '-q', '-p', 'netloop-http', '--example', 'http_hello', '--target-dir', dir], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, CARGO_PROFILE_RELEASE_DEBUG: 'true' },
  })
  if (r.status === 0) runs.push({ label: 'rust', cmd: join(dir, 'release', 'examples', 'http_hello'), args: ['127.0.0.1:0'], env: {} })
  else console.error('instructions: skipped rust (cargo build failed)')
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Runs wrk for `seconds` (throwing on any error it reports); the requests it completed. */
const load = (port, seconds) => wrk({ url: `http://127.0.0.1:${port}/`, conns: CONNS, seconds, script }).requests

async function profile(run) {
  const out = join(work, `${run.label.replace(/\W+/g, '-')}.%p`)
  const server = spawn(
    'valgrind',
    ['--tool=callgrind', '--separate-threads=yes', '--fair-sched=yes', '--smc-check=all-non-file', '--dump-instr=no', `--callgrind-out-file=${out}`, run.cmd, ...run.args],
    { cwd: root, env: { ...process.env, ...run.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const exited = new Promise((r) => server.once('exit', r))
  const port = await new Promise((resolvePort, reject) => {
    let text = ''
    const timer = setTimeout(() => reject(new Error(`${run.label}: not listening after 300 s under valgrind`)), 300_000)
    server.stdout.on('data', (d) => {
      text += d
      const m = /listening (?:on [\d.]+:)?(\d+)/.exec(text)
      if (m) {
        clearTimeout(timer)
        resolvePort(Number(m[1]))
      }
    })
    server.once('exit', (c) => reject(new Error(`${run.label} exited (${c}) before listening`)))
  })
  load(port, WARMUP)
  execFileSync('callgrind_control', ['-z', String(server.pid)], { stdio: 'ignore' })
  const requests = load(port, SECONDS)
  execFileSync('callgrind_control', ['-d', String(server.pid)], { stdio: 'ignore' })
  await sleep(200)
  server.kill('SIGKILL')
  await exited
  const prefix = `${run.label.replace(/\W+/g, '-')}.${server.pid}`
  const dumps = readdirSync(work).filter((f) => f.startsWith(`${prefix}.`))
  if (!dumps.length) throw new Error(`${run.label}: callgrind wrote no dump`)
  // One profile per thread (--separate-threads): the busiest is the loop's thread; the rest
  // (V8's compiler and GC helpers, libuv's pool) is reported as one figure beside it.
  const threads = dumps.map((f) => parseCallgrind(readFileSync(join(work, f), 'utf8'))).sort((x, y) => y.total - x.total)
  const parsed = threads[0]
  const otherThreads = threads.slice(1).reduce((s, t) => s + t.total, 0) / requests
  const mapFile = `/tmp/perf-${server.pid}.map`
  let jitName
  if (existsSync(mapFile)) {
    jitName = perfMap(readFileSync(mapFile, 'utf8'))
    rmSync(mapFile)
  }
  return { label: run.label, addon: run.addon ? describeAddon(run.addon) : undefined, requests, otherThreads, ...perRequest(parsed, requests, { addonFile: run.addon, jitName, top: TOP }) }
}

const results = []
try {
  for (const run of runs) {
    const r = await profile(run)
    results.push(r)
    console.log(`\n## ${r.label}: ${Math.round(r.total).toLocaleString('en')} instructions a request on the loop's thread, ${Math.round(r.otherThreads).toLocaleString('en')} on the others (${r.requests.toLocaleString('en')} requests measured)`)
    if (r.addon) console.log(`addon ${r.addon.file}: ${r.addon.size} bytes, sha256 ${r.addon.sha256}`)
    console.log(markdownTable(r.byKind.map((k) => ({ object: k.kind, 'instructions a request': Math.round(k.perRequest).toLocaleString('en'), share: `${(100 * k.share).toFixed(1)} %` }))))
    console.log()
    console.log(markdownTable(r.top.map((f) => ({ 'instructions a request': Math.round(f.perRequest).toLocaleString('en'), object: f.kind, function: f.name.slice(0, 120) }))))
  }
  const a = results.find((r) => r.label === 'ts')
  const b = results.find((r) => r.label === 'ts (B)')
  if (a && b) {
    const kinds = [...new Set([...a.byKind, ...b.byKind].map((k) => k.kind))]
    const of = (r, kind) => r.byKind.find((k) => k.kind === kind)?.perRequest ?? 0
    console.log(`\n## A/B: ts ÷ ts (B), instructions a request`)
    console.log(
      markdownTable(
        [['total', a.total, b.total], ['other threads', a.otherThreads, b.otherThreads], ...kinds.map((k) => [k, of(a, k), of(b, k)])].map(([what, x, y]) => ({
          object: what,
          ts: Math.round(x).toLocaleString('en'),
          'ts (B)': Math.round(y).toLocaleString('en'),
          'ts ÷ (B)': y > 0 ? (x / y).toFixed(3) : '-',
        })),
      ),
    )
  }
  console.log(`\nLoad: wrk -t1 -c${CONNS}${DELAY_MS > 0 ? ` with a delay() of ${DELAY_MS} ms` : ''}, ${WARMUP} s warm-up, ${SECONDS} s measured; callgrind self instructions (Ir).`)
  if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify({ date: new Date().toISOString(), connections: CONNS, delayMs: DELAY_MS, warmup: WARMUP, seconds: SECONDS, results }, null, 1))
} finally {
  rmSync(work, { recursive: true, force: true })
}
