import test, { type ExecutionContext } from 'ava'
import assert from 'node:assert'
import * as net from 'node:net'
import { once } from 'node:events'
import { inspect } from 'node:util'
import { Resp, RespDecoder, RespErrorReply, type ChannelHandler } from '../index'
import { loopFor, serve, textClient as client, until } from './channel-helpers'

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
