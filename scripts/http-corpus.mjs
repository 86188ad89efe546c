// Sends every entry of the HTTP codec's request corpus (crates/http/tests/corpus/requests.txt)
// to a node:http server, each alone on a fresh connection, and prints node's answer beside the
// status netloop's codec gives (the corpus's expected column, checked by `cargo test -p
// netloop-http --test corpus`). docs/decisions/0009-http-codec.md keeps the differences.
//
//   node scripts/http-corpus.mjs            markdown table of every entry
//   node scripts/http-corpus.mjs --diff     only the entries where the two differ
//
// node's answer: the first final status it writes; `none` when it wrote nothing before
// closing, `timeout` when it neither answered nor closed within 1.5 s (waiting for more).
// The server answers 200 once a request's body has been read, as the corpus test app does.
import { ask, corpusEntries, nodeCorpusServer } from './http-corpus-lib.mjs'

const server = await nodeCorpusServer()
const onlyDiff = process.argv.includes('--diff')
const entries = corpusEntries()
const rows = []
let differ = 0
for (const e of entries) {
  const node = await ask(server.port, e.bytes)
  const same = node === e.expected
  if (!same) differ++
  if (!onlyDiff || !same) rows.push(`| ${e.name} | ${e.expected} | ${node} | ${same ? '' : 'differs'} |`)
}
server.close()
console.log(`node ${process.version}, ${entries.length} entries, ${differ} differ\n`)
console.log('| entry | netloop | node:http | |')
console.log('| --- | --- | --- | --- |')
console.log(rows.join('\n'))
