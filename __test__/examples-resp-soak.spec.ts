import test from 'ava'
import { readFileSync } from 'node:fs'
import { connect, resp, sleep, startExample } from './example-helpers'

// A soak of the RESP example with a fixed keyspace: the RSS must level off. The load is paced
// (10 connections, a pipelined batch of 100 commands every 20 ms each: about 50 000 commands
// a second) so that it leaves the other test files their CPU; over the run that is about a
// million commands, enough for a leak of tens of bytes per command to show.

/** The resident set size of process `pid`, in MiB (Linux). */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

const KEYS = 1000
const VALUE = 'v'.repeat(64)
const BATCH = 100 // commands per batch: SET and GET alternating
const CONNECTIONS = 10
const PERIOD_MS = 20
const LOAD_MS = 20_000
const WARM_MS = 5_000

/** Batches over random keys of the keyspace, built once, and the size of their replies. */
const batches = Array.from({ length: 16 }, () => {
  const cmds: Buffer[] = []
  for (let i = 0; i < BATCH / 2; i++) {
    const key = `key:${Math.floor(Math.random() * KEYS)}`
    cmds.push(resp('SET', key, VALUE), resp('GET', key))
  }
  return Buffer.concat(cmds)
})
const REPLY_BYTES = (BATCH / 2) * ('+OK\r\n'.length + `$${VALUE.length}\r\n${VALUE}\r\n`.length)

test.serial('resp-server soaked with a fixed keyspace: the RSS levels off and the keyspace stays bounded', async (t) => {
  if (process.platform !== 'linux') return t.pass()
  t.timeout(LOAD_MS + 30_000)
  const ex = await startExample(t, 'resp-server', ['--idle', '0'])
  const pid = ex.proc.pid!
  let commands = 0
  let stop = false
  const clients = Array.from({ length: CONNECTIONS }, async (_, c) => {
    const s = await connect(t, ex.port)
    let received = 0
    let waiting: (() => void) | undefined
    s.on('data', (d: Buffer) => {
      received += d.length
      waiting?.()
    })
    for (let n = c; !stop; n++) {
      const due = Date.now() + PERIOD_MS
      const want = received + REPLY_BYTES
      s.write(batches[n % batches.length])
      while (received < want) await new Promise<void>((r) => (waiting = r))
      commands += BATCH
      await sleep(Math.max(0, due - Date.now()))
    }
    s.destroy()
  })
  const samples: Array<[number, number]> = []
  const start = Date.now()
  while (Date.now() - start < LOAD_MS) {
    await sleep(500)
    samples.push([Date.now() - start, rssMiB(pid)])
  }
  stop = true
  await Promise.all(clients)
  const warm = Math.max(...samples.filter(([at]) => at <= WARM_MS).map(([, r]) => r))
  const half = Math.max(...samples.filter(([at]) => at <= (WARM_MS + LOAD_MS) / 2).map(([, r]) => r))
  const end = Math.max(...samples.filter(([at]) => at > LOAD_MS - 4000).map(([, r]) => r))
  t.log(`${commands} commands; RSS MiB: after ${WARM_MS / 1000} s ${warm.toFixed(1)}, mid-run ${half.toFixed(1)}, last 4 s ${end.toFixed(1)}`)
  t.true(commands > 100_000, `only ${commands} commands ran`)
  // Generous: the heap still settles for a while under load (measured under redis-benchmark
  // -r 1000: +10 MiB over 80 s, then flat). Random keys (-r 10000000) grew it by 250 MiB in 20 s.
  t.true(end - warm < 40, `RSS grew from ${warm.toFixed(1)} to ${end.toFixed(1)} MiB`)
  t.true(end - half < 32, `RSS still grew in the second half: ${half.toFixed(1)} to ${end.toFixed(1)} MiB`)
  const s = await connect(t, ex.port)
  const reply = new Promise<string>((resolve) => s.once('data', (d) => resolve(d.toString())))
  s.write(resp('DBSIZE'))
  const keys = Number(/^:(\d+)\r\n/.exec(await reply)?.[1])
  t.true(keys > 0 && keys <= KEYS, `DBSIZE ${keys}`)
})
