// The pure parts of the benchmark harness (no I/O, no process state): summaries of rounds, the
// results file's records and the regression check. Used by benches/node/ws.mjs,
// scripts/bench-compare.mjs and scripts/bench-chart.mjs; tested by __test__/bench-stats.spec.ts.
//
// A record (one line of docs/benchmarks/results.jsonl) is one peer in one workload of one run:
//   { date, commit, command, part, workload, peer, runtime, pinned, load, published,
//     metrics: { <name>: { median, min, max, q1, q3, n } } }
// `load` says what else ran on the machine (the load average at start and a note); `published`
// marks the runs whose figures docs/benchmarks.md shows (the baseline of the next comparison).

/** Which way is better, per metric name (metrics not listed are reported, never flagged). */
export const DIRECTION = {
  msgPerS: 'higher',
  deliveredPerS: 'higher',
  reqPerS: 'higher',
  mbPerS: 'higher',
  cpuUsPerMsg: 'lower',
  userUsPerMsg: 'lower',
  cpuUsPerReq: 'lower',
  cpuUsPerMB: 'lower',
  crossingsPerMsg: 'lower',
  bytesPerConn: 'lower',
}

/** The q-quantile of `xs` (0 ≤ q ≤ 1), interpolated between the closest ranks. */
export function quantile(xs, q) {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b)
  if (!s.length) return NaN
  const at = (s.length - 1) * q
  const lo = Math.floor(at)
  const hi = Math.ceil(at)
  return s[lo] + (s[hi] - s[lo]) * (at - lo)
}

export const median = (xs) => quantile(xs, 0.5)

/** Median, min–max and interquartile range of the rounds' figures (non-finite ones left out). */
export function summarize(xs) {
  const f = xs.filter((x) => Number.isFinite(x))
  if (!f.length) return { median: NaN, min: NaN, max: NaN, q1: NaN, q3: NaN, n: 0 }
  return { median: median(f), min: Math.min(...f), max: Math.max(...f), q1: quantile(f, 0.25), q3: quantile(f, 0.75), n: f.length }
}

/** `median (min–max)` with `digits` decimals, thin spaces between thousands. */
export function fmtSummary(s, digits = 0) {
  if (!s || !Number.isFinite(s.median)) return '–'
  const f = (x) => {
    const t = x.toFixed(digits)
    return digits === 0 ? t.replace(/\B(?=(\d{3})+(?!\d))/g, ' ') : t
  }
  return s.n > 1 ? `${f(s.median)} (${f(s.min)}–${f(s.max)})` : f(s.median)
}

/** Relative run-to-run spread of a summary: (max − min) / median (0 for one round). */
export const relSpread = (s) => (s && s.n > 1 && s.median ? (s.max - s.min) / Math.abs(s.median) : 0)

/** The key a record is compared under: part/workload/peer. */
export const keyOf = (r) => `${r.part}/${r.workload}/${r.peer}`

/**
 * Compares `current` records with `baseline` ones (same key): a figure is a regression when its
 * median is worse than the baseline's by more than the larger relative spread of the two runs,
 * and by at least `minRel` (default 0.03: rounding and tick quantization); with a single round
 * on either side the spread is taken as `singleRound` (default 0.10). Returns one row per
 * metric compared: { key, metric, before, after, change (relative, + = worse), allowed, regression }.
 */
export function compareRecords(baseline, current, { minRel = 0.03, singleRound = 0.1 } = {}) {
  const base = new Map(baseline.map((r) => [keyOf(r), r]))
  const rows = []
  for (const cur of current) {
    const old = base.get(keyOf(cur))
    if (!old) continue
    for (const [metric, after] of Object.entries(cur.metrics ?? {})) {
      const before = old.metrics?.[metric]
      const dir = DIRECTION[metric]
      if (!dir || !before || !Number.isFinite(before.median) || !Number.isFinite(after?.median) || before.median === 0) continue
      const rel = (after.median - before.median) / Math.abs(before.median)
      const change = dir === 'higher' ? -rel : rel
      const spreadOf = (s) => (s.n > 1 ? relSpread(s) : singleRound)
      const allowed = Math.max(minRel, spreadOf(before), spreadOf(after))
      rows.push({ key: keyOf(cur), metric, before: before.median, after: after.median, change, allowed, regression: change > allowed, host: hostChange(old.host, cur.host) })
    }
  }
  return rows
}

/**
 * Whether two runs measured the same machine (their records' `host`, benches/node/harness.mjs
 * `hostOf`): 'same', 'other' (CPU, cores or kernel differ) or 'unknown' (a record without one,
 * as every run before 2026-12-07 afternoon). Absolute figures of two hosts are not comparable.
 */
export function hostChange(a, b) {
  if (!a || !b) return 'unknown'
  return a.cpu === b.cpu && a.cores === b.cores && a.kernel === b.kernel ? 'same' : 'other'
}

/** Parses JSON lines (blank lines and lines starting with // are skipped). */
export function parseJsonl(text) {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('//'))
    .map((l) => JSON.parse(l))
}

/**
 * The newest run (by date, then position) of each key, and the last published run of each key
 * strictly before it: `{ newest: Map(key → record), published: Map(key → record) }`.
 */
export function latestAndPublished(records) {
  const newest = new Map()
  const published = new Map()
  const order = records.map((r, i) => ({ r, i })).sort((a, b) => String(a.r.date).localeCompare(String(b.r.date)) || a.i - b.i)
  for (const { r } of order) newest.set(keyOf(r), r)
  for (const { r } of order) {
    const k = keyOf(r)
    if (r.published && r !== newest.get(k)) published.set(k, r)
  }
  return { newest, published }
}

/**
 * The records as ratios to `peer` measured in the same run (same date, part and workload): each
 * metric's median, min and max divided by the peer's median (the peer itself left out, and
 * records whose run has no such peer). Machines drift from day to day (the C floor itself moved
 * by 30 % between two published runs); a ratio in one run does not.
 */
export function relativeTo(records, peer) {
  const floors = new Map()
  for (const r of records) if (r.peer === peer) floors.set(`${r.date}|${r.part}|${r.workload}`, r)
  const out = []
  for (const r of records) {
    const f = floors.get(`${r.date}|${r.part}|${r.workload}`)
    if (!f || r === f) continue
    const metrics = {}
    for (const [k, s] of Object.entries(r.metrics ?? {})) {
      const d = f.metrics?.[k]?.median
      if (!d) continue
      metrics[k] = { ...s, median: s.median / d, min: s.min / d, max: s.max / d, q1: s.q1 / d, q3: s.q3 / d }
    }
    out.push({ ...r, peer: `${r.peer} ÷ ${peer}`, metrics })
  }
  return out
}
