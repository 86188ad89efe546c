// wrk for the HTTP workloads (channels-vs-net.mjs over plain TCP, tls.mjs over TLS): the Lua
// scripts that make wrk print one JSON summary line, and one wrk invocation with its client CPU.
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CLK_TCK } from './harness.mjs'

/**
 * Writes the scripts into `dir`: `plain` (the summary line), `rate` (the same, each connection
 * waiting `delayMs` after every response: the same low load to every server) and `pipeline`
 * (each connection sends `pipeline` GETs in one write and waits for their responses, as wrk's
 * pipeline example; wrk counts each response as a request). Returns their paths.
 */
export function writeWrkScripts(dir, { delayMs = 5, pipeline = 16 } = {}) {
  const plain = join(dir, 'wrk-json.lua')
  writeFileSync(
    plain,
    `-- Written by benches/node/wrk.mjs: one JSON line with wrk's summary.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"wrk":{"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`,
  )
  const summary = readFileSync(plain, 'utf8')
  const rate = join(dir, 'wrk-json-rate.lua')
  writeFileSync(rate, `${summary}delay = function()\n  return ${delayMs}\nend\n`)
  const piped = join(dir, 'wrk-json-pipeline.lua')
  writeFileSync(
    piped,
    `${summary}init = function(args)\n  local r = {}\n  for i = 1, ${pipeline} do r[i] = wrk.format(nil, '/') end\n  req = table.concat(r)\nend\nrequest = function()\n  return req\nend\n`,
  )
  return { plain, rate, pipeline: piped }
}

/**
 * One wrk invocation (`wrk -t 1 -c conns -d seconds --latency -s script url`, pinned to `cpu`
 * when given): wrk's JSON summary, its text report, the wall time and the client's CPU seconds.
 * Throws when wrk fails or reports any socket error, timeout or non-2xx/3xx response.
 */
export function wrk({ url, conns, seconds, cpu, script }) {
  const w = `wrk -t 1 -c ${conns} -d ${seconds}s --latency -s '${script}' ${url}`
  const cmd = `${cpu === undefined ? '' : `taskset -c ${cpu} `}${w}; rc=$?; cat /proc/$$/stat; exit $rc`
  const t0 = process.hrtime.bigint()
  const r = spawnSync('sh', ['-c', cmd], { encoding: 'utf8' })
  const wall = Number(process.hrtime.bigint() - t0) / 1e9
  if (r.status !== 0) throw new Error(`wrk failed (${r.status}): ${r.stderr}${r.stdout}`)
  const lines = r.stdout.trim().split('\n')
  const stat = lines.pop()
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const clientS = (Number(f[13]) + Number(f[14])) / CLK_TCK // cutime + cstime: the reaped wrk
  const json = lines.find((l) => l.startsWith('{"wrk"'))
  if (!json) throw new Error(`wrk printed no summary: ${r.stdout}`)
  const s = JSON.parse(json).wrk
  const text = lines.filter((l) => !l.startsWith('{"wrk"')).join('\n')
  const errors = s.connect + s.read + s.write + s.timeout + s.status
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(text)
  if (errors > 0 || non2xx || s.requests === 0) {
    throw new Error(`wrk reported errors against ${url} (connect ${s.connect}, read ${s.read}, write ${s.write}, timeout ${s.timeout}, status>399 ${s.status}${non2xx ? `, non-2xx/3xx ${non2xx[1]}` : ''}, ${s.requests} requests):\n${text}`)
  }
  return { ...s, wall, clientS, text }
}
