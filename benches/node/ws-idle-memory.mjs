// Memory per idle, upgraded WebSocket connection of a server (issue #37's target), split into
// what a full collection leaves on the JS heap and what is native.
//
//   node benches/node/ws-idle-memory.mjs [--conns N] [--server netloop-native|netloop-js|ws]
//                                        [--sources K] [--repeat R] [--snapshots DIR]
//                                        [--server-flags "--max-semi-space-size=1 ..."] [--spaces]
//                                        [--no-message]
//
// The server (benches/node/servers/ws-netloop.mjs [--native] or ws-node.mjs) runs in a child
// process with --expose-gc and servers/memory-probe.cjs preloaded. This process opens N
// connections (default 2,000; from 127.0.0.1 .. 127.0.0.K, default 2), sends each the
// upgrade request and one masked text frame, waits for the 101 and the echo, then asks the
// server for a collection and its figures; the same before the connections, and the
// difference is divided by N. Printed: rss (from /proc: RssAnon, the heap pages), heapUsed,
// external, arrayBuffers per connection, and native ≈ RssAnon − heapTotal − external deltas.
// Needs `ulimit -n` above N (the script raises nothing itself).
import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const opt = (name, dflt) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : dflt
}
const CONNS = Number(opt('--conns', 2000))
const SERVER = opt('--server', 'netloop-native')
const SOURCES = Number(opt('--sources', 2))
const REPEAT = Number(opt('--repeat', 1))
// --snapshots DIR: heap snapshots before and after the connections (DIR/before.heapsnapshot,
// DIR/after.heapsnapshot), to compare in DevTools.
const SNAPSHOTS = opt('--snapshots', undefined)
// --server-flags: Node options for the server process (V8's heap sizing, for instance).
// --settle S: seconds the connections stay idle before the reading (default 0.5).
const SETTLE_MS = Number(opt('--settle', 0.5)) * 1000
// --spaces: V8's heap spaces (size and used) per connection as well.
const SPACES = process.argv.includes('--spaces')
// --no-message: nothing sent after the handshake (as `ws-load --mode idle`, the published idle
// workload, does): what a connection that never reached the application keeps.
const NO_MESSAGE = process.argv.includes('--no-message')
const SERVER_FLAGS = (opt('--server-flags', '') ?? '').split(' ').filter(Boolean)

const servers = {
  'netloop-native': [join(here, 'servers/ws-netloop.mjs'), '--native'],
  'netloop-js': [join(here, 'servers/ws-netloop.mjs')],
  ws: [join(here, 'servers/ws-node.mjs')],
}
if (!servers[SERVER]) throw new Error(`--server: one of ${Object.keys(servers).join(', ')}`)

const child = spawn(process.execPath, [...SERVER_FLAGS, '--expose-gc', '--require', join(here, 'servers/memory-probe.cjs'), ...servers[SERVER]], {
  stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
})
const port = await new Promise((resolve, reject) => {
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
    const m = /^(\d+)\n/.exec(out)
    if (m) resolve(Number(m[1]))
  })
  child.once('exit', (c) => reject(new Error(`server exited (${c})`)))
})

const snapshot = (name) =>
  new Promise((resolve) => {
    child.once('message', resolve)
    child.send(`snapshot ${join(SNAPSHOTS, `${name}.heapsnapshot`)}`)
  })

const measure = () =>
  new Promise((resolve) => {
    child.once('message', resolve)
    child.send('measure')
  })

const REQUEST = Buffer.from(
  'GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
)
const KEY = [1, 2, 3, 4]
const FRAME = Buffer.from([0x81, 0x85, ...KEY, ...Buffer.from('hello').map((b, i) => b ^ KEY[i % 4])])

/** One connection: upgrade, one echoed message; resolves with the socket, left open. */
function open(i) {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', localAddress: `127.0.0.${1 + (i % SOURCES)}` })
    let got = Buffer.alloc(0)
    let upgraded = false
    s.on('error', reject)
    s.on('connect', () => s.write(REQUEST))
    s.on('data', (d) => {
      got = Buffer.concat([got, d])
      if (!upgraded) {
        const end = got.indexOf('\r\n\r\n')
        if (end < 0) return
        if (!got.subarray(0, 12).toString().includes('101')) return reject(new Error(got.toString()))
        upgraded = true
        got = got.subarray(end + 4)
        if (NO_MESSAGE) {
          s.removeAllListeners('data')
          s.pause()
          return resolve(s)
        }
        s.write(FRAME)
      }
      if (got.length >= 7) {
        s.removeAllListeners('data')
        s.pause()
        resolve(s)
      }
    })
  })
}

const kib = (b) => (b / 1024).toFixed(0)
for (let r = 0; r < REPEAT; r++) {
  if (SNAPSHOTS && r === 0) await snapshot('before')
  const before = await measure()
  const sockets = []
  for (let i = 0; i < CONNS; i += 100) {
    sockets.push(...(await Promise.all(Array.from({ length: Math.min(100, CONNS - i) }, (_, j) => open(i + j)))))
  }
  await new Promise((r) => setTimeout(r, SETTLE_MS))
  const after = await measure()
  if (SNAPSHOTS && r === 0) await snapshot('after')
  const per = (k) => (after[k] - before[k]) / CONNS
  const rss = ((after.rssAnonKib - before.rssAnonKib) * 1024) / CONNS
  const js = per('heapTotal')
  const row = {
    server: SERVER,
    ...(SERVER_FLAGS.length ? { serverFlags: SERVER_FLAGS.join(' ') } : {}),
    conns: CONNS,
    rssPerConn: Math.round(per('rss')),
    rssAnonPerConn: Math.round(rss),
    heapUsedPerConn: Math.round(per('heapUsed')),
    heapTotalPerConn: Math.round(js),
    externalPerConn: Math.round(per('external')),
    arrayBuffersPerConn: Math.round(per('arrayBuffers')),
    nativePerConn: Math.round(rss - js - per('external')),
    mallocHeapPerConn: Math.round(((after.brkKib - before.brkKib) * 1024) / CONNS),
    rssAfterKiB: Number(kib(after.rss)),
  }
  if (SPACES) {
    // V8's heap by space: size (committed) and used, per connection
    row.spaces = Object.fromEntries(
      Object.keys(after.spaces).map((k) => [
        k,
        [after.spaces[k].size - before.spaces[k].size, after.spaces[k].used - before.spaces[k].used].map((b) => Math.round(b / CONNS)),
      ]),
    )
  }
  console.log(JSON.stringify(row))
  for (const s of sockets) s.destroy()
  await new Promise((r) => setTimeout(r, 1000))
}
child.kill('SIGTERM')
