// What the side-by-side harnesses share: command-line options, the addon under test, CPU
// accounting from /proc, waiting for a quiet machine, and the statistics of the tables.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { cpus, release } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

const argv = process.argv.slice(2)
/** True if `name` is on the command line. */
export const flag = (name) => argv.includes(name)
/** The value after `name` on the command line, else `fallback`. */
export const opt = (name, fallback) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : fallback
}

/**
 * The addon under test: `--addon FILE` (loaded by the servers through
 * NAPI_RS_NATIVE_LIBRARY_PATH), else the repository's. `addonId()` describes it (size, hash)
 * so a run can say which build it measured and notice a change under it.
 */
export function addonUnderTest() {
  const given = opt('--addon', undefined)
  if (given) process.env.NAPI_RS_NATIVE_LIBRARY_PATH = resolve(given)
  const file = given ? process.env.NAPI_RS_NATIVE_LIBRARY_PATH : join(root, 'netloop.linux-x64-gnu.node')
  return { given, file, addonId: () => describeAddon(file) }
}

/** An addon file's size, time and hash: which build a run measured. */
export function describeAddon(file) {
  const st = statSync(file)
  const hash = createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 12)
  return { file, size: st.size, mtime: st.mtime.toISOString(), sha256: hash }
}

/** The command line's positional arguments (options in `withValue` take the next word). */
export function positionals(withValue = ['--addon', '--json', '--runs', '--seconds', '--only', '--quiet-wait', '--quiet-wait-total']) {
  const out = []
  for (let i = 0; i < argv.length; i++) {
    if (withValue.includes(argv[i])) i++
    else if (!argv[i].startsWith('--')) out.push(argv[i])
  }
  return out
}

/** A markdown table of `rows` (objects with the same keys). */
export function markdownTable(rows) {
  const keys = Object.keys(rows[0] ?? {})
  return [`| ${keys.join(' | ')} |`, `| ${keys.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${keys.map((k) => r[k]).join(' | ')} |`)].join('\n')
}

/**
 * The machine a run measured, for its records (`host`): the CPU (vendor, family/model/stepping,
 * clock, cache: the model name alone reads "Intel(R) Xeon(R) Processor" on different hosts),
 * its cores, the kernel and the clock source. The VM behind the same 2 cores moves from day to
 * day and the kernel's share of a message moves with it (2026-12-07: the C echo floor 7.86 µs
 * one day, 4.98 the next), so `scripts/bench-compare.mjs` says when two runs' hosts differ.
 */
export function hostOf() {
  const info = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : ''
  const field = (name) => info.match(new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm'))?.[1].trim()
  const fms = [field('cpu family'), field('model'), field('stepping')].filter((x) => x !== undefined).join('/')
  const mhz = Number(field('cpu MHz'))
  const cpu = [field('vendor_id'), fms, cpus()[0]?.model, Number.isFinite(mhz) ? `${Math.round(mhz)} MHz` : undefined, field('cache size') ? `cache ${field('cache size')}` : undefined]
    .filter(Boolean)
    .join(', ')
  const clockFile = '/sys/devices/system/clocksource/clocksource0/current_clocksource'
  const clocksource = existsSync(clockFile) ? readFileSync(clockFile, 'utf8').trim() : undefined
  return { cpu, cores: cpus().length, kernel: release(), clocksource }
}

export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())

/** True if `out` is missing or older than `src`. */
export const newer = (src, out) => !existsSync(out) || statSync(src).mtimeMs > statSync(out).mtimeMs

/** Busy ticks of the whole machine (/proc/stat: user nice system irq softirq steal). */
export function machineBusy() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  return f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] ?? 0)
}

export const sleepSync = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/**
 * `--quiet-wait-total SECONDS`: what all the waits of one process may add up to (no bound by
 * default); once spent, runs start at once without checking (0: never wait).
 */
const QUIET_TOTAL_S = Number(opt('--quiet-wait-total', Infinity))
let quietWaitedMs = 0

/**
 * Waits (up to `maxSeconds`, and up to what is left of `--quiet-wait-total`) until less than
 * 0.25 of a core is busy over half a second: other engineers build and test on this VM, and a
 * run next to them measures them. Returns how long it waited and whether the machine got quiet.
 */
let budgetSpentSaid = false
export function waitForQuiet(maxSeconds) {
  const t0 = Date.now()
  const limitMs = Math.min(maxSeconds * 1000, Math.max(0, QUIET_TOTAL_S * 1000 - quietWaitedMs))
  if (limitMs <= 0 && Number.isFinite(QUIET_TOTAL_S)) {
    // Nothing left to wait: run at once (a check of the load would only cost half a second).
    if (!budgetSpentSaid) process.stderr.write(`  (--quiet-wait-total ${QUIET_TOTAL_S} s spent: no more waiting for a quiet machine)\n`)
    budgetSpentSaid = true
    return { waitedMs: 0, quiet: undefined } // not checked
  }
  for (;;) {
    const b0 = machineBusy()
    sleepSync(500)
    const busy = (machineBusy() - b0) / CLK_TCK / 0.5
    const waitedMs = Date.now() - t0
    if (busy < 0.25) {
      quietWaitedMs += waitedMs
      return { waitedMs, quiet: true }
    }
    if (waitedMs >= limitMs) {
      quietWaitedMs += waitedMs
      process.stderr.write(`  (machine still busy: ${busy.toFixed(2)} cores; running anyway${limitMs < maxSeconds * 1000 ? ', the --quiet-wait-total budget is spent' : ''})\n`)
      return { waitedMs, quiet: false }
    }
  }
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const n = s.length
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
}

export const fmt = (x, digits = 0) => {
  if (x === undefined || Number.isNaN(x)) return '–'
  const s = x.toFixed(digits)
  return digits === 0 ? s.replace(/\B(?=(\d{3})+(?!\d))/g, ' ') : s
}

/** `median (min–max)`. */
export const spread = (xs, digits = 0, unit = '') =>
  `${fmt(median(xs), digits)}${unit} (${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)})`

/**
 * Runs `runs` rounds: in round r every target of `order(r)` once, in that order, awaiting
 * `run(target)`; `line(r, target, result)` is printed on stderr after each run (progress).
 * Returns one `{ [name(target)]: result }` per round.
 */
export async function inRounds(runs, order, run, line, name = (t) => t) {
  const rounds = []
  for (let r = 0; r < runs; r++) {
    const round = {}
    for (const t of order(r)) {
      round[name(t)] = await run(t)
      process.stderr.write(`  ${line(r, t, round[name(t)])}\n`)
    }
    rounds.push(round)
  }
  return rounds
}

/** Round orders: the targets forwards in even rounds, backwards in odd ones. */
export const alternating = (targets) => (r) => (r % 2 ? [...targets].reverse() : targets)

/** Round orders: the targets rotated by one more place each round. */
export const rotating = (targets) => (r) => targets.map((_, i) => targets[(i + r) % targets.length])
