// The regression check of the benchmark results (issue 38): compares runs with the last
// published one, per workload and peer, and flags every figure that got worse by more than the
// run-to-run spread (benches/node/stats.mjs, compareRecords: the larger relative min–max
// spread of the two runs, at least 3 %; 10 % for a single round).
//
//   node scripts/bench-compare.mjs                     the newest run of each workload/peer in
//                                                      docs/benchmarks/results.jsonl against the
//                                                      last published run before it
//   node scripts/bench-compare.mjs --new FILE.jsonl    the records of FILE (e.g. what
//                                                      `node benches/node/ws.mjs` wrote) against
//                                                      the last published ones
//   [--relative-to PEER]                               compare ratios to PEER measured in the
//                                                      same run (e.g. "C epoll", "ws (Node 20)")
//                                                      instead of absolute figures, which drift
//                                                      with the machine from day to day
//   [--file RESULTS.jsonl] [--check]                   --check: exit 1 when a figure regressed
//   node scripts/bench-compare.mjs --publish FILE.jsonl  appends FILE's records to the results
//                                                      file as published (after comparing them):
//                                                      the figures docs/benchmarks.md now shows
//
// Runs are compared only with runs of the same pinning (pinned and unpinned runs are different
// regimes). Prints one markdown table; regressions in bold. The `host` column says whether the
// two runs measured the same machine (records carry `host` since 2026-12-07): on another host
// even ratios to a C floor move, as the kernel's share of a message does.
import { appendFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compareRecords, keyOf, latestAndPublished, parseJsonl, relativeTo } from '../benches/node/stats.mjs'

const root = join(fileURLToPath(import.meta.url), '..', '..')
const argv = process.argv.slice(2)
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback)

export function compareFiles(resultsText, newText, { relative } = {}) {
  const rel = (rs) => (relative ? relativeTo(rs, relative) : rs)
  const all = rel(parseJsonl(resultsText))
  let current
  let baseline
  if (newText !== undefined) {
    current = rel(parseJsonl(newText))
    const published = new Map()
    for (const r of all) if (r.published) published.set(`${keyOf(r)}|${r.pinned !== false}`, r)
    baseline = current.map((r) => published.get(`${keyOf(r)}|${r.pinned !== false}`)).filter(Boolean)
  } else {
    const { newest, published } = latestAndPublished(all)
    current = [...newest.values()].filter((r) => published.has(keyOf(r)) && published.get(keyOf(r)).pinned === r.pinned)
    baseline = current.map((r) => published.get(keyOf(r)))
  }
  return compareRecords(baseline, current)
}

function main() {
  const file = opt('--file', join(root, 'docs', 'benchmarks', 'results.jsonl'))
  const publish = opt('--publish', undefined)
  const newFile = opt('--new', publish)
  const relative = opt('--relative-to', undefined)
  const rows = compareFiles(readFileSync(file, 'utf8'), newFile ? readFileSync(newFile, 'utf8') : undefined, { relative })
  if (publish) {
    const records = parseJsonl(readFileSync(publish, 'utf8')).map((r) => ({ ...r, published: true }))
    appendFileSync(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''))
    console.log(`${records.length} records of ${publish} appended to ${file} as published`)
  }
  if (!rows.length) {
    console.log('nothing to compare: no run has a published run of the same workload, peer and pinning before it')
    return
  }
  const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`
  const num = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3))
  console.log('| workload / peer | figure | published | now | worse by | allowed (spread) | host | |')
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const r of rows) {
    const flag = r.regression ? '**regression**' : r.change < -r.allowed ? 'better' : 'within spread'
    console.log(`| ${r.key} | ${r.metric} | ${num(r.before)} | ${num(r.after)} | ${pct(r.change)} | ${pct(r.allowed)} | ${r.host} | ${flag} |`)
  }
  const bad = rows.filter((r) => r.regression)
  console.log(`\n${rows.length} figures compared, ${bad.length} regression(s)`)
  const elsewhere = rows.filter((r) => r.host !== 'same').length
  if (elsewhere) console.log(`${elsewhere} of them against a run on another or an unknown host: compare ratios (--relative-to), and read even those with care`)
  if (bad.length && argv.includes('--check')) process.exitCode = 1
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main()
