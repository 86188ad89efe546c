// examples/ws-chat.ts with a real browser: headless Chromium (Debian's `chromium`) loads the
// page the example serves on GET /, and its own JS (the page's `chat` object, over the
// browser's WebSocket) joins a room, sends, receives what a `ws` client says in the same
// room, and closes. The test drives the page over the DevTools protocol (a `ws` connection
// to the page's debugger URL, Runtime.evaluate). Without chromium the test is skipped with
// a log line, except in CI, where .ci/run installs it (see example-helpers' `has`).
import test, { type ExecutionContext } from 'ava'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'
import { has, startExample } from './example-helpers'

const within = <T>(ms: number, p: Promise<T>, what: string): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timeout: ${what}`)), ms).unref())])

/** Headless Chromium on `url`; resolves with its DevTools port. Stopped at teardown. */
function chromium(t: ExecutionContext, url: string): Promise<{ proc: ChildProcess; devtoolsPort: number }> {
  const profile = mkdtempSync(join(tmpdir(), 'netloop-chromium-'))
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check', '--disable-extensions', '--remote-debugging-port=0', `--user-data-dir=${profile}`, url]
  // Its own process group: the browser's helper processes are stopped with it.
  const proc = spawn('chromium', args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      try {
        process.kill(-proc.pid!, 'SIGKILL')
      } catch {
        proc.kill('SIGKILL')
      }
      await within(5000, exited, 'chromium exit').catch(() => undefined)
    }
    rmSync(profile, { recursive: true, force: true })
  })
  let err = ''
  return within(
    15_000,
    new Promise((resolve, reject) => {
      proc.stderr!.on('data', (d) => {
        err += d
        const m = /DevTools listening on ws:\/\/[^:]+:(\d+)\//.exec(err)
        if (m) resolve({ proc, devtoolsPort: Number(m[1]) })
      })
      proc.once('error', reject)
      void exited.then(() => reject(new Error(`chromium exited: ${err}`)))
    }),
    'chromium start',
  )
}

/** A DevTools protocol session with one page: `evaluate` runs an expression in it (awaited). */
async function pageSession(t: ExecutionContext, devtoolsPort: number, url: string) {
  type Target = { type: string; url: string; webSocketDebuggerUrl: string }
  let target: Target | undefined
  const deadline = Date.now() + 10_000
  while (!target) {
    const list = (await (await fetch(`http://127.0.0.1:${devtoolsPort}/json/list`)).json()) as Target[]
    target = list.find((x) => x.type === 'page' && x.url.startsWith(url))
    if (!target) {
      if (Date.now() > deadline) throw new Error(`no page for ${url}: ${JSON.stringify(list)}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const ws = new WebSocket(target.webSocketDebuggerUrl)
  t.teardown(() => ws.terminate())
  await within(10_000, new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject)), 'devtools connection')
  let nextId = 1
  const pending = new Map<number, (r: { result?: { result?: { value?: unknown }; exceptionDetails?: unknown }; error?: unknown }) => void>()
  ws.on('message', (data) => {
    const m = JSON.parse(String(data))
    pending.get(m.id)?.(m)
    pending.delete(m.id)
  })
  return {
    async evaluate(expression: string): Promise<unknown> {
      const id = nextId++
      const reply = new Promise<Parameters<typeof pending.set>[1] extends (r: infer R) => void ? R : never>((resolve) => pending.set(id, resolve))
      ws.send(JSON.stringify({ id, method: 'Runtime.evaluate', params: { expression, awaitPromise: true, returnByValue: true } }))
      const r = await within(10_000, reply, expression)
      if (r.error || r.result?.exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(r.error ?? r.result?.exceptionDetails)}`)
      return r.result?.result?.value
    },
  }
}

/** A `ws` chat client in `room`; keeps the messages it receives. */
async function nodeMember(t: ExecutionContext, port: number, room: string, name: string) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`)
  t.teardown(() => ws.terminate())
  const got: Array<Record<string, unknown>> = []
  ws.on('message', (d) => got.push(JSON.parse(String(d))))
  await within(10_000, new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject)), 'ws open')
  const waitFor = (pred: (m: Record<string, unknown>) => boolean, what: string) =>
    within(
      10_000,
      new Promise<Record<string, unknown>>((resolve) => {
        const check = () => {
          const m = got.find(pred)
          if (!m) return false
          ws.off('message', check)
          resolve(m)
          return true
        }
        if (!check()) ws.on('message', check)
      }),
      what,
    )
  ws.send(JSON.stringify({ type: 'join', room, name }))
  await waitFor((m) => m.type === 'welcome', 'welcome')
  return { ws, got, waitFor }
}

test.serial('ws-chat --threads 2: a headless Chromium loads the page, joins a room, exchanges messages with a ws client, and closes', async (t) => {
  if (!has(t, 'chromium')) return
  const ex = await startExample(t, 'ws-chat', ['--threads', '2'])
  const room = `browser-${process.pid}`
  const node = await nodeMember(t, ex.port, room, 'node')
  const url = `http://127.0.0.1:${ex.port}/`
  const { devtoolsPort } = await chromium(t, url)
  const page = await pageSession(t, devtoolsPort, url)
  // The page is there once its script defined `chat` (before, the target may still show the
  // blank document it starts with, and a navigation destroys the context of an evaluation).
  const deadline = Date.now() + 10_000
  while ((await page.evaluate(`typeof window.chat`).catch(() => undefined)) !== 'object') {
    if (Date.now() > deadline) throw new Error('the page did not load')
    await new Promise((r) => setTimeout(r, 20))
  }
  t.is(await page.evaluate(`typeof window.WebSocket`), 'function', "the browser's own WebSocket")

  const welcome = (await page.evaluate(`chat.join(${JSON.stringify(room)}, 'chromium')`)) as { members: number }
  t.is(welcome.members, 2, 'the ws client and the browser')
  await node.waitFor((m) => m.type === 'joined' && m.name === 'chromium', 'the browser joined')

  await page.evaluate(`chat.say('hello from chromium')`)
  const fromBrowser = await node.waitFor((m) => m.type === 'message' && m.name === 'chromium', 'message from the browser')
  t.is(fromBrowser.text, 'hello from chromium')

  node.ws.send(JSON.stringify({ type: 'say', text: 'hello from node ✓' }))
  const text = await page.evaluate(`chat.waitFor((m) => m.type === 'message' && m.name === 'node').then((m) => m.text)`)
  t.is(text, 'hello from node ✓')
  const log = (await page.evaluate(`document.getElementById('log').textContent`)) as string
  t.true(log.includes('node: hello from node ✓'), log)
  t.true(log.includes('chromium: hello from chromium'), 'the browser got its own message too (it is in the room)')

  t.is(await page.evaluate(`chat.leave()`), 1000, 'the close handshake completed with 1000')
  await node.waitFor((m) => m.type === 'left' && m.name === 'chromium', 'the browser left')
  t.regex((await page.evaluate(`document.getElementById('status').textContent`)) as string, /disconnected \(1000\)/)
})

test.serial('ws-chat --threads 2 without a browser: the page on GET /, 426 on /ws, 404 elsewhere; ws clients talk in rooms; bad messages get errors', async (t) => {
  const ex = await startExample(t, 'ws-chat', ['--threads', '2'])
  const base = `http://127.0.0.1:${ex.port}`
  const page = await fetch(`${base}/`)
  t.is(page.status, 200)
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/)
  t.regex(await page.text(), /new WebSocket\(/)
  t.is((await fetch(`${base}/ws`)).status, 426)
  t.is((await fetch(`${base}/nothing`)).status, 404)

  const room = `plain-${process.pid}`
  const members: Array<Awaited<ReturnType<typeof nodeMember>>> = []
  for (const name of ['a', 'b', 'c']) members.push(await nodeMember(t, ex.port, room, name))
  const other = await nodeMember(t, ex.port, `${room}-other`, 'd')
  members[2].ws.send(JSON.stringify({ type: 'say', text: 'to everyone' }))
  for (const m of members) t.is((await m.waitFor((x) => x.type === 'message', 'message')).text, 'to everyone')
  t.false(other.got.some((x) => x.type === 'message'), 'another room hears nothing')

  other.ws.send('not json')
  t.is((await other.waitFor((x) => x.type === 'error', 'error')).message, 'not JSON')
  other.ws.send(JSON.stringify({ type: 'join', room: 'bad room!', name: 'd' }))
  await other.waitFor((x) => x.type === 'error' && String(x.message).startsWith('room'), 'room error')
  members[0].ws.close()
  await members[1].waitFor((x) => x.type === 'left' && x.name === 'a', 'a left')
})
