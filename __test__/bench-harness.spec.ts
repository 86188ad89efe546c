// The pure parts of the benchmark harness (benches/node/stats.mjs, scripts/bench-*.mjs): the
// rounds' summaries, the regression check against the last published run, ratios to a peer of
// the same run, the history's import and the chart; and the binding's count of calls into JS
// that the harness divides by messages. No benchmark runs here.
import os from 'node:os'

import test from 'ava'

import * as native from '../native'
import { loopFor, netClient, pingPong, serve } from './channel-helpers'

const stats = () => import('../benches/node/stats.mjs')

const rec = (peer: string, date: string, metrics: Record<string, number[]>, extra: object = {}) => ({
  date,
  part: 'ws',
  workload: 'echo-50',
  peer,
  pinned: true,
  published: false,
  ...extra,
  metrics: Object.fromEntries(Object.entries(metrics).map(([k, xs]) => [k, { median: [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)], min: Math.min(...xs), max: Math.max(...xs), n: xs.length }])),
})

test('a summary gives the median, min–max and quartiles of the rounds, leaving out failed ones', async (t) => {
  const { summarize, fmtSummary } = await stats()
  const s = summarize([3, 1, NaN, 2, 10])
  t.deepEqual(s, { median: 2.5, min: 1, max: 10, q1: 1.75, q3: 4.75, n: 4 })
  t.is(fmtSummary(summarize([1000, 2000, 3000])), '2 000 (1 000–3 000)')
  t.is(fmtSummary(summarize([5.5]), 2), '5.50')
  t.is(summarize([]).n, 0)
})

test('the regression check flags a figure worse than the published one beyond the spread, in the metric’s direction', async (t) => {
  const { compareRecords } = await stats()
  const base = [rec('netloop', 'a', { msgPerS: [100, 102, 104], cpuUsPerMsg: [5.0, 5.1, 5.2] })]
  // 4 % spread allowed: 10 % fewer messages and 20 % more CPU are regressions.
  const worse = compareRecords(base, [rec('netloop', 'b', { msgPerS: [90, 92, 93], cpuUsPerMsg: [6.0, 6.1, 6.2] })])
  t.deepEqual(
    worse.map((r: { metric: string; regression: boolean }) => [r.metric, r.regression]),
    [
      ['msgPerS', true],
      ['cpuUsPerMsg', true],
    ],
  )
  // Better figures, and a 2 % move inside a 4 % spread, are not.
  const fine = compareRecords(base, [rec('netloop', 'b', { msgPerS: [110, 112, 114], cpuUsPerMsg: [5.1, 5.2, 5.3] })])
  t.true(fine.every((r: { regression: boolean }) => !r.regression))
  // A wide spread in the new run widens what is allowed.
  const noisy = compareRecords(base, [rec('netloop', 'b', { msgPerS: [60, 92, 130] })])
  t.false(noisy[0].regression)
})

test('the newest run of each peer is compared with the last published run before it', async (t) => {
  const { latestAndPublished } = await stats()
  const rs = [rec('x', '2026-01-01', { msgPerS: [1] }, { published: true }), rec('x', '2026-01-02', { msgPerS: [2] }, { published: true }), rec('x', '2026-01-03', { msgPerS: [3] })]
  const { newest, published } = latestAndPublished(rs)
  t.is(newest.get('ws/echo-50/x').date, '2026-01-03')
  t.is(published.get('ws/echo-50/x').date, '2026-01-02')
})

test('ratios to a peer of the same run cancel a machine that got slower as a whole', async (t) => {
  const { relativeTo, compareRecords } = await stats()
  const day1 = [rec('C', 'd1', { cpuUsPerMsg: [5, 5, 5] }), rec('ts', 'd1', { cpuUsPerMsg: [7, 7, 7] })]
  const day2 = [rec('C', 'd2', { cpuUsPerMsg: [6.5, 6.5, 6.5] }), rec('ts', 'd2', { cpuUsPerMsg: [9.1, 9.1, 9.1] })]
  t.true(compareRecords(day1, day2).some((r: { regression: boolean }) => r.regression))
  const rel1 = relativeTo(day1, 'C')
  const rel2 = relativeTo(day2, 'C')
  t.deepEqual(
    rel1.map((r: { peer: string }) => r.peer),
    ['ts ÷ C'],
  )
  t.is(rel1[0].metrics.cpuUsPerMsg.median, 1.4)
  t.false(compareRecords(rel1, rel2)[0].regression)
})

test('the compare script reads JSON lines and compares a new file with the published runs', async (t) => {
  const { compareFiles } = await import('../scripts/bench-compare.mjs')
  const published = JSON.stringify(rec('p', '2026-01-01', { msgPerS: [100, 100, 100] }, { published: true }))
  const rows = compareFiles(`// comment\n${published}\n`, `${JSON.stringify(rec('p', '2026-02-01', { msgPerS: [50, 50, 50] }))}\n`)
  t.is(rows.length, 1)
  t.true(rows[0].regression)
  t.deepEqual(compareFiles(`${published}\n`, ''), [])
})

test('a comparison says whether the two runs measured the same host', async (t) => {
  const { compareRecords } = await stats()
  const host = { cpu: 'GenuineIntel, 6/207/2, Xeon, 2300 MHz', cores: 2, kernel: '6.18', clocksource: 'tsc' }
  const base = [rec('p', 'd1', { cpuUsPerMsg: [5, 5, 5] }, { host })]
  const same = compareRecords(base, [rec('p', 'd2', { cpuUsPerMsg: [5, 5, 5] }, { host: { ...host } })])
  const moved = compareRecords(base, [rec('p', 'd2', { cpuUsPerMsg: [5, 5, 5] }, { host: { ...host, cpu: 'AuthenticAMD, 25/1/1, EPYC' } })])
  const unknown = compareRecords([rec('p', 'd1', { cpuUsPerMsg: [5, 5, 5] })], [rec('p', 'd2', { cpuUsPerMsg: [5, 5, 5] }, { host })])
  t.deepEqual([same[0].host, moved[0].host, unknown[0].host], ['same', 'other', 'unknown'])
})

test('the harness describes its host beyond the CPU model name', async (t) => {
  const { hostOf } = await import('../benches/node/harness.mjs')
  const h = hostOf()
  t.is(h.cores, os.cpus().length)
  t.is(h.kernel, os.release())
  // vendor and family/model/stepping where /proc/cpuinfo has them (x86 here)
  if (process.arch === 'x64') t.regex(h.cpu, /\d+\/\d+\/\d+/)
})

test('the history import turns a harness table into records with median and range', async (t) => {
  const { importHistory, parseCell } = await import('../scripts/bench-import-history.mjs')
  t.deepEqual(parseCell('179 241 (171 684–188 139)', 3), { median: 179241, min: 171684, max: 188139, n: 3 })
  const md = [
    'netloop vs peers: 2026-11-23T17:23:43.086Z, node v20.20.2, 2 CPUs, load average 1.49 at start  ',
    '2 round(s), 2 s measured, CPU pinning on  ',
    '',
    '### 64 B echo, 50 connections',
    '',
    '| server | msg/s | server CPU µs/msg |',
    '| --- | --- | --- |',
    '| C epoll | 188 468 (179 639–197 296) | 5.21 (4.97–5.46) |',
  ].join('\n')
  const [r] = importHistory(md)
  t.like(r, { part: 'peers', workload: '64 B echo, 50 connections', peer: 'C epoll', rounds: 2, pinned: true, published: true })
  t.deepEqual(r.metrics.cpuUsPerMsg, { median: 5.21, min: 4.97, max: 5.46, n: 2 })
})

test('a channels-vs-net run becomes one record per workload and server: RESP per test, HTTP saturated, at a fixed rate and pipelined', async (t) => {
  const { channelsRecords, toJsonl } = await import('../benches/node/channels-records.mjs')
  const http = (rps: number, cpu: number) => ({ rps, serverCpuUsPerReq: cpu, fixedRps: 9000, fixedCpuUsPerReq: cpu * 2, pipedRps: rps * 8, pipedCpuUsPerReq: cpu / 8 })
  const runs = {
    resp: [{ redis: { tests: { 'GET -P 16': { rps: 100, serverCpuUsPerReq: 1 } } } }, { redis: { tests: { 'GET -P 16': { rps: 300, serverCpuUsPerReq: 3 } } } }],
    http: [{ netloop: http(100, 8), floor: http(120, 7) }, { netloop: http(110, 9) }],
  }
  const records = channelsRecords(runs)
  t.deepEqual(
    records.map((r: { workload: string; peer: string }) => `${r.workload}/${r.peer}`),
    ['RESP GET -P 16/redis', ...['netloop', 'floor'].flatMap((p) => ['', ', fixed rate', ', pipelined'].map((w) => `HTTP/1.1 hello (wrk)${w}/${p}`))],
  )
  t.like(records[0].metrics.cpuUsPerReq, { median: 2, min: 1, max: 3, n: 2 })
  t.like(records[1].metrics, { reqPerS: { median: 105, n: 2 }, cpuUsPerReq: { min: 8, max: 9 } })
  t.is(records[4].metrics.cpuUsPerReq.n, 1)
  const [line] = toJsonl(records, { date: 'd', commit: 'c', command: 'x', load: undefined, runtime: 'node 20' }).split('\n')
  t.like(JSON.parse(line), { part: 'channels-vs-net', published: false, pinned: true, runtime: 'node 20' })
})

test('the chart draws one bar per peer and metric of the newest run of each workload', async (t) => {
  const { chart, latestRuns } = await import('../scripts/bench-chart.mjs')
  const runs = latestRuns([rec('old', '2026-01-01', { msgPerS: [1] }), rec('netloop JS', '2026-01-02', { msgPerS: [10, 12, 14], cpuUsPerMsg: [4, 5, 6] }), rec('ws', '2026-01-02', { msgPerS: [5, 6, 7], cpuUsPerMsg: [8, 9, 10] })])
  t.is(runs.length, 1)
  const svg = chart(runs, 'test')
  t.true(svg.startsWith('<svg'))
  t.regex(svg, /netloop JS/)
  t.notRegex(svg, />old</)
  t.is((svg.match(/<rect x=/g) ?? []).length, 4)
})

// A profile in callgrind's format as `--dump-instr=no` writes it: compressed names, a call
// (whose inclusive cost line is the callee's, counted in its own block) and relative positions.
const CALLGRIND = `# callgrind format
version: 1
positions: line
events: Ir
summary: 1000

ob=(1) /x/netloop.linux-x64-gnu.node
fl=(1) src/a.rs
fn=(1) decode
10 300
+2 100
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfn=(2) memcpy
calls=4 0
12 5000
ob=(2)
fn=(2)
0 50
ob=(3) ???
fn=(3) 0x0000000000001010
0 400
fn=(4) 0x0000000000002000
* 150
totals: 1000
`

test('a callgrind profile gives its self instructions by object and function, calls not counted twice', async (t) => {
  const { parseCallgrind } = await import('../benches/node/callgrind.mjs')
  const p = parseCallgrind(CALLGRIND)
  t.is(p.total, 1000)
  t.deepEqual([...p.byObject], [['/x/netloop.linux-x64-gnu.node', 400], ['???', 550], ['/usr/lib/x86_64-linux-gnu/libc.so.6', 50]].sort((a, b) => (b[1] as number) - (a[1] as number)))
  t.is(p.byFunction.get('/x/netloop.linux-x64-gnu.node\tdecode'), 400)
  t.is(p.byFunction.get('/usr/lib/x86_64-linux-gnu/libc.so.6\tmemcpy'), 50)
})

test('instructions a request are summed by kind of object, JIT code named by V8’s perf map', async (t) => {
  const { parseCallgrind, perfMap, perRequest } = await import('../benches/node/callgrind.mjs')
  const jitName = perfMap('1000 20 JS:*dispatch hub-delivery.js:73\n3000 10 JS:*op op-stream.js:105\n')
  t.is(jitName(0x1010), 'JS:*dispatch hub-delivery.js:73')
  t.is(jitName(0x1020), undefined)
  t.is(jitName(0x3009), 'JS:*op op-stream.js:105')
  const r = perRequest(parseCallgrind(CALLGRIND), 10, { jitName, top: 3 })
  t.is(r.total, 100)
  t.deepEqual(
    r.byKind.map((k: { kind: string; perRequest: number }) => [k.kind, k.perRequest]),
    [['JIT code', 55], ['addon', 40], ['libc', 5]],
  )
  t.deepEqual(
    r.top.map((f: { kind: string; name: string; perRequest: number }) => [f.kind, f.name, f.perRequest]),
    [['addon', 'decode', 40], ['JIT code', 'JS:*dispatch hub-delivery.js:73', 40], ['JIT code', 'JIT code (unnamed)', 15]],
  )
})

test('jsCrossings counts the calls into JS: at least one per delivery of an echo', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('echo', { channelRead: (ctx, m) => ctx.writeAndFlush(m) }))
  const s = await netClient(t, port)
  await pingPong(s, 5)
  const before = native.jsCrossings()
  const m0 = loop.metrics()
  await pingPong(s, 50)
  const crossed = native.jsCrossings() - before
  const deliveries = loop.metrics().deliveries - m0.deliveries
  t.true(deliveries >= 50, `${deliveries} deliveries for 50 ping-pongs`)
  t.true(crossed >= deliveries, `${crossed} calls into JS for ${deliveries} deliveries`)
})
