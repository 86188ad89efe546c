import test from 'ava'
import { spawn } from 'node:child_process'
import * as net from 'node:net'
import { join } from 'node:path'

import { type Channel, type NetloopError, ServerBootstrap } from '../index'
import { captureUnhandled, loopFor, netClient, recorder, until } from './channel-helpers'

test('ServerBootstrap.handler sees the server channel events, as a handler or an initializer', async (t) => {
  const loop = loopFor(t)
  const log: string[] = []
  let initialized: Channel | undefined
  const a = await new ServerBootstrap().group(loop).handler(recorder(log, 'a:')).childHandler(() => undefined).bind(0, '127.0.0.1')
  const b = await new ServerBootstrap()
    .group(loop)
    .handler((ch) => {
      initialized = ch
      ch.pipeline.addLast('rec', recorder(log, 'b:'))
    })
    .childHandler(() => undefined)
    .bind(0, '127.0.0.1')
  t.is(initialized, b)
  await a.close()
  await b.close()
  await until(() => log.filter((l) => l.endsWith('unregistered')).length === 2)
  for (const p of ['a:', 'b:']) t.deepEqual(log.filter((l) => l.startsWith(p)), [`${p}registered`, `${p}active`, `${p}inactive`, `${p}unregistered`])
})

test("an exception of an accepted channel after it closed reaches the server channel's handler with the channel id", async (t) => {
  const unhandled = captureUnhandled(t)
  const loop = loopFor(t)
  const seen: Array<{ code?: string; channelId?: number }> = []
  const children: Channel[] = []
  const server = await new ServerBootstrap()
    .group(loop)
    .handler({ exceptionCaught: (_ctx, e) => void seen.push({ code: (e as NetloopError).code, channelId: (e as NetloopError).channelId }) })
    .childHandler((ch) => {
      children.push(ch)
      ch.pipeline.addLast('app', {}) // removed when the native side forgets the channel
    })
    .bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  const s = await netClient(t, server.localAddress!.port)
  await until(() => children.length === 1)
  const child = children[0]
  s.destroy()
  await child.closeFuture
  // Closed, and forgotten by the native side (its pipeline emptied): the write below fails in JS.
  await until(() => child.pipeline.names().length === 0 && !child.isOpen)
  child.write('late', child.voidPromise())
  await until(() => seen.length === 1)
  t.deepEqual(seen, [{ code: 'ERR_CHANNEL_CLOSED', channelId: child.id }])
  t.is(unhandled.length, 0)
})

test("an accept failure (EMFILE) reaches the server channel's handler", async (t) => {
  const script = join(__dirname, 'fixtures', 'emfile-server.ts')
  const proc = spawn('sh', ['-c', `ulimit -n 64 && exec "${process.execPath}" --import tsx "${script}"`], { cwd: join(__dirname, '..'), stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => proc.kill('SIGKILL'))
  let out = ''
  let err = ''
  proc.stdout.on('data', (d) => (out += d))
  proc.stderr.on('data', (d) => (err += d))
  await until(() => /listening on \d+/.test(out) || proc.exitCode !== null, 30_000)
  const port = Number(/listening on (\d+)/.exec(out)?.[1])
  t.true(port > 0, `stdout: ${out} stderr: ${err}`)
  const sockets: net.Socket[] = []
  t.teardown(() => sockets.forEach((s) => s.destroy()))
  for (let i = 0; i < 100 && !out.includes('server saw'); i++) {
    const s = net.connect(port, '127.0.0.1')
    s.on('error', () => undefined)
    sockets.push(s)
    await new Promise((r) => s.once('connect', r).once('close', r))
  }
  await until(() => out.includes('server saw'), 15_000)
  t.regex(out, /server saw EMFILE/)
  t.notRegex(err, /reached the tail/)
})
