import test from 'ava'
import * as net from 'node:net'
import { connect, interrupt, reader, sleep, startExample } from './example-helpers'

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
