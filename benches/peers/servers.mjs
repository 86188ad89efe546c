// The echo servers that benches/node/peers.mjs and benches/node/memory.mjs put side by side,
// how each is built (on demand: only when its sources are newer than what was built) and how
// each is started. Every server binds 127.0.0.1 on a port the kernel picks and prints it.
//
//   C epoll          benches/peers/epoll_echo.c, cc -O2 → target/peers/epoll_echo
//   tokio            benches/peers/tokio-echo (its own workspace), current_thread runtime
//                    → target/peers/release/tokio-echo
//   Netty            benches/peers/netty/NettyEcho.java, Netty 4.1 NIO, 1 worker thread; the
//                    jars fetched from Maven Central by `mvn dependency:copy-dependencies` (pom.xml
//                    beside it) into target/peers/netty/lib, compiled with javac; run with -Xmx512m
//   netloop Rust     examples/rust/echo_server.rs (the Rust core, no JS), 1 or 2 worker loops
//                    → target/bench-build/release/examples/echo_server
//   netloop TS       benches/node/servers/netloop-echo.mjs (compiled index.js, the addon given
//                    with --addon), channelRead → ctx.writeAndFlush
//   netloop TS (autoRelease)  the same with `autoRelease: true` on the handler; in the bulk and
//                    stream workloads only (64 B reads are never detached: the figures would be
//                    the same as netloop TS's)
//   node:net         benches/node/servers/net-echo.mjs
//   Bun              benches/peers/bun-echo.mjs (Bun.listen, the echo in JS), Bun from its npm
//                    package (benches/node/runtimes.mjs); skipped when it cannot be fetched
//
// A server that cannot be built (tool missing, fetch failed, compile error) is left out with a
// `skipped: <reason>` line; the others go on.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { newer, root } from '../node/harness.mjs'
import { bun } from '../node/runtimes.mjs'

const peers = join(root, 'benches', 'peers')
const out = join(root, 'target', 'peers')
const binDir = join(root, 'target', 'bench-bin')
const nodeServers = join(root, 'benches', 'node', 'servers')

/** Newest mtime (ms) of the files under `paths` (files or directories, recursively). */
function newest(paths) {
  let t = 0
  const walk = (p) => {
    if (!existsSync(p)) return
    const st = statSync(p)
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e))
    else t = Math.max(t, st.mtimeMs)
  }
  paths.forEach(walk)
  return t
}
const stale = (srcs, bin) => !existsSync(bin) || newest(srcs) > statSync(bin).mtimeMs
/** True if `cmd` can be run (it exists; its exit status does not matter). */
const have = (cmd, args = ['--version']) => spawnSync(cmd, args, { stdio: 'ignore' }).error === undefined

function run(cmd, args, what) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  if (r.error) throw new Error(`${what}: ${r.error.message}`)
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`)
}

/** The C load generators (benches/load/*.c) in target/bench-bin, rebuilt if their source is newer. */
export function buildLoad(name) {
  mkdirSync(binDir, { recursive: true })
  const src = join(root, 'benches', 'load', `${name}.c`)
  const bin = join(binDir, name)
  if (newer(src, bin)) execFileSync('cc', ['-O2', '-Wall', '-o', bin, src], { stdio: 'inherit' })
  return bin
}

const portLine = /^listening (\d+)\s*$/m

/** Builders: each returns the command of its server(s), or throws the reason it cannot. */
const BUILDERS = {
  'C epoll'() {
    const src = join(peers, 'epoll_echo.c')
    const bin = join(out, 'epoll_echo')
    mkdirSync(out, { recursive: true })
    if (!have('cc')) throw new Error('no C compiler (cc)')
    if (newer(src, bin)) run('cc', ['-O2', '-Wall', '-o', bin, src], 'cc epoll_echo.c')
    return { 'C epoll': { cmd: bin, args: ['0'], portRe: portLine } }
  },
  tokio() {
    const dir = join(peers, 'tokio-echo')
    const bin = join(out, 'release', 'tokio-echo')
    if (stale([join(dir, 'src'), join(dir, 'Cargo.toml'), join(dir, 'Cargo.lock')], bin)) {
      if (!have('cargo')) throw new Error('cargo not found')
      run('cargo', ['build', '--release', '-q', '--manifest-path', join(dir, 'Cargo.toml'), '--target-dir', out], 'cargo build tokio-echo')
    }
    return {
      'tokio current_thread': { cmd: bin, args: ['0'], portRe: portLine },
      'tokio multi_thread (2 workers)': { cmd: bin, args: ['0', '127.0.0.1', '2'], portRe: portLine, scaling: true },
    }
  },
  Netty() {
    if (!have('java', ['-version'])) throw new Error('java not found')
    if (!have('javac', ['-version'])) throw new Error('javac not found')
    const dir = join(out, 'netty')
    const lib = join(dir, 'lib')
    const classes = join(dir, 'classes')
    const pom = join(peers, 'netty', 'pom.xml')
    const stamp = join(lib, '.fetched')
    if (newer(pom, stamp)) {
      if (!have('mvn', ['-v'])) throw new Error('mvn not found (needed to fetch the Netty jars)')
      mkdirSync(lib, { recursive: true })
      run('mvn', ['-q', '-B', '-f', pom, 'dependency:copy-dependencies', `-DoutputDirectory=${lib}`], 'fetching the Netty jars with Maven')
      if (!readdirSync(lib).some((f) => f.startsWith('netty-transport-'))) throw new Error(`no netty-transport jar in ${lib} after the fetch`)
      writeFileSync(stamp, '')
    }
    const src = join(peers, 'netty', 'NettyEcho.java')
    if (newer(src, join(classes, 'NettyEcho.class')) || newer(stamp, join(classes, 'NettyEcho.class'))) {
      mkdirSync(classes, { recursive: true })
      run('javac', ['-d', classes, '-cp', `${lib}/*`, src], 'javac NettyEcho.java')
    }
    return {
      'Netty 4.1 NIO (1 worker)': {
        cmd: 'java',
        args: ['-Xmx512m', '-cp', `${classes}:${lib}/*`, 'NettyEcho', '0'],
        portRe: portLine,
        jvm: true,
      },
      'Netty 4.1 NIO (2 workers)': {
        cmd: 'java',
        args: ['-Xmx512m', '-cp', `${classes}:${lib}/*`, 'NettyEcho', '0', '127.0.0.1', '2'],
        portRe: portLine,
        jvm: true,
        scaling: true,
      },
    }
  },
  'netloop Rust'() {
    const bin = join(root, 'target', 'bench-build', 'release', 'examples', 'echo_server')
    const srcs = ['crates/eventloop', 'crates/transport', 'examples/rust/echo_server.rs', 'Cargo.lock', 'Cargo.toml'].map((p) => join(root, p))
    if (stale(srcs, bin)) {
      run('cargo', ['build', '--release', '-q', '-p', 'netloop-transport', '--example', 'echo_server', '--target-dir', join(root, 'target', 'bench-build')], 'cargo build echo_server')
    }
    // Prints `echo_server listening on 127.0.0.1:PORT with N worker loop(s)`.
    const portRe = /listening on [^\s]*:(\d+)\b/
    return {
      'netloop Rust (1 worker)': { cmd: bin, args: ['127.0.0.1:0', '1'], portRe },
      'netloop Rust (2 workers)': { cmd: bin, args: ['127.0.0.1:0', '2'], portRe },
    }
  },
  'netloop TS'() {
    if (!existsSync(join(root, 'index.js'))) throw new Error('index.js not compiled (the netloop TS server loads it)')
    const echo = join(nodeServers, 'netloop-echo.mjs')
    return {
      'netloop TS': { cmd: process.execPath, args: [echo], portRe: /^(\d+)\s*$/m, node: true },
      'netloop TS (autoRelease)': { cmd: process.execPath, args: [echo, '--auto-release'], portRe: /^(\d+)\s*$/m, node: true, modes: ['bulk', 'stream'] },
    }
  },
  Bun() {
    const b = bun()
    if (!b.bin) throw new Error(b.reason)
    return { [`Bun ${b.version} (JS echo)`]: { cmd: b.bin, args: [join(peers, 'bun-echo.mjs')], portRe: /^(\d+)\s*$/m } }
  },
  'node:net'() {
    return { 'node:net': { cmd: process.execPath, args: [join(nodeServers, 'net-echo.mjs')], portRe: /^(\d+)\s*$/m, node: true } }
  },
}

/**
 * Builds what `wanted` (builder names, default all) needs, less those no prefix in `only` (the
 * `--servers` list, if given) can select. Returns the servers that are ready, in a fixed order,
 * and the ones skipped with their reasons.
 */
export function buildServers(wanted = Object.keys(BUILDERS), only = undefined, log = (s) => process.stderr.write(`${s}\n`)) {
  const targets = {}
  const skipped = []
  const prefixes = only?.split(',').map((x) => x.trim().toLowerCase())
  for (const name of wanted) {
    const key = name.toLowerCase()
    if (prefixes && !prefixes.some((p) => key.startsWith(p) || p.startsWith(key))) continue
    const t0 = Date.now()
    try {
      Object.assign(targets, BUILDERS[name]())
      const ms = Date.now() - t0
      if (ms > 1000) log(`  built ${name} (${(ms / 1000).toFixed(1)} s)`)
    } catch (e) {
      skipped.push({ name, reason: e.message })
      log(`skipped: ${name}: ${e.message}`)
    }
  }
  return { targets, skipped }
}

/** The servers named by `--servers A,B` (a name matches if it starts with one of them), else all. */
export function pickServers(names, list) {
  const want = list?.split(',').map((x) => x.trim().toLowerCase())
  return want ? names.filter((n) => want.some((w) => n.toLowerCase().startsWith(w))) : names
}

/** VmRSS and VmHWM of a process in KiB (/proc/PID/status). */
export function memoryKiB(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1])
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') }
}

/** utime + stime of a process (all threads) in clock ticks. */
export function procTicks(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
  return Number(f[11]) + Number(f[12])
}

/**
 * Starts server `t` (one of buildServers' targets), pinned to `cpu` if given, and with its fd
 * limit raised to `nofile` if given (prlimit; the program execs, so the pid is the server's).
 * Resolves once it printed its port.
 */
export function startServer(name, t, { cpu, nofile } = {}) {
  let argv = [t.cmd, ...t.args]
  if (nofile) argv = ['prlimit', `--nofile=${nofile}:${nofile}`, '--', ...argv]
  if (cpu !== undefined) argv = ['taskset', '-c', String(cpu), ...argv]
  // `t.env`: variables of this server only (an A/B's second addon, NAPI_RS_NATIVE_LIBRARY_PATH).
  const env = t.env ? { ...process.env, ...t.env } : process.env
  // stderr into a file, not a pipe: the loads run synchronously, nothing would drain a pipe
  // meanwhile, and a server that writes a line per reset connection would block on a full one
  // (its loop thread stuck in write(2), the run measuring nothing).
  mkdirSync(out, { recursive: true })
  const errFile = join(out, `${name.replace(/[^\w.-]+/g, '_')}.stderr`)
  const errFd = openSync(errFile, 'w')
  const child = spawn(argv[0], argv.slice(1), { cwd: root, env, stdio: ['ignore', 'pipe', errFd] })
  closeSync(errFd)
  let err = ''
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  return new Promise((resolve, reject) => {
    let text = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${name} did not print its port within 30 s: ${text} ${readFileSync(errFile, 'utf8')}`))
    }, 30_000)
    const onData = (d) => {
      text += d
      const m = t.portRe.exec(text)
      if (!m || !text.includes('\n')) return
      clearTimeout(timer)
      child.stdout.off('data', onData)
      child.stdout.resume()
      resolve({
        pid: child.pid,
        port: Number(m[1]),
        alive: () => child.exitCode === null && child.signalCode === null,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
          const how = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 5000))])
          if (!how) {
            child.kill('SIGKILL')
            await exited
          }
          err = readFileSync(errFile, 'utf8')
          // Resets and broken pipes when the load generator closes with messages in flight are
          // expected (the Rust echo_server reports them); anything else is shown.
          const other = err.split('\n').filter((l) => l && !l.startsWith('{"metrics"') && !/ECONNRESET|EPIPE|reset by peer|Broken pipe/.test(l))
          if (other.length) process.stderr.write(`[${name}] ${other.slice(0, 5).join('\n')}\n`)
          return err
        },
      })
    }
    child.stdout.on('data', onData)
    exited.then((how) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited before listening: ${JSON.stringify(how)} ${readFileSync(errFile, 'utf8').trim().slice(0, 400)}`))
    })
  })
}
