// The examples under examples/, each run as a child process on a free port (`--port 0`) and
// driven by real clients: redis-cli and redis-benchmark, curl and wrk, and raw node:net
// sockets where exact bytes matter. A client binary that is missing skips its test with a
// log line, except in CI (CI set), where .ci/run installs them: there it fails, unless
// .ci/run reported that apt could not install it (NETLOOP_UNINSTALLABLE_CLIENTS).
import test, { type ExecutionContext } from 'ava'
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as net from 'node:net'
import { join } from 'node:path'

const root = join(__dirname, '..')
const STARTUP_MS = 30_000

interface Example {
  port: number
  proc: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>
}

/** Starts `examples/<name>.ts --port 0 ...args` and resolves once it prints its address. */
function startExample(t: ExecutionContext, name: string, args: string[] = []): Promise<Example> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join('examples', `${name}.ts`), '--port', '0', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '' },
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

const PACKAGE_OF: Record<string, string> = { 'redis-cli': 'redis-tools', 'redis-benchmark': 'redis-tools', curl: 'curl', wrk: 'wrk' }

/** True when `bin` is installed; otherwise logs and passes (skips), or fails in CI. */
function has(t: ExecutionContext, bin: string): boolean {
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
function run(bin: string, args: string[], timeoutMs = 60_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: timeoutMs, maxBuffer: 16 << 20 }, (e, stdout, stderr) => {
      if (e) reject(Object.assign(e, { stdout, stderr }))
      else resolve({ stdout, stderr })
    })
  })
}

/** A raw socket, connected; destroyed at teardown. */
function connect(t: ExecutionContext, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s))
    s.setNoDelay(true)
    s.on('error', reject)
    t.teardown(() => s.destroy())
  })
}

/** Everything a socket receives, and a way to wait for some amount of it or for its end. */
function reader(s: net.Socket) {
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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** SIGINTs the example and resolves with its exit code (or a note if it is still running after 10 s). */
async function interrupt(ex: Example): Promise<number | string> {
  ex.proc.kill('SIGINT')
  return Promise.race([ex.exited, sleep(10_000).then(() => 'still running after 10 s')])
}

/** The per-loop metrics an example started with `--stats` printed on its way out. */
function statsOf(ex: Example): Array<{ bytesIn: number; bytesOut: number; channels: number }> {
  const m = /^stats (.*)$/m.exec(ex.stdout())
  if (!m) throw new Error(`no stats line in: ${ex.stdout()}`)
  return JSON.parse(m[1])
}

/** A RESP multibulk command. */
const resp = (...args: Array<string | Buffer>) =>
  Buffer.concat([Buffer.from(`*${args.length}\r\n`), ...args.flatMap((a) => [Buffer.from(`$${Buffer.byteLength(a)}\r\n`), Buffer.from(a), Buffer.from('\r\n')])])

// ---- resp-server ----

test.serial('resp-server: redis-cli PING, SET/GET/DEL/EXISTS/INCR, and Redis error texts', async (t) => {
  if (!has(t, 'redis-cli')) return
  const ex = await startExample(t, 'resp-server')
  const cli = async (...args: string[]) => (await run('redis-cli', ['-p', String(ex.port), ...args])).stdout.replace(/\n+$/, '')
  t.is(await cli('ping'), 'PONG')
  t.is(await cli('ping', 'hello there'), 'hello there')
  t.is(await cli('echo', 'a\r\nb'), 'a\r\nb')
  t.is(await cli('set', 'greeting', 'hello'), 'OK')
  t.is(await cli('get', 'greeting'), 'hello')
  t.is(await cli('get', 'nope'), '')
  t.is(await cli('exists', 'greeting', 'greeting', 'nope'), '2')
  t.is(await cli('set', 'n', '41'), 'OK')
  t.is(await cli('incr', 'n'), '42')
  t.is(await cli('incr', 'fresh'), '1')
  t.is(await cli('incr', 'greeting'), 'ERR value is not an integer or out of range')
  t.is(await cli('set', 'big', '9223372036854775807'), 'OK')
  t.is(await cli('incr', 'big'), 'ERR increment or decrement would overflow')
  t.is(await cli('del', 'greeting', 'n', 'nope'), '2')
  t.is(await cli('exists', 'greeting', 'n'), '0')
  t.is(await cli('foo', 'bar'), "ERR unknown command 'foo', with args beginning with: 'bar' ")
  t.is(await cli('get'), "ERR wrong number of arguments for 'get' command")
  t.is(await cli('set', 'k', 'v', 'px', '50'), 'OK')
  t.is(await cli('get', 'k'), 'v')
  await sleep(120)
  t.is(await cli('get', 'k'), '')
  t.is(await cli('set', 'k', 'v', 'bogus'), 'ERR syntax error')
  t.is(await cli('config', 'get', 'appendonly'), 'appendonly\nno')
  t.is(await cli('command'), '')
})

test.serial('resp-server: an inline command (as typed in telnet) over a raw socket', async (t) => {
  const ex = await startExample(t, 'resp-server')
  const s = await connect(t, ex.port)
  const r = reader(s)
  s.write('PING\r\n')
  await r.bytes(7)
  t.is(r.text(), '+PONG\r\n')
  s.write('SET "two words" \'x y\'\nGET "two words"\r\nEXISTS "two words" nope\r\n\r\nQUIT\r\nPING\r\n')
  await r.closed()
  t.is(r.text(), '+PONG\r\n+OK\r\n$3\r\nx y\r\n:1\r\n+OK\r\n')
})

test.serial('resp-server: pipelined commands in one write get their replies in order, flushed together', async (t) => {
  const ex = await startExample(t, 'resp-server')
  const s = await connect(t, ex.port)
  const r = reader(s)
  const value = Buffer.from('binary\r\n\0\xff value', 'latin1')
  const cmds = [resp('SET', 'a', value), resp('GET', 'a'), resp('INCR', 'c'), resp('INCR', 'c'), resp('DEL', 'a', 'c', 'x'), resp('GET', 'a'), resp('PING')]
  const expected = Buffer.concat([
    Buffer.from('+OK\r\n'),
    Buffer.from(`$${value.length}\r\n`),
    value,
    Buffer.from('\r\n:1\r\n:2\r\n:2\r\n$-1\r\n+PONG\r\n'),
  ])
  const many: Buffer[] = []
  for (let i = 0; i < 500; i++) many.push(resp('INCR', 'counter'))
  s.write(Buffer.concat([...cmds, ...many, resp('GET', 'counter')]))
  const tail = '$3\r\n500\r\n'
  let manyReplies = ''
  for (let i = 1; i <= 500; i++) manyReplies += `:${i}\r\n`
  const total = expected.length + manyReplies.length + tail.length
  await r.bytes(total)
  await sleep(50)
  t.deepEqual(r.data(), Buffer.concat([expected, Buffer.from(manyReplies), Buffer.from(tail)]))
})

test.serial('resp-server: a command split into 1-byte writes is answered once, whole', async (t) => {
  const ex = await startExample(t, 'resp-server')
  const s = await connect(t, ex.port)
  const r = reader(s)
  const bytes = Buffer.concat([resp('SET', 'split', 'a\r\nb$*'), resp('GET', 'split'), Buffer.from('PING\r\n')])
  for (const b of bytes) {
    s.write(Buffer.from([b]))
    await sleep(1)
  }
  const expected = '+OK\r\n$6\r\na\r\nb$*\r\n+PONG\r\n'
  await r.bytes(expected.length)
  await sleep(50)
  t.is(r.text(), expected)
})

test.serial('resp-server: a protocol error gets the Redis error, then the connection closes', async (t) => {
  const ex = await startExample(t, 'resp-server')
  const s = await connect(t, ex.port)
  const r = reader(s)
  s.write(Buffer.concat([resp('PING'), Buffer.from('*1\r\nx\r\n')]))
  await r.closed()
  t.is(r.text(), "+PONG\r\n-ERR Protocol error: expected '$', got 'x'\r\n")
})

test.serial('resp-server: redis-benchmark (ping, set, get; pipelined) completes with non-zero rates', async (t) => {
  if (!has(t, 'redis-benchmark')) return
  const ex = await startExample(t, 'resp-server')
  const { stdout, stderr } = await run('redis-benchmark', ['-p', String(ex.port), '-n', '2000', '-c', '10', '-P', '8', '-t', 'ping,set,get', '-q'], 120_000)
  const rates = new Map([...stdout.matchAll(/([A-Z_]+): ([\d.]+) requests per second/g)].map((m) => [m[1], Number(m[2])]))
  t.log([...rates].map(([k, v]) => `${k} ${v}/s`).join(', '))
  for (const name of ['PING_INLINE', 'PING_MBULK', 'SET', 'GET']) {
    t.true((rates.get(name) ?? 0) > 0, `${name} in: ${stdout}`)
  }
  t.notRegex(stderr, /error/i)
  t.is(ex.stderr(), '')
})

for (const mode of ['hand-off', 'reuse-port'] as const) {
  test.serial(`resp-server --threads 2 (${mode}): redis-benchmark completes, both workers serve connections, SIGINT exits 0`, async (t) => {
    if (!has(t, 'redis-benchmark')) return
    const ex = await startExample(t, 'resp-server', ['--threads', '2', '--stats', ...(mode === 'reuse-port' ? ['--reuse-port'] : [])])
    t.regex(ex.stdout(), mode === 'reuse-port' ? /listening on 127\.0\.0\.1:\d+ \(2 worker threads, SO_REUSEPORT\)/ : /listening on 127\.0\.0\.1:\d+ \(2 worker threads\)/)
    const args = ['-p', String(ex.port), '-P', '16', '-c', '50', '-n', '20000', '-t', 'ping,set,get', '-q']
    const { stdout, stderr } = await run('redis-benchmark', args, 120_000)
    const rates = new Map([...stdout.matchAll(/([A-Z_]+): ([\d.]+) requests per second/g)].map((m) => [m[1], Number(m[2])]))
    t.log([...rates].map(([k, v]) => `${k} ${v}/s`).join(', '))
    for (const name of ['PING_INLINE', 'PING_MBULK', 'SET', 'GET']) {
      t.true((rates.get(name) ?? 0) > 0, `${name} in: ${stdout}`)
    }
    t.notRegex(stderr, /error/i)
    t.is(await interrupt(ex), 0)
    const stats = statsOf(ex)
    t.log(stats.map((m, i) => `worker ${i}: ${m.bytesIn} bytes in, ${m.bytesOut} out`).join('; '))
    t.is(stats.length, 2)
    for (const m of stats) {
      t.true(m.bytesIn > 0 && m.bytesOut > 0, JSON.stringify(m))
    }
    t.is(ex.stderr(), '')
  })
}

test.serial('resp-server --threads 2: each worker has its own keyspace, commands still work on each', async (t) => {
  const ex = await startExample(t, 'resp-server', ['--threads', '2'])
  // The boss hands connections to the workers in turn: a and b land on different workers.
  const a = await connect(t, ex.port)
  const ar = reader(a)
  const b = await connect(t, ex.port)
  const br = reader(b)
  a.write(resp('SET', 'k', 'from a'))
  await ar.includes('+OK\r\n')
  a.write(resp('GET', 'k'))
  await ar.includes('from a\r\n')
  b.write(resp('GET', 'k'))
  await br.bytes(5)
  t.is(br.text(), '$-1\r\n', 'the other worker does not see the key (see the header of resp-server.ts)')
  b.write(resp('INCR', 'n'))
  await br.includes(':1\r\n')
})

// ---- http-hello ----

test.serial('http-hello: curl gets Hello, World! twice over one kept-alive connection', async (t) => {
  if (!has(t, 'curl')) return
  const ex = await startExample(t, 'http-hello')
  const url = `http://127.0.0.1:${ex.port}/`
  const { stdout, stderr } = await run('curl', ['-sv', url, `${url}again`])
  t.is(stdout, 'Hello, World!Hello, World!')
  t.regex(stderr, /Re-using existing connection/)
  t.regex(stderr, /< HTTP\/1\.1 200 OK/)
  t.regex(stderr, /< Content-Length: 13/i)
  t.regex(stderr, /< Connection: keep-alive/i)
  const closing = await run('curl', ['-sv', '-H', 'Connection: close', url])
  t.is(closing.stdout, 'Hello, World!')
  t.regex(closing.stderr, /< Connection: close/i)
  const post = await run('curl', ['-s', '--data-binary', 'a=b&c=d', url])
  t.is(post.stdout, 'Hello, World!')
})

function responses(text: string): string[] {
  return text.split(/(?=HTTP\/1\.1 )/).filter((s) => s.length > 0)
}

test.serial('http-hello: pipelined requests on one socket, then Connection: close closes it', async (t) => {
  const ex = await startExample(t, 'http-hello')
  const s = await connect(t, ex.port)
  const r = reader(s)
  s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /ignored HTTP/1.1\r\n\r\n')
  await r.closed()
  const res = responses(r.text())
  t.is(res.length, 3)
  for (const x of res) {
    t.regex(x, /^HTTP\/1\.1 200 OK\r\n/)
    t.regex(x, /\r\nContent-Length: 13\r\n/)
    t.true(x.endsWith('\r\n\r\nHello, World!'))
  }
  t.regex(res[0], /\r\nConnection: keep-alive\r\n/)
  t.regex(res[2], /\r\nConnection: close\r\n/)
})

test.serial('http-hello: requests split across reads, Content-Length bodies, and 400 on garbage', async (t) => {
  const ex = await startExample(t, 'http-hello')
  const s = await connect(t, ex.port)
  const r = reader(s)
  const body = 'x'.repeat(3000) + 'GET / HTTP/1.1\r\n\r\n' // body bytes that look like a request
  const req = `POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}GET / HTTP/1.1\r\nHost: x\r\n\r\n`
  for (let i = 0; i < req.length; i += 7) {
    s.write(req.slice(i, i + 7))
    if (i % 700 === 0) await sleep(1)
  }
  await r.includes('Hello, World!HTTP/1.1 200 OK')
  await sleep(100)
  t.is(responses(r.text()).length, 2)
  t.true(r.text().endsWith('Hello, World!'))

  const g = await connect(t, ex.port)
  const gr = reader(g)
  g.write('this is not http\r\n\r\n')
  await gr.closed()
  t.regex(gr.text(), /^HTTP\/1\.1 400 Bad Request\r\n/)
  t.regex(gr.text(), /\r\nConnection: close\r\n/)
})

test.serial('http-hello: wrk runs without errors', async (t) => {
  if (!has(t, 'wrk')) return
  const ex = await startExample(t, 'http-hello')
  const { stdout } = await run('wrk', ['-t1', '-c8', '-d1s', `http://127.0.0.1:${ex.port}/`], 60_000)
  t.log(stdout.split('\n').find((l) => l.startsWith('Requests/sec')) ?? stdout)
  const rate = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 0)
  t.true(rate > 0, stdout)
  t.notRegex(stdout, /Socket errors|Non-2xx/)
  t.is(ex.stderr(), '')
})

test.serial('http-hello --threads 2: curl is answered by both workers, SIGINT exits 0', async (t) => {
  if (!has(t, 'curl')) return
  const ex = await startExample(t, 'http-hello', ['--threads', '2', '--stats'])
  t.regex(ex.stdout(), /listening on 127\.0\.0\.1:\d+ \(2 worker threads\)/)
  const url = `http://127.0.0.1:${ex.port}/`
  // Four connections, handed to the workers in turn.
  for (let i = 0; i < 4; i++) {
    const { stdout, stderr } = await run('curl', ['-sv', url, `${url}again`])
    t.is(stdout, 'Hello, World!Hello, World!')
    t.regex(stderr, /Re-using existing connection/)
  }
  t.is(await interrupt(ex), 0)
  const stats = statsOf(ex)
  t.is(stats.length, 2)
  for (const m of stats) t.true(m.bytesIn > 0 && m.bytesOut > 0, JSON.stringify(m))
  t.is(ex.stderr(), '')
})

// ---- echo and proxy ----

test.serial('echo: bytes come back unchanged', async (t) => {
  const ex = await startExample(t, 'echo')
  const s = await connect(t, ex.port)
  const r = reader(s)
  const data = Buffer.concat([Buffer.from('hello\n'), randomBytes(256 * 1024)])
  s.write(data.subarray(0, 6))
  await r.bytes(6)
  t.is(r.text(), 'hello\n')
  s.write(data.subarray(6))
  await r.bytes(data.length)
  t.deepEqual(r.data(), data)
})

test.serial('proxy: 1 MiB through the proxy to the echo example comes back intact', async (t) => {
  const echo = await startExample(t, 'echo')
  const proxy = await startExample(t, 'proxy', ['--target', `127.0.0.1:${echo.port}`])
  const s = await connect(t, proxy.port)
  const r = reader(s)
  const data = randomBytes(1 << 20)
  s.write(data)
  await r.bytes(data.length, 30_000)
  t.is(r.data().length, data.length)
  t.true(r.data().equals(data))
  s.end()
  await r.closed()
  t.is(proxy.stderr(), '')
})

test.serial('proxy: an unreachable target closes the client', async (t) => {
  const port = await new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port
      srv.close(() => resolve(p))
    })
  })
  const proxy = await startExample(t, 'proxy', ['--target', `127.0.0.1:${port}`])
  const s = await connect(t, proxy.port)
  const r = reader(s)
  await r.closed()
  t.is(r.data().length, 0)
  t.regex(proxy.stderr(), /cannot reach/)
})

// ---- chat ----

test.serial('chat: a line from one user reaches the other, not the sender', async (t) => {
  const ex = await startExample(t, 'chat')
  const a = await connect(t, ex.port)
  const ar = reader(a)
  await ar.includes('Welcome')
  const b = await connect(t, ex.port)
  const br = reader(b)
  await br.includes('Welcome')
  await ar.includes('joined')
  a.write('hello from a\r\n\n')
  await br.includes('] hello from a\n')
  b.write('and b\n')
  await ar.includes('] and b\n')
  t.false(ar.text().includes('hello from a'))
  t.false(br.text().includes('and b'))
  b.write('/quit\n')
  await br.closed()
  t.true(br.text().endsWith('Bye!\n'))
  await ar.includes('left')
  t.is(ex.stderr(), '')
})

test.serial('chat: an idle user is told goodbye and closed (--idle 1)', async (t) => {
  const ex = await startExample(t, 'chat', ['--idle', '1'])
  const a = await connect(t, ex.port)
  const ar = reader(a)
  const b = await connect(t, ex.port)
  const br = reader(b)
  const start = Date.now()
  // b keeps talking, a says nothing: only a is closed.
  const talk = setInterval(() => b.write('still here\n'), 200)
  t.teardown(() => clearInterval(talk))
  await ar.closed(10_000)
  const elapsed = Date.now() - start
  t.true(elapsed >= 800, `closed after ${elapsed} ms`)
  t.regex(ar.text(), /goodbye!\n$/)
  await br.includes('left')
  t.false(b.destroyed)
  clearInterval(talk)
})

test.serial('chat --threads 2: a line reaches the users of both workers, and shutdown says goodbye on both', async (t) => {
  const ex = await startExample(t, 'chat', ['--threads', '2'])
  t.regex(ex.stdout(), /listening on 127\.0\.0\.1:\d+ \(2 worker threads; /)
  const users: Array<{ socket: net.Socket; r: ReturnType<typeof reader>; thread: number }> = []
  for (let i = 0; i < 4; i++) {
    const socket = await connect(t, ex.port)
    const r = reader(socket)
    await r.includes('leaves.\n')
    const m = /Welcome, .*! (\d+) other users? here \(you are on worker thread (\d+)\)/.exec(r.text())
    t.truthy(m, r.text())
    t.is(Number(m![1]), i, 'the count of users spans both workers')
    users.push({ socket, r, thread: Number(m![2]) })
  }
  t.is(new Set(users.map((u) => u.thread)).size, 2, 'the users are on two workers')
  // The first user sees the three others join, whichever worker they are on.
  for (const u of users.slice(1)) await users[0].r.includes(`* 127.0.0.1:${u.socket.localPort} joined\n`)

  users[0].socket.write('hello from 0\n')
  const other = users.findIndex((u) => u.thread !== users[0].thread)
  users[other].socket.write(`and from ${other}\n`)
  for (const [i, u] of users.entries()) {
    if (i !== 0) await u.r.includes('] hello from 0\n')
    if (i !== other) await u.r.includes(`] and from ${other}\n`)
  }
  await sleep(50)
  t.false(users[0].r.text().includes('hello from 0'), 'not back to the sender')
  t.false(users[other].r.text().includes(`and from ${other}`), 'not back to the sender')

  users[3].socket.write('/quit\n')
  await users[3].r.closed()
  for (const u of users.slice(0, 3)) await u.r.includes('left\n')

  t.is(await interrupt(ex), 0)
  for (const u of users.slice(0, 3)) {
    await u.r.closed()
    t.true(u.r.text().endsWith('* the server is shutting down\n'), u.r.text())
  }
  t.is(ex.stderr(), '')
})

test.serial('chat --threads 2 --idle 1: idle users on both workers are told goodbye and closed', async (t) => {
  const ex = await startExample(t, 'chat', ['--threads', '2', '--idle', '1'])
  const a = reader(await connect(t, ex.port))
  const b = reader(await connect(t, ex.port))
  await a.includes('worker thread')
  await b.includes('worker thread')
  t.not(/worker thread (\d+)/.exec(a.text())![1], /worker thread (\d+)/.exec(b.text())![1])
  await Promise.all([a.closed(10_000), b.closed(10_000)])
  t.regex(a.text(), /goodbye!\n$/)
  t.regex(b.text(), /goodbye!\n$/)
  t.is(ex.stderr(), '')
})

// ---- shutdown ----

for (const name of ['echo', 'resp-server', 'http-hello', 'chat', 'proxy']) {
  test.serial(`${name}: SIGINT closes the connections and exits 0, quietly`, async (t) => {
    const args: string[] = []
    if (name === 'proxy') {
      const echo = await startExample(t, 'echo')
      args.push('--target', `127.0.0.1:${echo.port}`)
    }
    const ex = await startExample(t, name, args)
    const s = await connect(t, ex.port)
    const r = reader(s)
    s.write(name === 'http-hello' ? 'GET / HTTP/1.1\r\n\r\n' : name === 'resp-server' ? 'PING\r\n' : 'hi\n')
    await r.bytes(1)
    ex.proc.kill('SIGINT')
    const code = await Promise.race([ex.exited, sleep(10_000).then(() => 'still running after 10 s')])
    t.is(code, 0)
    await r.closed()
    t.is(ex.stderr(), '')
  })
}
