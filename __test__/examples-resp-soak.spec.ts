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

// A soak with writes on random keys of a bounded keyspace (SET, INCR and MSET, as
// redis-benchmark -r does), after the keyspace was filled: the memory must stay proportional to
// the data. Values kept as `Buffer.from` copies lived in Node's shared 8 KiB pool slabs, each
// held by any live value in it: overwriting keys at random pinned more and more slabs, and the
// RSS kept rising after the key count stopped (resp-store.ts, `ownCopy`).
const W_KEYS = 300_000
const W_COUNTERS = 10_000
const W_VALUE = 'xxx' // redis-benchmark's default value size (-d 3)
const W_CONNECTIONS = 4
const W_BATCH = 100
const W_PERIOD_MS = 10
const W_WARM_MS = 5_000
const W_LOAD_MS = 50_000
const W_WINDOW_MS = 12_000

/** A batch of writes on random keys: 60 SET, 20 INCR, 20 MSET of two keys. */
function writeBatch(): { bytes: Buffer; replies: number } {
  const r = (n: number) => Math.floor(Math.random() * n)
  const cmds: Buffer[] = []
  for (let i = 0; i < W_BATCH; i++) {
    if (i % 5 === 1) cmds.push(resp('INCR', `counter:${r(W_COUNTERS)}`))
    else if (i % 5 === 3) cmds.push(resp('MSET', `key:${r(W_KEYS)}`, W_VALUE, `key:${r(W_KEYS)}`, W_VALUE))
    else cmds.push(resp('SET', `key:${r(W_KEYS)}`, W_VALUE))
  }
  return { bytes: Buffer.concat(cmds), replies: W_BATCH }
}

/** Counts the RESP replies in `d` (each ends with a CRLF; none here holds one inside). */
function countReplies(d: Buffer): number {
  let n = 0
  for (let i = d.indexOf(10); i >= 0; i = d.indexOf(10, i + 1)) n++
  return n
}

test.serial('resp-server soaked with writes on random keys of a full keyspace: the last window’s RSS stays within 10 % of the first', async (t) => {
  if (process.platform !== 'linux') return t.pass()
  t.timeout(W_LOAD_MS + W_WARM_MS + 60_000)
  const ex = await startExample(t, 'resp-server', ['--idle', '0'])
  const pid = ex.proc.pid!
  // Fill the keyspace first, in order: every key and counter exists before the windows.
  const filler = await connect(t, ex.port)
  let filled = 0
  let wake: (() => void) | undefined
  filler.on('data', (d: Buffer) => {
    filled += countReplies(d)
    wake?.()
  })
  const total = W_KEYS + W_COUNTERS
  for (let i = 0; i < total; i += 1000) {
    const cmds: Buffer[] = []
    for (let j = i; j < Math.min(total, i + 1000); j++) cmds.push(j < W_KEYS ? resp('SET', `key:${j}`, W_VALUE) : resp('SET', `counter:${j - W_KEYS}`, '0'))
    filler.write(Buffer.concat(cmds))
    while (filled < Math.min(total, i + 1000)) await new Promise<void>((r) => (wake = r))
  }
  const dbsize = new Promise<string>((resolve) => filler.once('data', (d) => resolve(d.toString())))
  filler.write(resp('DBSIZE'))
  t.is(await dbsize, `:${total}\r\n`)
  filler.destroy()

  let commands = 0
  let stop = false
  const clients = Array.from({ length: W_CONNECTIONS }, async () => {
    const s = await connect(t, ex.port)
    let received = 0
    let waiting: (() => void) | undefined
    s.on('data', (d: Buffer) => {
      received += countReplies(d)
      waiting?.()
    })
    while (!stop) {
      const due = Date.now() + W_PERIOD_MS
      const { bytes, replies } = writeBatch()
      const want = received + replies
      s.write(bytes)
      while (received < want) await new Promise<void>((r) => (waiting = r))
      commands += replies
      await sleep(Math.max(0, due - Date.now()))
    }
    s.destroy()
  })
  await sleep(W_WARM_MS)
  const samples: Array<[number, number]> = []
  const start = Date.now()
  while (Date.now() - start < W_LOAD_MS) {
    await sleep(250)
    samples.push([Date.now() - start, rssMiB(pid)])
  }
  stop = true
  await Promise.all(clients)
  const first = Math.max(...samples.filter(([at]) => at <= W_WINDOW_MS).map(([, r]) => r))
  const last = Math.max(...samples.filter(([at]) => at > W_LOAD_MS - W_WINDOW_MS).map(([, r]) => r))
  const all = samples.map(([at, r]) => `${(at / 1000).toFixed(0)}:${r.toFixed(0)}`).filter((_, i) => i % 8 === 0)
  t.log(`${commands} writes on ${W_KEYS} keys; RSS MiB: first ${W_WINDOW_MS / 1000} s max ${first.toFixed(1)}, last ${W_WINDOW_MS / 1000} s max ${last.toFixed(1)} (${all.join(' ')})`)
  t.true(commands > 500_000, `only ${commands} commands ran`)
  t.true(last <= first * 1.1, `RSS rose from ${first.toFixed(1)} to ${last.toFixed(1)} MiB`)
})
