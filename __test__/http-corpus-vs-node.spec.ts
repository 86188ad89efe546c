// The HTTP codec's request corpus (crates/http/tests/corpus/requests.txt) sent to netloop's
// HttpServerCodec and to node:http side by side, each request alone on a fresh connection:
// every entry where the two answer differently must be one of the differences documented in
// docs/decisions/0009-http-codec.md ("Side by side with node:http"), and every documented
// difference must still be one. scripts/http-corpus.mjs prints the same comparison as a table.
import test from 'ava'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { connect } from 'node:net'
import { join } from 'node:path'
import { HttpContent, HttpRequest, HttpResponse, HttpServerCodec } from '../index'
import { loopFor, serve } from './channel-helpers'

const root = join(__dirname, '..')

function unescape(s: string): Buffer {
  const out: number[] = []
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '\\') {
      out.push(...Buffer.from(s[i], 'utf8'))
      continue
    }
    const c = s[++i]
    if (c === 'r') out.push(13)
    else if (c === 'n') out.push(10)
    else if (c === 't') out.push(9)
    else if (c === '\\') out.push(92)
    else if (c === 'x') {
      out.push(parseInt(s.slice(i + 1, i + 3), 16))
      i += 2
    } else throw new Error(`unknown escape \\${c}`)
  }
  return Buffer.from(out)
}

function corpus(): Array<{ name: string; bytes: Buffer }> {
  const entries: Array<{ name: string; chunks: Buffer[] }> = []
  for (const line of readFileSync(join(root, 'crates/http/tests/corpus/requests.txt'), 'utf8').split('\n')) {
    if (line.startsWith('=== ')) entries.push({ name: line.slice(4).split(' ')[1], chunks: [] })
    else if (line !== '' && !line.startsWith('#')) {
      entries.at(-1)!.chunks.push(unescape(line.replace(/\{\{(\d+)\*(.*?)\}\}/g, (_, n, text) => text.repeat(Number(n)))))
    }
  }
  return entries.map((e) => ({ name: e.name, bytes: Buffer.concat(e.chunks) }))
}

/** The entry names of the two difference tables in 0009's "Side by side with node:http". */
function documentedDifferences(): string[] {
  const doc = readFileSync(join(root, 'docs/decisions/0009-http-codec.md'), 'utf8')
  const section = doc.slice(doc.indexOf('## Side by side with node:http'), doc.indexOf('## Responses'))
  return [...section.matchAll(/^\| ([a-z0-9-]+)(?: \(.*?\))? \| \d{3} \|/gm)].map((m) => m[1]).sort()
}

/** The first final status answered to `bytes` alone on a connection; `none` if it closed, `timeout` after 1.5 s. */
function ask(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    let done = false
    const finish = (answer: string) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve(answer)
    }
    const timer = setTimeout(() => finish('timeout'), 1500)
    socket.on('connect', () => socket.write(bytes))
    socket.on('data', (d) => {
      received += d.toString('latin1')
      for (const m of received.matchAll(/HTTP\/1\.[01] (\d{3})/g)) if (Number(m[1]) >= 200) return finish(m[1])
    })
    socket.on('error', () => finish('none'))
    socket.on('close', () => finish('none'))
  })
}

test('netloop and node:http answer the corpus alike, except for the documented differences', async (t) => {
  t.timeout(60_000)
  const loop = loopFor(t)
  const { port: netloopPort } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
      // 200 once the request's body is in, as node's app below and the Rust corpus test do
      channelRead: (ctx, m: HttpRequest | HttpContent) => {
        if ((m instanceof HttpRequest && !m.streaming) || (m instanceof HttpContent && m.last)) ctx.writeAndFlush(new HttpResponse(200, {}, 'ok'))
      },
      exceptionCaught: () => {},
    }),
  )
  const node = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.end('ok'))
  })
  node.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // node's default answer: 400 (431 for HPE_HEADER_OVERFLOW), then close
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
    if (socket.writable) socket.end(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nConnection: close\r\n\r\n`)
    else socket.destroy()
  })
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve))
  t.teardown(() => void node.close())
  const nodePort = (node.address() as { port: number }).port

  const entries = corpus()
  t.true(entries.length >= 90, `${entries.length} entries`)
  const differ: string[] = []
  const rows: string[] = []
  for (let i = 0; i < entries.length; i += 20) {
    const batch = entries.slice(i, i + 20)
    const answers = await Promise.all(batch.map(async (e) => [await ask(netloopPort, e.bytes), await ask(nodePort, e.bytes)]))
    batch.forEach((e, j) => {
      const [ours, theirs] = answers[j]
      if (ours !== theirs) {
        differ.push(e.name)
        rows.push(`${e.name}: netloop ${ours}, node:http ${theirs}`)
      }
    })
  }
  t.log(rows.join('\n'))
  t.deepEqual(differ.sort(), documentedDifferences(), 'every difference from node:http is documented (0009), and no more')
})
