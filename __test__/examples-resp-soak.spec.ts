import test from 'ava'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { connect, has, reader, resp, sleep, startExample } from './example-helpers'

/** The resident set size of process `pid`, in MiB (Linux). */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

const LOAD_MS = 24_000
const WARM_MS = 6_000

test.serial('resp-server under a redis-benchmark soak with a fixed keyspace: the RSS levels off and the keyspace stays bounded', async (t) => {
  if (process.platform !== 'linux') return t.pass()
  if (!has(t, 'redis-benchmark')) return
  t.timeout(LOAD_MS + 30_000)
  const ex = await startExample(t, 'resp-server', ['--idle', '0'])
  const pid = ex.proc.pid!
  // SET and GET on keys out of 1000 (-r), pipelined, from 20 connections, until killed.
  const bench = spawn('redis-benchmark', ['-p', String(ex.port), '-t', 'set,get', '-r', '1000', '-d', '64', '-P', '16', '-c', '20', '-l', '-q'], { stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => bench.kill('SIGKILL'))
  let out = ''
  bench.stdout.on('data', (d) => (out += d))
  const samples: Array<[number, number]> = []
  const start = Date.now()
  while (Date.now() - start < LOAD_MS) {
    await sleep(500)
    samples.push([Date.now() - start, rssMiB(pid)])
  }
  bench.kill('SIGKILL')
  t.regex(out, /SET: /, 'the benchmark ran')
  const warm = Math.max(...samples.filter(([at]) => at <= WARM_MS).map(([, r]) => r))
  const half = Math.max(...samples.filter(([at]) => at <= (WARM_MS + LOAD_MS) / 2).map(([, r]) => r))
  const end = Math.max(...samples.filter(([at]) => at > LOAD_MS - 4000).map(([, r]) => r))
  t.log(`RSS MiB: after ${WARM_MS / 1000} s ${warm.toFixed(1)}, mid-run ${half.toFixed(1)}, last 4 s ${end.toFixed(1)}`)
  // Generous: the heap still settles for a while under load (measured: +10 MiB over 80 s, then
  // flat). A leak per command (millions of commands here) or per connection would show as
  // tens to hundreds of MiB; random keys (-r 1000000) grow the store by about 2 MiB/s.
  t.true(end - warm < 40, `RSS grew from ${warm.toFixed(1)} to ${end.toFixed(1)} MiB`)
  t.true(end - half < 24, `RSS still grew in the second half: ${half.toFixed(1)} to ${end.toFixed(1)} MiB`)
  const s = await connect(t, ex.port)
  const r = reader(s)
  s.write(resp('DBSIZE'))
  await r.includes('\r\n')
  const keys = Number(/^:(\d+)\r\n/.exec(r.text())?.[1])
  t.true(keys > 0 && keys <= 1000, `DBSIZE ${keys}`)
})
