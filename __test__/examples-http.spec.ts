import test from 'ava'
import { connect, has, interrupt, reader, run, sleep, startExample, statsOf } from './example-helpers'

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

// The native codec (default) and the pure-JS decoder (--js-codec) answer the same.
for (const args of [[], ['--js-codec']]) {
  const label = args.length ? ` ${args.join(' ')}` : ''

  test.serial(`http-hello${label}: pipelined requests on one socket, then Connection: close closes it`, async (t) => {
    const ex = await startExample(t, 'http-hello', args)
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

  test.serial(`http-hello${label}: requests split across reads, Content-Length bodies, and 400 on garbage`, async (t) => {
    const ex = await startExample(t, 'http-hello', args)
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
}

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
  // The native codec hands JS requests, not bytes (bytesIn/bytesOut stay 0): each worker's share
  // shows as channel events delivered to JS and ops (responses) JS wrote.
  for (const m of stats) t.true(m.events > 0 && m.ops > 0, JSON.stringify(m))
  t.is(ex.stderr(), '')
})
