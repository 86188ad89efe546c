// The HTTP codec's request corpus (crates/http/tests/corpus/requests.txt) sent to netloop's
// HttpServerCodec and to node:http side by side, each request alone on a fresh connection:
// every entry where the two answer differently must be one of the differences documented in
// docs/decisions/0009-http-codec.md ("Side by side with node:http"), and every documented
// difference must still be one. scripts/http-corpus.mjs prints the same comparison as a table.
import test from 'ava'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { HttpContent, HttpRequest, HttpResponse, HttpServerCodec } from '../index'
import { loopFor, serve } from './channel-helpers'
// @ts-expect-error: a plain ES module of the scripts (JSDoc-typed), shared with scripts/http-corpus.mjs
import { ask, corpusEntries, nodeCorpusServer } from '../scripts/http-corpus-lib.mjs'

const root = join(__dirname, '..')

/** The entry names of the two difference tables in 0009's "Side by side with node:http". */
function documentedDifferences(): string[] {
  const doc = readFileSync(join(root, 'docs/decisions/0009-http-codec.md'), 'utf8')
  const section = doc.slice(doc.indexOf('## Side by side with node:http'), doc.indexOf('## Responses'))
  return [...section.matchAll(/^\| ([a-z0-9-]+)(?: \(.*?\))? \| \d{3} \|/gm)].map((m) => m[1]).sort()
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
  const node = await nodeCorpusServer()
  t.teardown(() => node.close())
  const nodePort = node.port

  const entries = corpusEntries()
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
