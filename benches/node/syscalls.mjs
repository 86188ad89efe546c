// System calls and CPU per message of the netloop servers, node:net / node:http and the C epoll
// floors, at a fixed rate, saturated and in a one-connection ping-pong (issue 38: what the nested
// wake-up of an attached loop costs: libuv's epoll_pwait on mio's epoll fd, then mio's epoll_wait).
//
//   node benches/node/syscalls.mjs [--addon FILE.node] [--only nl-http,node-http,c-http,nl-echo,net-echo,c-echo]
//                                  [--loads rate,sat,pp] [--seconds S] [--rounds N]
//                                  [--echo-rate R] [--http-delay-ms MS] [--json FILE]
//
// Servers (each a fresh process on CPU 0, the load generator on CPU 1, taskset):
//   nl-http    examples/http-hello.ts bundled (benches/node/bundle.mjs), under the metrics preload
//   node-http  benches/node/servers/node-http.mjs          c-http  benches/peers/epoll_http.c
//   nl-echo    benches/node/servers/netloop-echo.mjs       net-echo benches/node/servers/net-echo.mjs
//   c-echo     benches/peers/epoll_echo.c
// Loads: `rate`  HTTP: wrk -t1 -c50 with a Lua `delay()` of --http-delay-ms (5) after each
//                response; echo: echo_load, 50 connections, 64 B, ECHO_LOAD_RATE=--echo-rate (20000)
//        `sat`   the same without the delay / the rate (as fast as the server answers)
//        `pp`    one connection, unpaced (every message is a wake-up of an idle server)
// Per run: 2 s warm-up, then a window of S seconds (default 3) in which only the server's CPU is
// read (utime+stime from /proc/PID/stat and the sum of /proc/PID/task/*/schedstat run time, no
// tracing), then a second window of S seconds under `perf record -e raw_syscalls:sys_enter -p PID`
// (every system call of every thread, with its arguments). Messages per window: the load
// generator's rate (wrk: requests / duration of the whole run, connect ramp included; echo_load:
// msg_per_s), so per-message counts carry about ±10 % at 3 s windows (more at 1 s). The epoll
// waits are split by call: libuv waits with epoll_pwait (in Node 20), mio and the C servers with
// epoll_wait; timeout 0 and blocking calls are counted apart.
//
// Needs perf with access to tracepoints (root, or kernel.perf_event_paranoid <= -1), wrk, cc and
// taskset; 2 CPUs or more. Prints one JSON line per run and a markdown table of medians over the
// rounds (default 1).
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bundleExample } from './bundle.mjs'
import { CLK_TCK, addonUnderTest, markdownTable, median, newer, opt, root } from './harness.mjs'

const { file: addonFile, addonId } = addonUnderTest()
const ONLY = opt('--only', 'c-http,nl-http,node-http,c-echo,nl-echo,net-echo').split(',')
const LOADS = opt('--loads', 'rate,sat,pp').split(',')
const SECONDS = Number(opt('--seconds', 3))
const ROUNDS = Number(opt('--rounds', 1))
const ECHO_RATE = Number(opt('--echo-rate', 20000))
const DELAY_MS = Number(opt('--http-delay-ms', 5))
const JSON_OUT = opt('--json', undefined)

const binDir = join(root, 'target', 'bench-bin')
mkdirSync(binDir, { recursive: true })
const build = (src, name) => {
  const out = join(binDir, name)
  if (newer(join(root, src), out)) execFileSync('cc', ['-O2', '-Wall', '-o', out, join(root, src)], { stdio: 'inherit' })
  return out
}
const echoLoad = build('benches/load/echo_load.c', 'echo_load')
const epollEcho = build('benches/peers/epoll_echo.c', 'epoll_echo')
const epollHttp = build('benches/peers/epoll_http.c', 'epoll_http')
const httpBin = join(binDir, 'http-hello-syscalls.cjs')
if (ONLY.includes('nl-http')) bundleExample(root, join(root, 'examples', 'http-hello.ts'), httpBin)
const work = mkdtempSync(join(tmpdir(), 'netloop-syscalls-'))
const lua = (delay) => {
  const f = join(work, delay ? 'rate.lua' : 'plain.lua')
  writeFileSync(f, `done = function(summary, latency, requests)\n  io.write(string.format("REQS %d DUR %d\\n", summary.requests, summary.duration))\nend\n${delay ? `delay = function()\n  return ${delay}\nend\n` : ''}`)
  return f
}

const servers = join(root, 'benches', 'node', 'servers')
const SERVERS = {
  'nl-http': ['node', ['-r', join(servers, 'netloop-metrics-preload.cjs'), httpBin, '--port', '0']],
  'node-http': ['node', [join(servers, 'node-http.mjs')]],
  'c-http': [epollHttp, ['0']],
  'nl-echo': ['node', [join(servers, 'netloop-echo.mjs')]],
  'net-echo': ['node', [join(servers, 'net-echo.mjs')]],
  'c-echo': [epollEcho, ['0']],
}
// x86_64 system call numbers of the calls these servers make.
const NR = { 0: 'read', 1: 'write', 3: 'close', 7: 'poll', 9: 'mmap', 10: 'mprotect', 11: 'munmap', 13: 'rt_sigaction', 14: 'rt_sigprocmask', 19: 'readv', 20: 'writev', 24: 'sched_yield', 28: 'madvise', 39: 'getpid', 44: 'sendto', 45: 'recvfrom', 46: 'sendmsg', 47: 'recvmsg', 98: 'getrusage', 202: 'futex', 228: 'clock_gettime', 232: 'epoll_wait', 233: 'epoll_ctl', 271: 'ppoll', 281: 'epoll_pwait', 286: 'timerfd_settime', 288: 'accept4', 290: 'eventfd2', 441: 'epoll_pwait2' }

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const procCpu = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return Number(f[11]) + Number(f[12]) // utime, stime (fields 14, 15)
}
const schedNs = (pid) => {
  let s = 0
  for (const t of execFileSync('ls', [`/proc/${pid}/task`], { encoding: 'utf8' }).split('\n').filter(Boolean)) {
    try {
      s += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0])
    } catch {}
  }
  return s
}
const exited = (child) => new Promise((r) => child.once('exit', () => r()))

async function run(name, load) {
  const [cmd, args] = SERVERS[name]
  const server = spawn('taskset', ['-c', '0', cmd === 'node' ? process.execPath : cmd, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  const port = await new Promise((resolve, reject) => {
    let out = ''
    server.stdout.on('data', (d) => {
      out += d
      const m = /(\d+)\s*$/m.exec(out)
      if (m && out.includes('\n')) resolve(Number(m[1]))
    })
    server.once('exit', (c) => reject(new Error(`${name} exited (${c}) before listening`)))
  })
  const pid = server.pid
  const total = 2 + SECONDS + 0.5 + SECONDS + 1
  const conns = load === 'pp' ? 1 : 50
  let loadArgs
  let env = process.env
  if (name.endsWith('http')) {
    loadArgs = ['wrk', '-t1', `-c${conns}`, `-d${Math.ceil(total)}s`, '-s', lua(load === 'rate' ? DELAY_MS : 0), `http://127.0.0.1:${port}/`]
  } else {
    if (load === 'rate') env = { ...process.env, ECHO_LOAD_RATE: String(ECHO_RATE) }
    loadArgs = [echoLoad, '127.0.0.1', String(port), String(conns), '64', String(total - 2), '2', 'echo', String(pid)]
  }
  const client = spawn('taskset', ['-c', '1', ...loadArgs], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let loadOut = ''
  client.stdout.on('data', (d) => (loadOut += d))
  const clientDone = exited(client)
  await sleep(2000)
  const c0 = procCpu(pid)
  const n0 = schedNs(pid)
  const t0 = process.hrtime.bigint()
  await sleep(SECONDS * 1000)
  const c1 = procCpu(pid)
  const n1 = schedNs(pid)
  const secs = Number(process.hrtime.bigint() - t0) / 1e9
  await sleep(500)
  const data = join(work, `${name}-${load}.data`)
  execFileSync('perf', ['record', '-q', '-o', data, '-e', 'raw_syscalls:sys_enter', '-p', String(pid), '--', 'sleep', String(SECONDS)], { stdio: ['ignore', 'ignore', 'ignore'] })
  await clientDone
  server.kill('SIGTERM')
  await exited(server)
  const trace = execFileSync('perf', ['script', '-i', data, '-F', 'tid,trace'], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] })
  rmSync(data)
  const m = /REQS (\d+) DUR (\d+)/.exec(loadOut)
  const rate = m ? Number(m[1]) / (Number(m[2]) / 1e6) : JSON.parse(loadOut.trim().split('\n').pop()).msg_per_s
  const msgs = rate * SECONDS
  const kinds = {}
  let all = 0
  for (const line of trace.split('\n')) {
    const x = /^\s*\d+\s+NR (\d+) \(([^)]*)\)/.exec(line)
    if (!x) continue
    all++
    let k = NR[x[1]] ?? `nr${x[1]}`
    if (k.startsWith('epoll_wait') || k.startsWith('epoll_pwait')) k += BigInt.asIntN(32, BigInt(`0x${x[2].split(',')[3].trim()}`)) === 0n ? ' t=0' : ' block'
    kinds[k] = (kinds[k] ?? 0) + 1
  }
  const per = (v) => Number((v / msgs).toFixed(3))
  return {
    server: name,
    load,
    msg_per_s: Math.round(rate),
    cpu_us_per_msg: Number(((c1 - c0) / CLK_TCK / secs / rate * 1e6).toFixed(2)),
    sched_us_per_msg: Number(((n1 - n0) / 1e9 / secs / rate * 1e6).toFixed(2)),
    syscalls_per_msg: per(all),
    by_kind: Object.fromEntries(Object.entries(kinds).sort((p, q) => q[1] - p[1]).map(([k, v]) => [k, per(v)])),
  }
}

const id = addonId()
console.log(`addon ${addonFile}: ${id.size} bytes, ${id.mtime}, sha256 ${id.sha256}; node ${process.version}; ${SECONDS} s windows, ${ROUNDS} round(s)`)
const results = []
for (let r = 0; r < ROUNDS; r++) {
  for (const load of LOADS) {
    for (const name of ONLY) {
      const res = await run(name, load)
      results.push(res)
      console.log(JSON.stringify(res))
    }
  }
}
rmSync(work, { recursive: true, force: true })
if (JSON_OUT) writeFileSync(JSON_OUT, `${results.map((x) => JSON.stringify(x)).join('\n')}\n`)
const k = (x, name) => x.by_kind[name] ?? 0
const rows = []
for (const load of LOADS) {
  for (const name of ONLY) {
    const rs = results.filter((x) => x.server === name && x.load === load)
    const med = (f) => median(rs.map(f)).toFixed(2)
    rows.push({
      load,
      server: name,
      'msg/s': Math.round(median(rs.map((x) => x.msg_per_s))),
      'CPU µs/msg': med((x) => x.cpu_us_per_msg),
      'run µs/msg (schedstat)': med((x) => x.sched_us_per_msg),
      'syscalls/msg': med((x) => x.syscalls_per_msg),
      'epoll_pwait (libuv) t=0 / block': `${med((x) => k(x, 'epoll_pwait t=0'))} / ${med((x) => k(x, 'epoll_pwait block'))}`,
      'epoll_wait (mio; C) t=0 / block': `${med((x) => k(x, 'epoll_wait t=0'))} / ${med((x) => k(x, 'epoll_wait block'))}`,
      'recv+read': med((x) => k(x, 'recvfrom') + k(x, 'read') + k(x, 'readv') + k(x, 'recvmsg')),
      'send+write': med((x) => k(x, 'sendto') + k(x, 'write') + k(x, 'writev') + k(x, 'sendmsg')),
      futex: med((x) => k(x, 'futex')),
    })
  }
}
console.log(`\n${markdownTable(rows)}`)
