import test from 'ava'
import { join } from 'node:path'
import { connect, has, interrupt, reader, resp, run, sleep, startExample, statsOf } from './example-helpers'

// ---- resp-server ----

test.serial('resp-server: redis-cli PING, SET/GET/DEL/EXISTS/INCR, and Redis error texts', async (t) => {
  if (!has(t, 'redis-cli')) return
  const ex = await startExample(t, 'resp-server')
  const cli = async (...args: string[]) => (await run('redis-cli', ['-p', String(ex.port), ...args])).stdout.replace(/\n+$/, '')
  t.is(await cli('ping'), 'PONG')
  t.is(await cli('ping', 'hello there'), 'hello there')
  t.is(await cli('echo', 'a\r\nb'), 'a\r\nb')
  t.is(await cli('set', 'greeting', 'hello'), 'OK')
  t.is(await cli('get', 'greeting'), 'hello')
  t.is(await cli('get', 'nope'), '')
  t.is(await cli('exists', 'greeting', 'greeting', 'nope'), '2')
  t.is(await cli('set', 'n', '41'), 'OK')
  t.is(await cli('incr', 'n'), '42')
  t.is(await cli('incr', 'fresh'), '1')
  t.is(await cli('incr', 'greeting'), 'ERR value is not an integer or out of range')
  t.is(await cli('set', 'big', '9223372036854775807'), 'OK')
  t.is(await cli('incr', 'big'), 'ERR increment or decrement would overflow')
  t.is(await cli('del', 'greeting', 'n', 'nope'), '2')
  t.is(await cli('exists', 'greeting', 'n'), '0')
  t.is(await cli('foo', 'bar'), "ERR unknown command 'foo', with args beginning with: 'bar' ")
  t.is(await cli('get'), "ERR wrong number of arguments for 'get' command")
  t.is(await cli('set', 'k', 'v', 'px', '1000'), 'OK')
  t.is(await cli('get', 'k'), 'v')
  await sleep(1100)
  t.is(await cli('get', 'k'), '')
  t.is(await cli('set', 'k', 'v', 'bogus'), 'ERR syntax error')
  t.is(await cli('config', 'get', 'appendonly'), 'appendonly\nno')
  t.is(await cli('command'), '')
  // SET updates a live key in place: GET still answers the old value, an expiry is dropped.
  t.is(await cli('set', 'p', 'one'), 'OK')
  t.is(await cli('set', 'p', 'two', 'get'), 'one')
  t.is(await cli('get', 'p'), 'two')
  t.is(await cli('set', 'p', 'three', 'ex', '100'), 'OK')
  t.is(await cli('ttl', 'p'), '100')
  t.is(await cli('set', 'p', 'four'), 'OK')
  t.is(await cli('ttl', 'p'), '-1')
  t.is(await cli('set', 'p', 'five', 'nx', 'get'), 'four')
  t.is(await cli('get', 'p'), 'four')
})

test.serial('resp-server: an inline command (as typed in telnet) over a raw socket', async (t) => {
  const ex = await startExample(t, 'resp-server')
  const s = await connect(t, ex.port)
  const r = reader(s)
  s.write('PING\r\n')
  await r.bytes(7)
  t.is(r.text(), '+PONG\r\n')
  s.write('SET "two words" \'x y\'\nGET "two words"\r\nEXISTS "two words" nope\r\n\r\nQUIT\r\nPING\r\n')
  await r.closed()
  t.is(r.text(), '+PONG\r\n+OK\r\n$3\r\nx y\r\n:1\r\n+OK\r\n')
})

test.serial('resp-server: keys whose hashes collide keep their own values; DEL, DBSIZE and the expiry sweep see each', async (t) => {
  // key:38024 and key:363380 (and key:38025 and key:363381) share a 30-bit FNV-1a hash: one
  // bucket of the store, each pair a chain of two entries.
  const ex = await startExample(t, 'resp-server')
  const s = await connect(t, ex.port)
  const r = reader(s)
  s.write('SET key:38024 a\r\nSET key:363380 b\r\nGET key:38024\r\nGET key:363380\r\nDBSIZE\r\n')
  s.write('DEL key:38024\r\nGET key:38024\r\nGET key:363380\r\nSET key:38024 c\r\nDEL key:38024\r\nEXISTS key:38024 key:363380\r\n')
  s.write('SET key:38025 x PX 20\r\nSET key:363381 y\r\nDBSIZE\r\n')
  const want = '+OK\r\n+OK\r\n$1\r\na\r\n$1\r\nb\r\n:2\r\n' + ':1\r\n$-1\r\n$1\r\nb\r\n+OK\r\n:1\r\n:1\r\n' + '+OK\r\n+OK\r\n:3\r\n'
  await r.bytes(want.length)
  t.is(r.text(), want)
  // The sweep (once a second) drops the expired key from its chain without a GET touching it:
  // DBSIZE goes from 3 to 2 (asked every 100 ms, for at most 10 s).
  let seen = want.length
  for (let i = 0; i < 100 && !r.text().endsWith(':2\r\n'); i++) {
    if (i > 0) await sleep(100)
    s.write('DBSIZE\r\n')
    await r.bytes((seen += 4))
  }
  t.true(r.text().endsWith(':2\r\n'), 'the expired key left DBSIZE')
  s.write('GET key:363381\r\nGET key:363380\r\nGET key:38025\r\n')
  await r.bytes(seen + 19)
  t.is(r.text().slice(seen), '$1\r\ny\r\n$1\r\nb\r\n$-1\r\n')
})

test.serial('resp-server: pipelined commands in one write get their replies in order, flushed together', async (t) => {
  const ex = await startExample(t, 'resp-server')
  const s = await connect(t, ex.port)
  const r = reader(s)
  const value = Buffer.from('binary\r\n\0\xff value', 'latin1')
  const cmds = [resp('SET', 'a', value), resp('GET', 'a'), resp('INCR', 'c'), resp('INCR', 'c'), resp('DEL', 'a', 'c', 'x'), resp('GET', 'a'), resp('PING')]
  const expected = Buffer.concat([
    Buffer.from('+OK\r\n'),
    Buffer.from(`$${value.length}\r\n`),
    value,
    Buffer.from('\r\n:1\r\n:2\r\n:2\r\n$-1\r\n+PONG\r\n'),
  ])
  const many: Buffer[] = []
  for (let i = 0; i < 500; i++) many.push(resp('INCR', 'counter'))
  s.write(Buffer.concat([...cmds, ...many, resp('GET', 'counter')]))
  const tail = '$3\r\n500\r\n'
  let manyReplies = ''
  for (let i = 1; i <= 500; i++) manyReplies += `:${i}\r\n`
  const total = expected.length + manyReplies.length + tail.length
  await r.bytes(total)
  await sleep(50)
  t.deepEqual(r.data(), Buffer.concat([expected, Buffer.from(manyReplies), Buffer.from(tail)]))
})

test.serial('resp-server: command names match in any case, and only exactly (a near miss is an unknown command)', async (t) => {
  const ex = await startExample(t, 'resp-server')
  const s = await connect(t, ex.port)
  const r = reader(s)
  // '\x07et' and 'G\x05T' lower to 'get' under a blind `| 0x20`; 'gett' and 'ge' differ in length.
  const cmds = [resp('PiNg'), resp('sEt', 'k', 'v'), resp('GET', 'k'), resp('\x07et', 'k'), resp('G\x05T', 'k'), resp('gett', 'k'), resp('ge', 'k'), resp('Get')]
  s.write(Buffer.concat(cmds))
  const want =
    '+PONG\r\n+OK\r\n$1\r\nv\r\n' +
    "-ERR unknown command '\x07et', with args beginning with: 'k' \r\n" +
    "-ERR unknown command 'G\x05T', with args beginning with: 'k' \r\n" +
    "-ERR unknown command 'gett', with args beginning with: 'k' \r\n" +
    "-ERR unknown command 'ge', with args beginning with: 'k' \r\n" +
    "-ERR wrong number of arguments for 'get' command\r\n"
  await r.bytes(want.length)
  t.is(r.text(), want)
})

test.serial('resp-server: a command split into 1-byte writes is answered once, whole', async (t) => {
  const ex = await startExample(t, 'resp-server')
  const s = await connect(t, ex.port)
  const r = reader(s)
  const bytes = Buffer.concat([resp('SET', 'split', 'a\r\nb$*'), resp('GET', 'split'), Buffer.from('PING\r\n')])
  for (const b of bytes) {
    s.write(Buffer.from([b]))
    await sleep(1)
  }
  const expected = '+OK\r\n$6\r\na\r\nb$*\r\n+PONG\r\n'
  await r.bytes(expected.length)
  await sleep(50)
  t.is(r.text(), expected)
})

test.serial('resp-server: a protocol error gets the Redis error, then the connection closes', async (t) => {
  const ex = await startExample(t, 'resp-server')
  const s = await connect(t, ex.port)
  const r = reader(s)
  s.write(Buffer.concat([resp('PING'), Buffer.from('*1\r\nx\r\n')]))
  await r.closed()
  t.regex(r.text(), /^\+PONG\r\n-ERR Protocol error: [^\r\n]*'x'[^\r\n]*\r\n$/)
})

test.serial('resp-server: redis-benchmark (ping, set, get; pipelined) completes with non-zero rates', async (t) => {
  if (!has(t, 'redis-benchmark')) return
  const ex = await startExample(t, 'resp-server')
  const { stdout, stderr } = await run('redis-benchmark', ['-p', String(ex.port), '-n', '2000', '-c', '10', '-P', '8', '-t', 'ping,set,get', '-q'], 120_000)
  const rates = new Map([...stdout.matchAll(/([A-Z_]+): ([\d.]+) requests per second/g)].map((m) => [m[1], Number(m[2])]))
  t.log([...rates].map(([k, v]) => `${k} ${v}/s`).join(', '))
  for (const name of ['PING_INLINE', 'PING_MBULK', 'SET', 'GET']) {
    t.true((rates.get(name) ?? 0) > 0, `${name} in: ${stdout}`)
  }
  t.notRegex(stderr, /error/i)
  t.is(ex.stderr(), '')
})

for (const mode of ['hand-off', 'reuse-port'] as const) {
  test.serial(`resp-server --threads 2 (${mode}): redis-benchmark completes, both workers serve connections, SIGINT exits 0`, async (t) => {
    if (!has(t, 'redis-benchmark')) return
    const ex = await startExample(t, 'resp-server', ['--threads', '2', '--stats', ...(mode === 'reuse-port' ? ['--reuse-port'] : [])])
    t.regex(ex.stdout(), mode === 'reuse-port' ? /listening on 127\.0\.0\.1:\d+ \(2 worker threads, SO_REUSEPORT\)/ : /listening on 127\.0\.0\.1:\d+ \(2 worker threads\)/)
    const args = ['-p', String(ex.port), '-P', '16', '-c', '50', '-n', '20000', '-t', 'ping,set,get', '-q']
    const { stdout, stderr } = await run('redis-benchmark', args, 120_000)
    const rates = new Map([...stdout.matchAll(/([A-Z_]+): ([\d.]+) requests per second/g)].map((m) => [m[1], Number(m[2])]))
    t.log([...rates].map(([k, v]) => `${k} ${v}/s`).join(', '))
    for (const name of ['PING_INLINE', 'PING_MBULK', 'SET', 'GET']) {
      t.true((rates.get(name) ?? 0) > 0, `${name} in: ${stdout}`)
    }
    t.notRegex(stderr, /error/i)
    t.is(await interrupt(ex), 0)
    const stats = statsOf(ex)
    t.log(stats.map((m, i) => `worker ${i}: ${m.events} events delivered, ${m.ops} ops`).join('; '))
    t.is(stats.length, 2)
    // The native codec hands JS commands, not bytes (bytesIn/bytesOut stay 0): each worker's
    // share shows as channel events delivered to JS and ops (replies) JS wrote.
    for (const m of stats) {
      t.true(m.events > 0 && m.ops > 0, JSON.stringify(m))
    }
    t.is(ex.stderr(), '')
  })
}

test.serial('resp-server --threads 2: each worker has its own keyspace, commands still work on each', async (t) => {
  const ex = await startExample(t, 'resp-server', ['--threads', '2'])
  // The boss hands connections to the workers in turn: a and b land on different workers.
  const a = await connect(t, ex.port)
  const ar = reader(a)
  const b = await connect(t, ex.port)
  const br = reader(b)
  a.write(resp('SET', 'k', 'from a'))
  await ar.includes('+OK\r\n')
  a.write(resp('GET', 'k'))
  await ar.includes('from a\r\n')
  b.write(resp('GET', 'k'))
  await br.bytes(5)
  t.is(br.text(), '$-1\r\n', 'the other worker does not see the key (see the header of resp-server.ts)')
  b.write(resp('INCR', 'n'))
  await br.includes(':1\r\n')
})
