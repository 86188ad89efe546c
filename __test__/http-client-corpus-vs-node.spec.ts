// The HTTP client codec's response corpus (crates/http/tests/corpus/responses.txt): a server
// sends each entry back to one GET and closes; netloop's HttpClientCodec and node:http's client
// read it side by side. Both deliver the same final response (status and body length), or both
// refuse it; every entry where they part must be one of the differences documented in
// docs/decisions/0009-http-codec.md ("The client side by side with node:http"), and every
// documented difference must still be one.
import test from 'ava'
import * as http from 'node:http'
import * as net from 'node:net'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { HttpClientCodec, HttpClientRequest, HttpClientResponse, HttpContent } from '../index'
import { dial, loopFor } from './channel-helpers'
// @ts-expect-error: a plain ES module of the scripts (JSDoc-typed), shared with scripts/http-corpus.mjs
import { responseCorpusEntries } from '../scripts/http-corpus-lib.mjs'

type Entry = { name: string; expected: string; bytes: Buffer }
const root = join(__dirname, '..')

/** A server that answers `GET /N` with entry N's bytes, then closes. */
async function corpusServer(t: { teardown(fn: () => unknown): void }, entries: Entry[]): Promise<number> {
  const server = net.createServer((s) => {
    let got = ''
    s.on('error', () => {})
    s.on('data', (d) => {
      got += d.toString('latin1')
      if (!got.includes('\r\n\r\n')) return
      const i = Number(/^GET \/(\d+) /.exec(got)?.[1])
      s.end(entries[i].bytes)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  return (server.address() as net.AddressInfo).port
}

/** `STATUS:LENGTH` of the final response node:http's client delivers whole, else its error's code. */
function nodeVerdict(port: number, i: number): Promise<string> {
  return new Promise((resolve) => {
    let done = false
    const finish = (v: string) => {
      if (!done) resolve(v)
      done = true
    }
    const req = http.get({ host: '127.0.0.1', port, path: `/${i}`, agent: false, headers: { host: 'x' } }, (res) => {
      let n = 0
      res.on('data', (d: Buffer) => (n += d.length))
      res.on('end', () => finish(res.complete ? `${res.statusCode}:${n}` : 'ECONNRESET'))
      res.on('error', (e: NodeJS.ErrnoException) => finish(e.code ?? 'error'))
      res.on('aborted', () => finish('ECONNRESET'))
    })
    req.on('error', (e: NodeJS.ErrnoException) => finish(e.code ?? 'error'))
    // A 101 goes to 'upgrade' listeners (without one node hangs): a response delivered.
    req.on('upgrade', (res: http.IncomingMessage, socket: net.Socket) => {
      socket.destroy()
      finish(`${res.statusCode}:0`)
    })
    const timer = setTimeout(() => {
      finish('timeout')
      req.destroy()
    }, 3000)
    req.on('close', () => clearTimeout(timer))
  })
}

/** The same verdict from netloop's HttpClientCodec (`none`: closed with neither). */
async function netloopVerdict(t: Parameters<typeof loopFor>[0], port: number, i: number): Promise<string> {
  let status = 0
  let length = 0
  let settle: (v: string) => void = () => {}
  const verdict = new Promise<string>((resolve) => (settle = resolve))
  const ch = await dial(loopFor(t), port, (c) =>
    void c.pipeline.addLast('http', new HttpClientCodec()).addLast('app', {
      channelRead: (_ctx, m: unknown) => {
        if (m instanceof HttpClientResponse && !m.informational) {
          status = m.statusCode
          length = m.body.length
          if (!m.streaming) settle(`${status}:${length}`)
        } else if (m instanceof HttpContent) {
          length += m.data.length
          if (m.last) settle(`${status}:${length}`)
        }
      },
      exceptionCaught: (_ctx, e) => settle((e as NodeJS.ErrnoException).code ?? 'error'),
      channelInactive: (ctx) => {
        settle('none')
        ctx.fireChannelInactive()
      },
    }),
  )
  ch.writeAndFlush(new HttpClientRequest('GET', `/${i}`, { host: 'x' }))
  const timer = setTimeout(() => settle('timeout'), 3000)
  const v = await verdict
  clearTimeout(timer)
  ch.close()
  return v
}

/** Delivered responses compare by status and length; refusals of any kind are alike. */
const same = (a: string, b: string) => a === b || (!/^\d+:\d+$/.test(a) && !/^\d+:\d+$/.test(b))

/** The entry names of the table in 0009's "The client side by side with node:http". */
function documentedDifferences(): string[] {
  const doc = readFileSync(join(root, 'docs/decisions/0009-http-codec.md'), 'utf8')
  const from = doc.indexOf('## The client side by side with node:http')
  const section = doc.slice(from, doc.indexOf('\n## ', from + 1) >= 0 ? doc.indexOf('\n## ', from + 1) : undefined)
  return [...section.matchAll(/^\| ([a-z0-9]+(?:-[a-z0-9]+)+) \| /gm)].map((m) => m[1]).sort()
}

test('netloop and node:http read the response corpus alike, except for the documented differences', async (t) => {
  t.timeout(120_000)
  const entries: Entry[] = responseCorpusEntries()
  t.true(entries.length >= 50, `${entries.length} entries`)
  const port = await corpusServer(t, entries)
  const differ: string[] = []
  const rows: string[] = []
  for (let i = 0; i < entries.length; i += 10) {
    const batch = entries.slice(i, i + 10)
    const answers = await Promise.all(batch.map(async (_e, j) => [await netloopVerdict(t, port, i + j), await nodeVerdict(port, i + j)]))
    batch.forEach((e, j) => {
      const [ours, theirs] = answers[j]
      t.is(ours, e.expected, `${e.name}: netloop over a socket gives the corpus's verdict`)
      rows.push(`${e.name}: netloop ${ours}, node:http ${theirs}`)
      if (!same(ours, theirs)) differ.push(e.name)
    })
  }
  t.log(rows.join('\n'))
  t.deepEqual(differ.sort(), documentedDifferences(), 'every difference from node:http is documented (0009), and no more')
})
