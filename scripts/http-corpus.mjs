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
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { connect } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const corpusPath = join(root, 'crates/http/tests/corpus/requests.txt')

function expandRepeats (line) {
  return line.replace(/\{\{(\d+)\*(.*?)\}\}/g, (_, n, text) => text.repeat(Number(n)))
}

function unescape (s) {
  const out = []
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '\\') {
      out.push(...Buffer.from(s[i], 'utf8'))
      continue
    }
    const c = s[i + 1]
    if (c === 'r') out.push(13)
    else if (c === 'n') out.push(10)
    else if (c === 't') out.push(9)
    else if (c === '\\') out.push(92)
    else if (c === 'x') {
      out.push(parseInt(s.slice(i + 2, i + 4), 16))
      i += 2
    } else throw new Error(`unknown escape \\${c}`)
    i++
  }
  return Buffer.from(out)
}

function parseCorpus (text) {
  const entries = []
  for (const line of text.split('\n')) {
    if (line.startsWith('=== ')) {
      const [expected, name] = line.slice(4).split(/ (.*)/s)
      entries.push({ name, expected, chunks: [] })
    } else if (line.startsWith('#') || line === '') {
      continue
    } else {
      entries.at(-1).chunks.push(unescape(expandRepeats(line)))
    }
  }
  return entries.map((e) => ({ name: e.name, expected: e.expected, bytes: Buffer.concat(e.chunks) }))
}

function ask (port, bytes) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    let done = false
    const finish = (answer) => {
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
      for (const m of received.matchAll(/HTTP\/1\.[01] (\d{3})/g)) {
        if (Number(m[1]) >= 200) return finish(m[1])
      }
    })
    socket.on('error', () => finish(received ? 'reset' : 'none'))
    socket.on('close', () => finish('none'))
  })
}

const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => res.end('ok'))
})
server.on('clientError', (err, socket) => {
  // node's default answer, kept: 400 (431 for HPE_HEADER_OVERFLOW), then close.
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
  if (socket.writable) socket.end(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nConnection: close\r\n\r\n`)
  else socket.destroy()
})
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
const { port } = server.address()

const onlyDiff = process.argv.includes('--diff')
const entries = parseCorpus(readFileSync(corpusPath, 'utf8'))
const rows = []
let differ = 0
for (const e of entries) {
  const node = await ask(port, e.bytes)
  const same = node === e.expected
  if (!same) differ++
  if (!onlyDiff || !same) rows.push(`| ${e.name} | ${e.expected} | ${node} | ${same ? '' : 'differs'} |`)
}
server.close()
console.log(`node ${process.version}, ${entries.length} entries, ${differ} differ\n`)
console.log('| entry | netloop | node:http | |')
console.log('| --- | --- | --- | --- |')
console.log(rows.join('\n'))
