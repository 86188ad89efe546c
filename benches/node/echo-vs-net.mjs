// Side-by-side echo: the netloop Rust echo server (one worker loop) against a node:net echo
// server, both driven by the same netloop echo client, in the same run.
//
//   node benches/node/echo-vs-net.mjs [seconds]
//
// Builds the Rust examples (release) first. Ratios > 1 mean netloop did more round trips/s.
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const seconds = process.argv[2] ?? '3'
execFileSync('cargo', ['build', '--release', '-q', '-p', 'netloop-transport', '--examples'], { cwd: root, stdio: 'inherit' })
const bin = (name) => join(root, 'target', 'release', 'examples', name)

async function start(cmd, args, readyText) {
  const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  for await (const chunk of child.stdout) {
    out += chunk
    if (out.includes(readyText)) break
  }
  return child
}

function client(port, connections) {
  const out = execFileSync(bin('echo_client'), [`127.0.0.1:${port}`, String(connections), '64', seconds], { encoding: 'utf8' })
  const rps = Number(/= (\d+)\/s/.exec(out)?.[1])
  const lat = Number(/mean latency ([\d.]+) µs/.exec(out)?.[1])
  if (!Number.isFinite(rps)) throw new Error(`unexpected client output: ${out}`)
  return { rps, lat }
}

const servers = {
  'netloop (Rust echo_server, 1 worker loop)': await start(bin('echo_server'), ['127.0.0.1:8017', '1'], 'listening'),
  'node:net': await start(process.execPath, [join(root, 'benches/node/net-echo-server.mjs'), '8018'], 'ready'),
}
const ports = { 'netloop (Rust echo_server, 1 worker loop)': 8017, 'node:net': 8018 }
const rows = []
for (const connections of [1, 50]) {
  const r = {}
  for (const name of Object.keys(servers)) r[name] = client(ports[name], connections)
  const [a, b] = Object.values(r)
  rows.push({
    connections,
    'netloop rt/s': Math.round(a.rps),
    'node:net rt/s': Math.round(b.rps),
    'netloop mean µs': a.lat,
    'node:net mean µs': b.lat,
    'throughput ratio': (a.rps / b.rps).toFixed(2) + 'x',
  })
}
console.table(rows)
for (const child of Object.values(servers)) {
  child.kill()
  await once(child, 'exit')
}
