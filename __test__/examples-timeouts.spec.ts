import test from 'ava'
import { connect, reader, startExample } from './example-helpers'

// Each example server closes a connection that stays silent for --idle seconds (on by default:
// echo 60 s, proxy 300 s, resp 300 s, http 60 s, chat 60 s); here with half a second.

const silentClientIsClosed = (name: string, args: string[] = []) =>
  test.serial(`${[name, ...args].join(' ')}: a silent client is closed after --idle`, async (t) => {
    const target = name === 'proxy' ? await startExample(t, 'echo', ['--idle', '0']) : undefined
    const ex = await startExample(t, name, [...args, '--idle', '0.5', ...(target ? ['--target', `127.0.0.1:${target.port}`] : [])])
    const s = await connect(t, ex.port)
    const r = reader(s)
    const started = Date.now()
    await r.closed(15_000)
    t.true(Date.now() - started >= 400, 'not before the idle time')
    t.is(r.data().length, 0)
  })

silentClientIsClosed('echo')
silentClientIsClosed('proxy')
silentClientIsClosed('resp-server')
silentClientIsClosed('resp-server', ['--threads', '2'])
silentClientIsClosed('http-hello', ['--header-timeout', '0'])

test.serial('echo: a client that keeps talking is not closed by --idle', async (t) => {
  const ex = await startExample(t, 'echo', ['--idle', '0.5'])
  const s = await connect(t, ex.port)
  const r = reader(s)
  for (let i = 0; i < 10; i++) {
    s.write(`${i}\n`)
    await r.includes(`${i}\n`)
    await new Promise((resolve) => setTimeout(resolve, 150))
  }
  t.false(s.destroyed)
  t.is(r.text(), Array.from({ length: 10 }, (_, i) => `${i}\n`).join(''))
})

for (const args of [[], ['--js-codec']]) {
  const label = args.length ? ` ${args.join(' ')}` : ''
  test.serial(`http-hello${label}: a request head that trickles in slower than --header-timeout gets 408 and the close`, async (t) => {
    const ex = await startExample(t, 'http-hello', [...args, '--header-timeout', '0.5', '--idle', '10'])
    const s = await connect(t, ex.port)
    const r = reader(s)
    const head = 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(40)
    let i = 0
    const trickle = setInterval(() => i < head.length && s.write(head[i++]), 50) // never finishes in time
    t.teardown(() => clearInterval(trickle))
    await r.closed(15_000)
    t.regex(r.text(), /^HTTP\/1\.1 408 Request Timeout\r\n/)
    t.regex(r.text(), /\r\nConnection: close\r\n/)
  })
}

test.serial('http-hello: a complete request within --header-timeout is answered, and the connection stays', async (t) => {
  const ex = await startExample(t, 'http-hello', ['--header-timeout', '0.5', '--idle', '10'])
  const s = await connect(t, ex.port)
  const r = reader(s)
  await new Promise((resolve) => setTimeout(resolve, 300))
  s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
  await r.includes('Hello, World!')
  await new Promise((resolve) => setTimeout(resolve, 800)) // longer than the header timeout: no request is under way
  t.false(s.destroyed)
  s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
  await r.bytes(2 * r.data().length)
  t.is(r.text().split('Hello, World!').length, 3)
})
