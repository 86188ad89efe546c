// What channel.toDuplex() costs (issue 19): a 64 B echo over `ch.toDuplex()` (the stream's
// 'data' handler writes back) against the same echo as a channel handler and against node:net,
// and the channel echo with a subscriber on every netloop diagnostics channel (which publish
// per connection, not per message: the line shows that a subscriber costs nothing per message),
// and the channel echo with a subscriber on the netloop:handler TracingChannel (start and end
// around every handler call: what tracing each message costs).
//
//   node benches/node/duplex.mjs [--quick] [--runs N] [--seconds S] [--only echo-1,echo-50]
//                                [--no-pin] [--quiet-wait SECONDS] [--addon FILE.node]
//
// Load: benches/load/echo_load.c (built as peers.mjs builds it). echo-1: 1 connection, server
// and client on CPU 0; echo-50: 50 connections, server CPU 0, client CPU 1. Every run starts a
// fresh server (compiled index.js, no tsx); the targets alternate within a round. Reported:
// medians over the rounds with min–max, server CPU per message, and the ratios to node:net
// taken per round. --quick: 3 rounds of 1.5 s after 0.5 s of warm-up (default 5 of 3 s after 1 s).
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { addonUnderTest, alternating, flag, fmt, inRounds, median, opt, root, spread, waitForQuiet } from './harness.mjs'
import { buildLoad } from '../peers/servers.mjs'

const quick = flag('--quick')
const RUNS = Number(opt('--runs', quick ? 3 : 5))
const SECONDS = Number(opt('--seconds', quick ? 1.5 : 3))
const WARMUP = quick ? 0.5 : 1
const ONLY = opt('--only', 'echo-1,echo-50').split(',')
const PIN = !flag('--no-pin') && cpus().length >= 2
const QUIET_WAIT_S = Number(opt('--quiet-wait', quick ? 3 : 60))
const { addonId } = addonUnderTest()

const servers = join(root, 'benches', 'node', 'servers')
const TARGETS = {
  'node:net': [join(servers, 'net-echo.mjs')],
  'netloop channel handler': [join(servers, 'netloop-interop-echo.mjs'), '--channel'],
  'netloop channel handler, diagnostics subscribed': [join(servers, 'netloop-interop-echo.mjs'), '--channel', '--subscribed'],
  'netloop channel handler, netloop:handler traced': [join(servers, 'netloop-interop-echo.mjs'), '--channel', '--traced'],
  'netloop toDuplex()': [join(servers, 'netloop-interop-echo.mjs'), '--duplex'],
}
const WORKLOADS = {
  'echo-1': { title: '64 B echo, 1 connection', conns: 1, pin: [0, 0] },
  'echo-50': { title: '64 B echo, 50 connections', conns: 50, pin: [0, 1] },
}

const loadBin = buildLoad('echo_load')

function startServer(name, cpu) {
  const args = TARGETS[name]
  const child = cpu === undefined ? spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] }) : spawn('taskset', ['-c', String(cpu), process.execPath, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /^(\d+)\n/.exec(out)
      if (m) resolve({ pid: child.pid, port: Number(m[1]), stop: async () => (child.kill('SIGTERM'), await exited, err) })
    })
    exited.then((how) => reject(new Error(`${name} exited before listening: ${JSON.stringify(how)} ${err}`)))
  })
}

async function run(name, w) {
  waitForQuiet(QUIET_WAIT_S)
  const [scpu, ccpu] = PIN ? w.pin : [undefined, undefined]
  const server = await startServer(name, scpu)
  const args = ['127.0.0.1', String(server.port), String(w.conns), '64', String(SECONDS), String(WARMUP), 'echo', String(server.pid)]
  const r = spawnSync(ccpu === undefined ? loadBin : 'taskset', ccpu === undefined ? args : ['-c', String(ccpu), loadBin, ...args], { encoding: 'utf8' })
  const err = await server.stop()
  if (r.status !== 0) throw new Error(`echo_load against ${name} failed (${r.status}): ${r.stderr} ${err}`)
  const c = JSON.parse(r.stdout)
  const serverS = c.server_cpu_ticks / c.clock_ticks_per_s
  return { msgPerS: c.msg_per_s, p50: c.p50_us, p99: c.p99_us, cpuUsPerMsg: (serverS * 1e6) / c.messages, diagnostics: /diagnostics events seen: (\d+)/.exec(err)?.[1], traced: /handler trace events seen: (\d+)/.exec(err)?.[1] }
}

const names = Object.keys(TARGETS)
console.log(`# toDuplex() echo against a channel handler and node:net (${quick ? 'quick, ' : ''}${RUNS} rounds of ${SECONDS} s)\n`)
console.log(`addon: ${JSON.stringify(addonId())}; node ${process.version}; ${cpus().length} CPUs (${cpus()[0].model})\n`)
for (const key of ONLY) {
  const w = WORKLOADS[key]
  const rounds = await inRounds(RUNS, alternating(names), (t) => run(t, w), (r, t, x) => `${key} round ${r + 1} ${t}: ${fmt(x.msgPerS)} msg/s, ${fmt(x.cpuUsPerMsg, 2)} µs CPU/msg`)
  console.log(`## ${w.title}\n\nClient: \`${PIN ? `taskset -c ${w.pin[1]} ` : ''}echo_load 127.0.0.1 PORT ${w.conns} 64 ${SECONDS} ${WARMUP} echo SERVER_PID\`; servers ${PIN ? `on CPU ${w.pin[0]}` : 'unpinned'}.\n`)
  console.log('| server | msg/s | p50 µs | p99 µs | server CPU µs/msg | msg/s vs node:net | CPU/msg vs node:net |')
  console.log('| --- | --- | --- | --- | --- | --- | --- |')
  for (const t of names) {
    const col = (k) => rounds.map((round) => round[t][k])
    const ratio = (k) => (t === 'node:net' ? '1' : spread(rounds.map((round) => round[t][k] / round['node:net'][k]), 2, 'x'))
    console.log(`| ${t} | ${spread(col('msgPerS'))} | ${fmt(median(col('p50')))} | ${fmt(median(col('p99')))} | ${spread(col('cpuUsPerMsg'), 2)} | ${ratio('msgPerS')} | ${ratio('cpuUsPerMsg')} |`)
  }
  const seen = rounds.map((round) => round['netloop channel handler, diagnostics subscribed'].diagnostics).filter(Boolean)
  console.log(`\nDiagnostics events the subscribed server saw per run: ${seen.join(', ') || '–'} (server.listen once, then server.socket and channel.close per connection: nothing per message).\n`)
  const traced = rounds.map((round) => round['netloop channel handler, netloop:handler traced'].traced).filter(Boolean)
  console.log(`netloop:handler events the traced server saw per run: ${traced.join(', ') || '–'} (start and end per handler call).\n`)
}
