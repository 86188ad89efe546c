// The results-file records (benches/node/stats.mjs: one JSON line per workload and server) of a
// channels-vs-net run, made from the raw JSON the harness writes (`results.runs`): the echo and
// line workloads, each RESP test, and the HTTP hello saturated, at a fixed rate and pipelined.
//
//   node benches/node/channels-records.mjs RAW.json [--commit C] [--command TEXT] > run.jsonl
//
// channels-vs-net.mjs calls `channelsRecords` itself for --jsonl; the command line converts a run
// kept only as raw JSON. The records are unpublished; `scripts/bench-compare.mjs --new run.jsonl`
// compares them with the last published ones and `--publish run.jsonl` appends them.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { summarize } from './stats.mjs'

const ECHO_TITLES = {
  'echo-1': '64 B echo, 1 connection',
  'echo-50': '64 B echo, 50 connections',
  'lines-50': '64 B line request/response (63 bytes + \\n), 50 connections',
}

/** The servers of a list of rounds (each round: { [server]: run }), in first-seen order. */
const serversOf = (rounds) => [...new Set(rounds.flatMap((round) => Object.keys(round)))]

/** `pick(run)` for each round that ran `server`, summarized; undefined when no round has a number. */
function across(rounds, server, pick) {
  const xs = rounds.map((round) => (round[server] ? pick(round[server]) : undefined)).filter(Number.isFinite)
  return xs.length ? summarize(xs) : undefined
}

/** Drops the metrics no round measured. */
const defined = (metrics) => Object.fromEntries(Object.entries(metrics).filter(([, v]) => v !== undefined))

/**
 * The records of one run: `{ workload, peer, pinned, rounds, metrics }` each; the caller adds the
 * date, commit, command and load.
 */
export function channelsRecords(runs, { pinned = true } = {}) {
  const records = []
  const push = (workload, peer, rounds, metrics) => {
    const m = defined(metrics)
    if (Object.keys(m).length) records.push({ workload, peer, pinned, rounds: rounds.length, metrics: m })
  }
  for (const [key, title] of Object.entries(ECHO_TITLES)) {
    const rounds = runs[key]
    if (!rounds) continue
    for (const s of serversOf(rounds)) {
      push(title, s, rounds, {
        msgPerS: across(rounds, s, (x) => x.msgPerS),
        cpuUsPerMsg: across(rounds, s, (x) => x.serverCpuUsPerMsg),
        crossingsPerMsg: across(rounds, s, (x) => x.deliveriesPerMsg),
      })
    }
  }
  if (runs.resp) {
    const rounds = runs.resp
    for (const s of serversOf(rounds)) {
      const tests = new Set(rounds.flatMap((round) => Object.keys(round[s]?.tests ?? {})))
      for (const test of tests) {
        push(`RESP ${test}`, s, rounds, {
          reqPerS: across(rounds, s, (x) => x.tests?.[test]?.rps),
          cpuUsPerReq: across(rounds, s, (x) => x.tests?.[test]?.serverCpuUsPerReq),
          crossingsPerMsg: across(rounds, s, (x) => x.tests?.[test]?.deliveriesPerReq),
        })
      }
    }
  }
  if (runs.http) {
    const rounds = runs.http
    for (const s of serversOf(rounds)) {
      push('HTTP/1.1 hello (wrk)', s, rounds, {
        reqPerS: across(rounds, s, (x) => x.rps),
        cpuUsPerReq: across(rounds, s, (x) => x.serverCpuUsPerReq),
        userUsPerMsg: across(rounds, s, (x) => x.serverUserUsPerReq),
        crossingsPerMsg: across(rounds, s, (x) => x.deliveriesPerReq),
      })
      // At a fixed rate the throughput is the schedule's: only the cost is a figure of merit.
      push('HTTP/1.1 hello (wrk), fixed rate', s, rounds, {
        achievedPerS: across(rounds, s, (x) => x.fixedRps),
        cpuUsPerReq: across(rounds, s, (x) => x.fixedCpuUsPerReq),
      })
      push('HTTP/1.1 hello (wrk), pipelined', s, rounds, {
        reqPerS: across(rounds, s, (x) => x.pipedRps),
        cpuUsPerReq: across(rounds, s, (x) => x.pipedCpuUsPerReq),
      })
    }
  }
  return records
}

/** One JSON line per record, with the run's date, commit, command and load. */
export function toJsonl(records, { date, commit, command, load, runtime, host }) {
  const line = (r) => {
    // A `(Node 24)` row ran on that Node, not the harness's.
    const rt = /\(Node \d+\)/.test(r.peer) ? undefined : runtime
    return `${JSON.stringify({ date, commit, command, part: 'channels-vs-net', ...r, runtime: rt, load, host, published: false })}\n`
  }
  return records.map(line).join('')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2)
  const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback)
  const raw = JSON.parse(readFileSync(argv[0], 'utf8'))
  const started = /: (\d{4}-\d\d-\d\dT[\d:.]+Z),/.exec(raw.header?.[0] ?? '')?.[1]
  const load1 = Number(/load average ([\d.]+)/.exec(raw.header?.[0] ?? '')?.[1])
  const pinned = !/CPU pinning off/.test(raw.header?.join('\n') ?? '')
  const node = /node (v[\d.]+)/.exec(raw.header?.[0] ?? '')?.[1]
  process.stdout.write(
    toJsonl(channelsRecords(raw.runs, { pinned }), {
      date: started,
      commit: opt('--commit', undefined),
      command: opt('--command', 'node benches/node/channels-vs-net.mjs'),
      load: Number.isFinite(load1) ? { loadavg1: load1 } : undefined,
      runtime: node ? `node ${node.slice(1)}` : undefined,
    }),
  )
}
