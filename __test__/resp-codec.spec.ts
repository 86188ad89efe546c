import test, { type ExecutionContext } from 'ava'
import assert from 'node:assert'
import * as net from 'node:net'
import { once } from 'node:events'
import { inspect } from 'node:util'
import { Resp, RespDecoder, RespErrorReply, type ChannelHandler, type EventLoop, type RespReply } from '../index'
import { loopFor, serve, until } from './channel-helpers'

/** A client socket that collects what it reads. */
async function client(port: number): Promise<{ s: net.Socket; got: () => string }> {
  const s = net.connect(port, '127.0.0.1')
  await once(s, 'connect')
  let out = ''
  s.on('data', (d) => (out += d.toString('latin1')))
  return { s, got: () => out }
}

/** A server answering every command with +OK; what it read, and a client socket. */
async function okServer(t: ExecutionContext): Promise<{ seen: unknown[]; s: net.Socket; got: () => string }> {
  const seen: unknown[] = []
  const app: ChannelHandler = {
    channelRead: (ctx, cmd: unknown) => {
      seen.push(cmd)
      ctx.write(Resp.OK)
    },
    channelReadComplete: (ctx) => ctx.flush(),
  }
  const { port } = await serve(t, loopFor(t), (ch) => void ch.pipeline.addLast('resp', new RespDecoder()).addLast('app', app))
  const { s, got } = await client(port)
  t.teardown(() => s.destroy())
  return { seen, s, got }
}

test('commands arrive as arrays of Buffers, replies are framed natively, pipelined in order', async (t) => {
  const loop = loopFor(t)
  const seen: unknown[] = []
  const app: ChannelHandler = {
    channelRead: (ctx, cmd: Buffer[]) => {
      seen.push(cmd)
      const name = cmd[0].toString().toUpperCase()
      if (name === 'PING') ctx.write(Resp.PONG)
      else if (name === 'ECHO') ctx.write(Resp.bulk(cmd[1]))
      else if (name === 'INCR') ctx.write(Resp.integer(41 + 1))
      else if (name === 'MGET') ctx.write(Resp.array([Resp.bulk('a'), Resp.nullBulk(), Resp.integer(-3)]))
      else ctx.write(Resp.error(`ERR unknown command '${name}'`))
    },
    channelReadComplete: (ctx) => ctx.flush(),
  }
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('resp', new RespDecoder()).addLast('app', app))
  const { s, got } = await client(port)
  t.teardown(() => s.destroy())
  s.write('*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$5\r\nhe\r\nl\r\nINCR x\r\n*1\r\n$4\r\nMGET\r\n*1\r\n$3\r\nFOO\r\n')
  const want = '+PONG\r\n$5\r\nhe\r\nl\r\n:42\r\n*3\r\n$1\r\na\r\n$-1\r\n:-3\r\n-ERR unknown command \'FOO\'\r\n'
  await until(() => got().length >= want.length)
  t.is(got(), want)
  t.true(Buffer.isBuffer((seen[1] as Buffer[])[1]), 'arguments are Buffers')
  t.is((seen[1] as Buffer[])[1].toString(), 'he\r\nl', 'binary-safe')
  t.deepEqual((seen[2] as Buffer[]).map(String), ['INCR', 'x'], 'inline command split like redis-server')
})

test('a command arrives the same whole in one read or in parts over several, and arrays of other values as JS data', async (t) => {
  const { seen, s, got } = await okServer(t)
  s.setNoDelay(true)
  const set = '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\nv\r\n1\r\n'
  s.write(set) // whole: taken natively as one frame
  await until(() => got().length >= 5)
  for (const part of [set.slice(0, 9), set.slice(9, 20), set.slice(20)]) {
    s.write(part) // in parts: taken part by part
    await new Promise((r) => setTimeout(r, 30))
  }
  s.write('*2\r\n$1\r\na\r\n:7\r\n*0\r\n')
  await until(() => got().length >= 20)
  const want = [Buffer.from('SET'), Buffer.from('k'), Buffer.from('v\r\n1')]
  t.deepEqual(seen[0], want)
  t.deepEqual(seen[1], want)
  t.deepEqual(seen[2], [Buffer.from('a'), 7])
  t.deepEqual(seen[3], [])
})

test('command arguments are Buffers (Buffer.prototype, deepStrictEqual) for every Buffer API: methods, views of views, copies, inspect', async (t) => {
  const { seen: all, s, got } = await okServer(t)
  const seen = all as Buffer[][]
  s.write(Buffer.from('*3\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$4\r\n\x00\xff\r\n\r\n', 'latin1'))
  await until(() => got().length >= 5)
  const [name, key, value] = seen[0]
  t.true(Buffer.isBuffer(name) && name instanceof Uint8Array)
  t.is(Object.getPrototypeOf(name), Buffer.prototype, 'a Buffer itself, not a look-alike')
  assert.deepStrictEqual(name, Buffer.from('SET'))
  t.true(name.equals(Buffer.from('SET')))
  t.is(key.toString('latin1'), 'key:1')
  t.is(key.readUInt8(4), 0x31)
  t.true(Buffer.isBuffer(key.subarray(4)), 'a view of a view is a Buffer')
  t.is(key.subarray(4).toString(), '1')
  t.deepEqual([...value], [0, 0xff, 13, 10], 'binary-safe')
  const copy = Buffer.from(value)
  t.deepEqual(copy, Buffer.from([0, 0xff, 13, 10]), 'a copy is a plain Buffer')
  t.true(Buffer.concat([name, key]).equals(Buffer.from('SETkey:1')))
  t.is(inspect(name), '<Buffer 53 45 54>')
  t.is(got(), '+OK\r\n')
})

/** Serves a RespDecoder whose handler answers any command with `replies`; sends one command. */
async function replyAll(t: ExecutionContext, loop: EventLoop, replies: RespReply[]): Promise<() => string> {
  const app: ChannelHandler = {
    channelRead: (ctx) => {
      for (const r of replies) ctx.write(r)
    },
    channelReadComplete: (ctx) => ctx.flush(),
  }
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('resp', new RespDecoder()).addLast('app', app))
  const { s, got } = await client(port)
  t.teardown(() => s.destroy())
  s.write('PING\r\n')
  return got
}

test('the preencoded replies (OK, PONG, nulls, 0, 1, empty array) frame like the general path', async (t) => {
  const loop = loopFor(t)
  const replies = [Resp.OK, Resp.PONG, Resp.simple('OK'), Resp.nullBulk(), Resp.nullArray(), Resp.null(), Resp.integer(0), Resp.integer(1), Resp.integer(2), Resp.array([]), Resp.simple('OKAY')]
  const got = await replyAll(t, loop, replies)
  const want = '+OK\r\n+PONG\r\n+OK\r\n$-1\r\n*-1\r\n_\r\n:0\r\n:1\r\n:2\r\n*0\r\n+OKAY\r\n'
  await until(() => got().length >= want.length)
  t.is(got(), want)
})

test('every reply shape is framed as RESP: lines, bulks short and long, integers at the int64 edges, nested arrays with RESP3 items', async (t) => {
  const loop = loopFor(t)
  const long = 'x'.repeat(100)
  const replies = [
    Resp.simple('OK'),
    Resp.error('ERR a\r\nb'), // CR and LF cannot travel in a line: spaces, as redis-server
    Resp.bulk(''),
    Resp.bulk(long),
    Resp.integer(-(2n ** 63n)),
    Resp.integer(2n ** 63n - 1n),
    Resp.nullBulk(),
    Resp.nullArray(),
    Resp.array([]),
    Resp.array([Resp.array([Resp.bulk('in'), Resp.integer(0)]), Resp.boolean(true), Resp.double(1.5), Resp.map([[Resp.simple('k'), Resp.null()]])]),
  ]
  const got = await replyAll(t, loop, replies)
  const want =
    '+OK\r\n-ERR a  b\r\n$0\r\n\r\n' +
    `$100\r\n${long}\r\n` +
    ':-9223372036854775808\r\n:9223372036854775807\r\n$-1\r\n*-1\r\n*0\r\n' +
    '*4\r\n*2\r\n$2\r\nin\r\n:0\r\n#t\r\n,1.5\r\n%1\r\n+k\r\n_\r\n'
  await until(() => got().length >= want.length)
  t.is(got(), want)
})

test('RESP3 values reach JS as JS data', async (t) => {
  const loop = loopFor(t)
  const seen: unknown[] = []
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('resp', new RespDecoder()).addLast('app', { channelRead: (_c, v) => void seen.push(v) }))
  const { s } = await client(port)
  t.teardown(() => s.destroy())
  s.write('%1\r\n+k\r\n#t\r\n,1.5\r\n_\r\n-ERR x\r\n(12345678901234567890\r\n~1\r\n:7\r\n')
  await until(() => seen.length === 6)
  t.deepEqual(seen[0], new Map([['k', true]]))
  t.is(seen[1], 1.5)
  t.is(seen[2], null)
  t.true(seen[3] instanceof RespErrorReply && seen[3].message === 'ERR x')
  t.is(seen[4], 12345678901234567890n)
  t.deepEqual(seen[5], new Set([7]))
})

test('a bulk string over the limit is ERR_RESP_* through exceptionCaught, and the server goes on', async (t) => {
  const loop = loopFor(t)
  const errors: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('resp', new RespDecoder({ maxBulkLength: 16 })).addLast('app', {
      channelRead: (ctx) => ctx.writeAndFlush(Resp.OK),
      exceptionCaught: (ctx, e) => {
        errors.push((e as { code: string }).code)
        ctx.writeAndFlush(Resp.error('ERR Protocol error'), ctx.newPromise()).addListener(() => ctx.close())
      },
    }),
  )
  const bad = await client(port)
  bad.s.write('*1\r\n$100\r\n')
  await until(() => errors.length === 1)
  t.regex(errors[0], /^ERR_RESP_/)
  await once(bad.s, 'close')
  t.is(bad.got(), '-ERR Protocol error\r\n')
  const good = await client(port)
  t.teardown(() => good.s.destroy())
  good.s.write('PING\r\n')
  await until(() => good.got() === '+OK\r\n')
  t.pass()
})

test('RespDecoder checks its options', (t) => {
  t.throws(() => new RespDecoder({ maxBulkLength: -1 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => new RespDecoder({ resp3: 'yes' as never }), { code: 'ERR_INVALID_ARG_TYPE' })
})

test('a reply larger than the write arena (2 MiB bulk) travels whole', async (t) => {
  const loop = loopFor(t)
  const big = Buffer.alloc(2 * 1024 * 1024, 0x61)
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('resp', new RespDecoder()).addLast('app', { channelRead: (ctx) => ctx.writeAndFlush(Resp.bulk(big)) }))
  const { s, got } = await client(port)
  t.teardown(() => s.destroy())
  s.write('GET k\r\n')
  const want = `$${big.length}\r\n`.length + big.length + 2
  await until(() => got().length >= want, 20_000)
  t.is(got().length, want)
  t.true(got().startsWith(`$${big.length}\r\naaaa`) && got().endsWith('a\r\n'))
})

for (const before of [false, true]) {
  test(`a 4 MiB reply written and flushed with a promise reaches the client whole and completes its promise${before ? ', after a reply written before it' : ''}`, async (t) => {
    const loop = loopFor(t)
    const big = Buffer.alloc(4 * 1024 * 1024, 0x62)
    const settled: string[] = []
    const app: ChannelHandler = {
      channelRead: (ctx) => {
        if (before) ctx.write(Resp.simple('FIRST'))
        ctx.writeAndFlush(Resp.bulk(big), ctx.newPromise()).addListener((e) => void settled.push(e === null ? 'ok' : `failed: ${e.message}`))
      },
    }
    const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('resp', new RespDecoder()).addLast('app', app))
    const { s, got } = await client(port)
    t.teardown(() => s.destroy())
    s.write('GET k\r\n')
    const first = before ? '+FIRST\r\n' : ''
    const want = first.length + `$${big.length}\r\n`.length + big.length + 2
    await until(() => got().length >= want && settled.length === 1, 20_000)
    t.is(got().length, want)
    t.true(got().startsWith(`${first}$${big.length}\r\nbbbb`) && got().endsWith('b\r\n'))
    t.deepEqual(settled, ['ok'])
  })
}

test('replies written one after another without a promise go to native code as one op, in order around writes with a promise', async (t) => {
  const loop = loopFor(t)
  const done: string[] = []
  let batch = 0
  const app: ChannelHandler = {
    channelRead: (ctx, cmd: Buffer[]) => {
      const n = Number(cmd[1])
      // Every tenth reply with a promise of its own: it cannot join the replies before it.
      if (n % 10 === 9) ctx.write(Resp.integer(n), ctx.newPromise()).addListener(() => void done.push(`${n}`))
      else ctx.write(n % 2 === 0 ? Resp.integer(n) : Resp.bulk(`${n}`))
    },
    channelReadComplete: (ctx) => {
      batch++
      ctx.flush()
    },
  }
  const { port } = await serve(t, loop, (ch) => void ch.pipeline.addLast('resp', new RespDecoder()).addLast('app', app))
  const { s, got } = await client(port)
  t.teardown(() => s.destroy())
  await until(() => loop.metrics().ops > 0)
  const before = loop.metrics().ops
  let commands = ''
  let want = ''
  for (let n = 0; n < 40; n++) {
    commands += `ECHO ${n}\r\n`
    want += n % 2 === 0 || n % 10 === 9 ? `:${n}\r\n` : `$${String(n).length}\r\n${n}\r\n`
  }
  s.write(commands)
  await until(() => got().length >= want.length && done.length === 4)
  t.is(got(), want, 'every reply, in order')
  t.deepEqual(done, ['9', '19', '29', '39'], 'the promised writes completed')
  // Per read batch: the merged silent replies, each promised reply, the flush (and a read op).
  const ops = loop.metrics().ops - before
  t.true(ops <= batch * 12, `${ops} ops for 40 replies in ${batch} read batch(es)`)
  t.true(ops < 40, `${ops} ops for 40 replies`)
})

test('Resp.sequence frames its replies back to back, as if each were written alone; it cannot be an element', async (t) => {
  const loop = loopFor(t)
  // About 3 MB in all: more than the 1 MiB write arena holds, so it travels as a chunk of its own.
  const many = Array.from({ length: 3000 }, (_, i) => Resp.bulk(`value-${i}`.repeat(100)))
  const replies = [
    Resp.sequence([Resp.OK, Resp.integer(7), Resp.bulk('x'), Resp.array([Resp.nullBulk()])]),
    Resp.sequence([]),
    Resp.sequence([Resp.sequence([Resp.PONG]), Resp.error('ERR e')]),
    Resp.sequence(many),
  ]
  const got = await replyAll(t, loop, replies)
  const manyWire = many.map((_, i) => `value-${i}`.repeat(100)).map((v) => `$${v.length}\r\n${v}\r\n`).join('')
  const want = '+OK\r\n:7\r\n$1\r\nx\r\n*1\r\n$-1\r\n' + '+PONG\r\n-ERR e\r\n' + manyWire
  await until(() => got().length >= want.length, 20_000)
  t.is(got(), want)
  t.throws(() => Resp.array([Resp.OK, Resp.sequence([Resp.OK])]), { code: 'ERR_INVALID_ARG_VALUE' })
  t.throws(() => Resp.map([[Resp.simple('k'), Resp.sequence([])]]), { code: 'ERR_INVALID_ARG_VALUE' })
  t.throws(() => Resp.sequence('OK' as never), { code: 'ERR_INVALID_ARG_TYPE' })
})

test('pauseWhileUnwritable: a client pipelining without reading holds the server to its water marks, then gets every reply', async (t) => {
  const loop = loopFor(t)
  const value = Buffer.alloc(1024, 'v')
  let seen = 0
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('resp', new RespDecoder({ pauseWhileUnwritable: true })).addLast('app', {
      channelRead: (ctx) => {
        seen++
        ctx.write(Resp.bulk(value))
      },
      channelReadComplete: (ctx) => ctx.flush(),
    }),
  )
  const N = 30_000 // ~31 MiB of replies, far more than loopback's socket buffers hold
  const s = net.connect(port, '127.0.0.1')
  t.teardown(() => s.destroy())
  await once(s, 'connect')
  s.pause() // read nothing for now
  const get = Buffer.from('*1\r\n$3\r\nGET\r\n')
  s.write(Buffer.alloc(N * get.length, get))
  let last = -1
  while (seen !== last) {
    last = seen
    await new Promise((r) => setTimeout(r, 200))
  }
  t.log(`decoded while unread: ${seen} of ${N}`)
  t.true(seen < N / 2, `the server decoded ${seen} of ${N} commands while nothing was read`)
  let bytes = 0
  s.on('data', (d: Buffer) => (bytes += d.length))
  s.resume()
  const reply = 1 + 4 + 2 + 1024 + 2 // $1024\r\n...\r\n
  await until(() => bytes === N * reply, 30_000)
  t.is(seen, N)
})

test('pauseWhileUnwritable: commands given back from the middle of a read come again in order, each answered once', async (t) => {
  const loop = loopFor(t)
  let seen = 0
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('resp', new RespDecoder({ pauseWhileUnwritable: true })).addLast('app', {
      channelRead: (ctx, args: Buffer[]) => {
        seen++
        // 1 KiB naming the command: the replies show order and duplicates.
        const v = Buffer.alloc(1024, '.')
        args[1].copy(v)
        ctx.write(Resp.bulk(v))
      },
      channelReadComplete: (ctx) => ctx.flush(),
    }),
  )
  const N = 12_000 // ~12 MiB of replies: the channel turns unwritable in the middle of reads
  const s = net.connect(port, '127.0.0.1')
  t.teardown(() => s.destroy())
  await once(s, 'connect')
  s.pause()
  const commands: string[] = []
  for (let i = 0; i < N; i++) {
    const k = String(i).padStart(5, '0')
    commands.push(`*2\r\n$4\r\nECHO\r\n$5\r\n${k}\r\n`)
  }
  s.write(commands.join(''))
  let last = -1
  while (seen !== last) {
    last = seen
    await new Promise((r) => setTimeout(r, 200))
  }
  t.true(seen < N / 2, `the server answered ${seen} of ${N} commands while nothing was read`)
  const chunks: Buffer[] = []
  let bytes = 0
  s.on('data', (d: Buffer) => {
    chunks.push(d)
    bytes += d.length
  })
  s.resume()
  const reply = 1 + 4 + 2 + 1024 + 2
  await until(() => bytes >= N * reply, 30_000)
  const all = Buffer.concat(chunks)
  t.is(all.length, N * reply)
  let wrong = -1
  for (let i = 0; i < N && wrong < 0; i++) {
    if (all.toString('latin1', i * reply + 7, i * reply + 12) !== String(i).padStart(5, '0')) wrong = i
  }
  t.is(wrong, -1, `reply ${wrong} out of order`)
  t.is(seen, N)
})

test('pauseWhileUnwritable must be a boolean', (t) => {
  t.throws(() => new RespDecoder({ pauseWhileUnwritable: 1 as unknown as boolean }), { code: 'ERR_INVALID_ARG_TYPE' })
})
