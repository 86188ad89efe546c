// Draws the benchmark results as one SVG (no dependencies): per workload a panel with one row per
// peer, throughput on the left and server CPU per message (or memory per connection) on the
// right, each bar the median with a min–max whisker. The records drawn: for each workload, the
// newest run in the results file (all its peers).
//
//   node scripts/bench-chart.mjs [--file docs/benchmarks/results.jsonl] [--part ws,peers]
//                                [--out docs/benchmarks/chart.svg] [--title TEXT]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseJsonl } from '../benches/node/stats.mjs'

const root = join(fileURLToPath(import.meta.url), '..', '..')

const THROUGHPUT = [
  ['msgPerS', 'msg/s'],
  ['deliveredPerS', 'delivered msg/s'],
  ['reqPerS', 'req/s'],
  ['mbPerS', 'MB/s'],
  ['achievedPerS', 'msg/s (at the fixed rate)'],
]
const COST = [
  ['cpuUsPerMsg', 'server CPU µs/msg'],
  ['cpuUsPerReq', 'server CPU µs/req'],
  ['cpuUsPerMB', 'server CPU µs/MB'],
  ['bytesPerConn', 'server bytes/connection'],
]

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const short = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} M` : x >= 1e4 ? `${(x / 1e3).toFixed(0)} k` : x >= 100 ? x.toFixed(0) : x.toPrecision(3))

/** The newest run of each part/workload: [{ title, date, records }], in file order. */
export function latestRuns(records, parts) {
  const byWorkload = new Map()
  for (const r of records) {
    if (parts && !parts.includes(r.part)) continue
    const k = `${r.part}/${r.workload}`
    const cur = byWorkload.get(k)
    if (!cur || String(r.date) > cur.date) byWorkload.set(k, { title: `${r.part}: ${r.workload}`, date: String(r.date), pinned: r.pinned, load: r.load, records: [r] })
    else if (String(r.date) === cur.date) cur.records.push(r)
  }
  return [...byWorkload.values()]
}

/** The SVG of `runs` (see latestRuns). */
export function chart(runs, title) {
  const W = 960
  const rowH = 18
  const labelW = 250
  const colW = (W - labelW - 40) / 2
  let y = 40
  const out = []
  out.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`)
  for (const run of runs) {
    const metricOf = (list) => list.find(([k]) => run.records.some((r) => r.metrics?.[k]))
    const cols = [metricOf(THROUGHPUT), metricOf(COST)].filter(Boolean)
    if (!cols.length) continue
    const when = `${run.date.slice(0, 16).replace('T', ' ')} UTC, ${run.pinned === false ? 'unpinned' : 'pinned'}${run.load?.note ? `; ${run.load.note}` : ''}`
    out.push(`<text x="10" y="${y + 14}" font-size="13" font-weight="bold">${esc(run.title)}</text>`)
    out.push(`<text x="10" y="${y + 30}" font-size="11" fill="#555">${esc(when)}</text>`)
    y += 48
    cols.forEach(([key, label], c) => {
      const x0 = labelW + c * (colW + 20)
      out.push(`<text x="${x0}" y="${y}" font-size="11" fill="#333">${esc(label)} (median, min–max)</text>`)
    })
    y += 6
    for (const r of run.records) {
      out.push(`<text x="${labelW - 8}" y="${y + rowH - 5}" font-size="11" text-anchor="end">${esc(r.peer)}</text>`)
      cols.forEach(([key], c) => {
        const s = r.metrics?.[key]
        if (!s || !Number.isFinite(s.median)) return
        const max = Math.max(...run.records.map((x) => x.metrics?.[key]?.max ?? x.metrics?.[key]?.median ?? 0))
        const x0 = labelW + c * (colW + 20)
        const scale = (v) => (max > 0 ? (v / max) * (colW - 60) : 0)
        const cost = COST.some(([k]) => k === key)
        const fill = /netloop/.test(r.peer) ? (cost ? '#d9822b' : '#2b7bd9') : cost ? '#e8c39e' : '#9ec3e8'
        out.push(`<rect x="${x0}" y="${y + 3}" width="${scale(s.median).toFixed(1)}" height="${rowH - 6}" fill="${fill}"/>`)
        if (s.n > 1 && Number.isFinite(s.min) && Number.isFinite(s.max)) {
          const ym = y + rowH / 2
          out.push(`<line x1="${(x0 + scale(s.min)).toFixed(1)}" x2="${(x0 + scale(s.max)).toFixed(1)}" y1="${ym}" y2="${ym}" stroke="#000" stroke-width="1"/>`)
        }
        out.push(`<text x="${(x0 + scale(Math.max(s.median, s.max ?? 0)) + 4).toFixed(1)}" y="${y + rowH - 5}" font-size="10">${short(s.median)}</text>`)
      })
      y += rowH
    }
    y += 14
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${y + 10}" viewBox="0 0 ${W} ${y + 10}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="#fff"/>\n${out.join('\n')}\n</svg>\n`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2)
  const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback)
  const file = opt('--file', join(root, 'docs', 'benchmarks', 'results.jsonl'))
  const parts = opt('--part', undefined)?.split(',')
  const out = opt('--out', join(root, 'docs', 'benchmarks', 'chart.svg'))
  const runs = latestRuns(parseJsonl(readFileSync(file, 'utf8')), parts)
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, chart(runs, opt('--title', 'netloop benchmarks: the newest run of each workload (docs/benchmarks/results.jsonl)')))
  console.log(`${out}: ${runs.length} workloads, ${runs.reduce((n, r) => n + r.records.length, 0)} bars per column`)
}
