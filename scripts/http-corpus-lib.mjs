// The HTTP codec's request corpus (crates/http/tests/corpus/requests.txt) and its response
// corpus (responses.txt, for the client side), and the two things every side-by-side
// comparison of the server side with node:http needs: a node:http server answering like the
// corpus test's app, and a client that sends one entry alone on a connection and reports the
// first final status. Used by scripts/http-corpus.mjs and __test__/http-corpus-vs-node.spec.ts.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { connect } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')
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

/**
 * The first final status answered to `bytes` alone on a fresh connection: `none` when nothing
 * came before the close, `reset` on an error after some bytes, `timeout` after 1.5 s.
 * @param {number} port
 * @param {Buffer} bytes
 * @returns {Promise<string>}
 */
export function ask (port, bytes) {
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

/**
 * The corpus's entries: name, the status netloop's codec gives (`expected`), the request bytes.
 * @returns {Array<{ name: string, expected: string, bytes: Buffer }>}
 */
export function corpusEntries () {
  return parseCorpus(readFileSync(corpusPath, 'utf8'))
}

/**
 * The response corpus's entries (crates/http/tests/corpus/responses.txt): name, netloop's
 * verdict (`expected`), the bytes a server sends back to one GET before it closes.
 * @returns {Array<{ name: string, expected: string, bytes: Buffer }>}
 */
export function responseCorpusEntries () {
  return parseCorpus(readFileSync(join(root, 'crates/http/tests/corpus/responses.txt'), 'utf8'))
}

/**
 * A node:http server on 127.0.0.1 answering 200 once a request's body is in, and node's default
 * answer to a bad request (400, 431 for HPE_HEADER_OVERFLOW, then close).
 * @returns {Promise<{ port: number, close(): void }>}
 */
export async function nodeCorpusServer () {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.end('ok'))
  })
  server.on('clientError', (err, socket) => {
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
    if (socket.writable) socket.end(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nConnection: close\r\n\r\n`)
    else socket.destroy()
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: server.address().port, close: () => server.close() }
}
