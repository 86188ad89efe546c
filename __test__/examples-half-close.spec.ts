import test from 'ava'
import { randomBytes } from 'node:crypto'
import { connect, reader, sleep, startExample } from './example-helpers'

test.serial('echo: a client that half-closes after sending gets the whole reply, then the close', async (t) => {
  const ex = await startExample(t, 'echo')
  // More than the socket buffers of both ends hold: most of the reply is still queued in the
  // server when the client's FIN arrives.
  const data = randomBytes(24 << 20)
  const s = await connect(t, ex.port)
  // Read nothing at first: the reply backs up, and the server stops reading while its echoes
  // do not drain (so a client that read nothing until it had sent everything would wait for
  // ever, as with any echo server once the socket buffers are full). Then read, while the rest
  // goes out and the output shuts down.
  s.pause()
  const chunks: Buffer[] = []
  s.on('data', (d: Buffer) => chunks.push(d))
  const closed = new Promise<void>((resolve) => s.on('close', () => resolve()))
  const sent = new Promise<void>((resolve) => s.end(data, resolve))
  await sleep(500)
  s.resume()
  await sent
  await closed
  const got = Buffer.concat(chunks)
  t.is(got.length, data.length)
  t.true(got.equals(data))
})

test.serial('proxy: clients that half-close right after sending (printf | nc -N) all get their replies', async (t) => {
  const echo = await startExample(t, 'echo')
  const proxy = await startExample(t, 'proxy', ['--target', `127.0.0.1:${echo.port}`])
  const replies = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      const s = await connect(t, proxy.port)
      const r = reader(s)
      s.end(`hello ${i}\n`)
      await r.closed()
      return r.text()
    }),
  )
  t.deepEqual(replies, Array.from({ length: 20 }, (_, i) => `hello ${i}\n`))
  t.is(proxy.stderr(), '')
})
