// One-off conversion of the benchmark log (docs/benchmarks/history.md, the old docs/benchmarks.md
// kept verbatim) into records of docs/benchmarks/results.jsonl: the tables a harness printed
// whole, under its header line (`netloop vs peers: <ISO time>, ... load average X at start`),
// one record per table row (workload = the table's ### title, peer = its first column). The
// log's other tables (comparisons written by hand, in many shapes) stay in the history only.
// Prints the records on stdout; `--write` appends the ones not in the results file yet.
//
//   node scripts/bench-import-history.mjs [--write]
import { appendFileSync, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { keyOf, parseJsonl, summarize } from '../benches/node/stats.mjs'

const root = join(fileURLToPath(import.meta.url), '..', '..')
const history = join(root, 'docs', 'benchmarks', 'history.md')
const results = join(root, 'docs', 'benchmarks', 'results.jsonl')

/** The harness header lines and the part each stands for. */
const PARTS = [
  [/^netloop channels vs node:net: (\S+),.*load average ([\d.]+)/, 'channels-vs-net'],
  [/^netloop vs peers: (\S+),.*load average ([\d.]+)/, 'peers'],
  [/^memory per connection: (\S+),.*load average ([\d.]+)/, 'memory'],
  [/^netloop scaling \(worker threads\): (\S+),.*load average ([\d.]+)/, 'scaling'],
]

/** Column titles → metric names (the first that matches). */
const COLUMNS = [
  [/^msg\/s$/, 'msgPerS'],
  [/^req\/s$/, 'reqPerS'],
  [/^MB\/s$/, 'mbPerS'],
  [/^server CPU µs\/msg$/, 'cpuUsPerMsg'],
  [/^server CPU µs\/req/, 'cpuUsPerReq'],
  [/^server CPU µs\/MB$/, 'cpuUsPerMB'],
  [/^deliveries\/msg$/, 'deliveriesPerMsg'],
  [/^(RSS|memory) per connection/i, 'bytesPerConn'],
]

/** `1 234 (1 100–1 300)` or `5.52 (5.29–5.77)` or `1 234`: a summary (n: 3 with a range). */
export function parseCell(cell, rounds) {
  const num = (s) => Number(s.replace(/[\s\u202f,]/g, '').replace(/x$/, ''))
  const m = /^([\d\s.,]+)x?\s*\(([\d\s.,]+)x?[–-]([\d\s.,]+)x?\)/.exec(cell.trim())
  if (m) return { median: num(m[1]), min: num(m[2]), max: num(m[3]), n: rounds }
  const v = num(cell.trim())
  return Number.isFinite(v) && cell.trim() !== '' ? summarize([v]) : undefined
}

export function importHistory(text) {
  const records = []
  let part
  let date
  let load
  let rounds = 3
  let pinned = true
  let workload
  let head
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) part = undefined
    for (const [re, name] of PARTS) {
      const m = re.exec(line)
      if (m) [part, date, load] = [name, m[1], Number(m[2])]
    }
    const r = /^(\d+) round\(s\)|^(\d+) rounds/.exec(line)
    if (r) rounds = Number(r[1] ?? r[2])
    if (/CPU pinning off/.test(line)) pinned = false
    if (/CPU pinning on/.test(line)) pinned = true
    if (line.startsWith('### ')) [workload, head] = [line.slice(4).trim(), undefined]
    if (!part || !line.startsWith('|')) {
      if (!line.startsWith('|')) head = undefined
      continue
    }
    const cells = line.split('|').slice(1, -1).map((c) => c.trim())
    if (!head) {
      head = cells
      continue
    }
    if (cells.every((c) => /^-+$/.test(c)) || head[0] !== 'server') continue
    const metrics = {}
    head.forEach((h, i) => {
      const name = COLUMNS.find(([re]) => re.test(h))?.[1]
      const s = name && parseCell(cells[i], rounds)
      if (s && !metrics[name]) metrics[name] = s
    })
    if (!Object.keys(metrics).length) continue
    // A heading with two tables (e.g. RESP in two settings): the second is `(table 2)`.
    let wl = workload
    for (let k = 2; records.some((x) => x.date === date && x.part === part && x.workload === wl && x.peer === cells[0]); k++) wl = `${workload} (table ${k})`
    records.push({ date, commit: '5892bf2', command: `npm run bench (part ${part}), imported from docs/benchmarks/history.md`, part, workload: wl, peer: cells[0], runtime: 'node 20.20.2', pinned: pinned && !/nothing pinned/.test(workload ?? ''), rounds, load: { loadavg1: load }, published: true, metrics })
  }
  return records
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const records = importHistory(readFileSync(history, 'utf8'))
  if (!process.argv.includes('--write')) {
    for (const r of records) console.log(JSON.stringify(r))
  } else {
    const have = new Set(existsSync(results) ? parseJsonl(readFileSync(results, 'utf8')).map((r) => `${r.date} ${keyOf(r)}`) : [])
    const fresh = records.filter((r) => !have.has(`${r.date} ${keyOf(r)}`))
    appendFileSync(results, fresh.map((r) => `${JSON.stringify(r)}\n`).join(''))
    console.log(`${fresh.length} records appended to docs/benchmarks/results.jsonl (${records.length - fresh.length} already there)`)
  }
}
