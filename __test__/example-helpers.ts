// Helpers of the examples specs (examples-*.spec.ts): the examples under examples/, each run as a child process on a free port (`--port 0`) and
// driven by real clients: redis-cli and redis-benchmark, curl and wrk, and raw node:net
// sockets where exact bytes matter. A client binary that is missing skips its test with a
// log line, except in CI (CI set), where .ci/run installs them: there it fails, unless
// .ci/run reported that apt could not install it (NETLOOP_UNINSTALLABLE_CLIENTS).
import type { ExecutionContext } from 'ava'
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import * as net from 'node:net'
import { join } from 'node:path'

export const root = join(__dirname, '..')
export const STARTUP_MS = 30_000

let checkedBuild = false
/**
 * The examples import 'netloop', as an application does: the compiled index.js, src/*.js and src/generated/*.js
 * (`npm install` or `npm run build:ts` makes them), not the TypeScript sources these specs
 * import. Throws when a source is newer than its compiled file, so that a spec never passes
 * or fails on a stale build.
 */
export function assertLibraryBuilt(): void {
  if (checkedBuild) return
  const ts = (dir: string) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => join(dir, f))
  const sources = ['index.ts', ...ts('src'), ...ts(join('src', 'generated'))]
  const stale = sources.filter((f) => {
    const js = statSync(join(root, f.replace(/\.ts$/, '.js')), { throwIfNoEntry: false })
    return js === undefined || js.mtimeMs < statSync(join(root, f)).mtimeMs
  })
  if (stale.length > 0) {
    throw new Error(`the examples run the compiled library, older than its sources (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}): run \`npm run build:ts\``)
  }
  checkedBuild = true
}

export interface Example {
  port: number
  proc: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>
}

/** Starts `examples/<name>.ts --port 0 ...args` and resolves once it prints its address. */
export function startExample(t: ExecutionContext, name: string, args: string[] = [], env: Record<string, string> = {}): Promise<Example> {
  return startScript(t, name, join('examples', `${name}.ts`), ['--port', '0', ...args], env)
}

/**
 * Starts the TypeScript program `path` (relative to the repository) under tsx, killed at
 * teardown, and resolves once it prints `listening on HOST:PORT`.
 */
export function startScript(t: ExecutionContext, name: string, path: string, args: string[] = [], env: Record<string, string> = {}): Promise<Example> {
  assertLibraryBuilt()
  const proc = spawn(process.execPath, ['--import', 'tsx', path, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '', ...env },
  })
  let out = ''
  let err = ''
  proc.stdout!.on('data', (d) => (out += d))
  proc.stderr!.on('data', (d) => (err += d))
  const exited = new Promise<number | string>((resolve) => proc.on('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL')
      await exited
    }
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in time; stdout: ${out}; stderr: ${err}`)), STARTUP_MS)
    const onData = () => {
      const m = /listening on [\d.]+:(\d+)/.exec(out)
      if (!m) return
      clearTimeout(timer)
      proc.stdout!.off('data', onData)
      resolve({ port: Number(m[1]), proc, stdout: () => out, stderr: () => err, exited })
    }
    proc.stdout!.on('data', onData)
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${code}) before listening; stdout: ${out}; stderr: ${err}`))
    })
  })
}

export const PACKAGE_OF: Record<string, string> = { 'redis-cli': 'redis-tools', 'redis-benchmark': 'redis-tools', curl: 'curl', wrk: 'wrk', haproxy: 'haproxy' }

/** True when `bin` is installed; otherwise logs and passes (skips), or fails in CI. */
export function has(t: ExecutionContext, bin: string): boolean {
  if (spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0) return true
  const pkg = PACKAGE_OF[bin] ?? bin
  const uninstallable = (process.env.NETLOOP_UNINSTALLABLE_CLIENTS ?? '').split(/\s+/).includes(pkg)
  if (process.env.CI && !uninstallable) {
    t.fail(`${bin} is not installed (Debian package ${pkg}); .ci/run installs it in CI`)
  } else {
    t.log(`skipped: ${bin} is not installed (apt-get install ${pkg})`)
    t.pass()
  }
  return false
}

/** Runs a client binary; resolves with its output (rejects on a non-zero exit or a timeout). */
export function run(bin: string, args: string[], timeoutMs = 60_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: timeoutMs, maxBuffer: 16 << 20 }, (e, stdout, stderr) => {
      if (e) reject(Object.assign(e, { stdout, stderr }))
      else resolve({ stdout, stderr })
    })
  })
}

/** A raw socket, connected; destroyed at teardown. */
export function connect(t: ExecutionContext, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s))
    s.setNoDelay(true)
    s.on('error', reject)
    t.teardown(() => s.destroy())
  })
}

/** Everything a socket receives, and a way to wait for some amount of it or for its end. */
export function reader(s: net.Socket) {
  let buf = Buffer.alloc(0)
  let ended = false
  const waiters: Array<() => void> = []
  const wake = () => waiters.splice(0).forEach((w) => w())
  s.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d])
    wake()
  })
  s.on('close', () => {
    ended = true
    wake()
  })
  s.on('error', () => undefined)
  const until = (pred: () => boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(buf.toString('latin1').slice(0, 500))}`)), timeoutMs)
      const check = () => {
        if (pred()) {
          clearTimeout(timer)
          resolve()
        } else if (ended) {
          clearTimeout(timer)
          reject(new Error(`closed while waiting for ${what}; got ${JSON.stringify(buf.toString('latin1').slice(0, 500))}`))
        } else waiters.push(check)
      }
      check()
    })
  return {
    data: () => buf,
    text: () => buf.toString('latin1'),
    /** Resolves once `n` bytes arrived. */
    bytes: (n: number, timeoutMs = 15_000) => until(() => buf.length >= n, timeoutMs, `${n} bytes`),
    /** Resolves once the received text includes `s`. */
    includes: (s: string, timeoutMs = 15_000) => until(() => buf.toString('latin1').includes(s), timeoutMs, JSON.stringify(s)),
    /** Resolves once the peer closed the connection. */
    closed: (timeoutMs = 15_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the connection was not closed in time')), timeoutMs)
        const check = () => {
          if (ended) {
            clearTimeout(timer)
            resolve()
          } else waiters.push(check)
        }
        check()
      }),
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** SIGINTs the example and resolves with its exit code (or a note if it is still running after 10 s). */
export async function interrupt(ex: Example): Promise<number | string> {
  ex.proc.kill('SIGINT')
  return Promise.race([ex.exited, sleep(10_000).then(() => 'still running after 10 s')])
}

/** The per-loop metrics an example started with `--stats` printed on its way out. */
export function statsOf(ex: Example): Array<{ bytesIn: number; bytesOut: number; channels: number }> {
  const m = /^stats (.*)$/m.exec(ex.stdout())
  if (!m) throw new Error(`no stats line in: ${ex.stdout()}`)
  return JSON.parse(m[1])
}

/** A RESP multibulk command. */
export const resp = (...args: Array<string | Buffer>) =>
  Buffer.concat([Buffer.from(`*${args.length}\r\n`), ...args.flatMap((a) => [Buffer.from(`$${Buffer.byteLength(a)}\r\n`), Buffer.from(a), Buffer.from('\r\n')])])

