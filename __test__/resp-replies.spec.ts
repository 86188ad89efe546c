// RESP replies from JS: how each reply shape is framed natively, large replies, replies merged
// into one op, and a reply written and flushed in one (straight to the socket when nothing
// stands between). The decoding side is in resp-codec.spec.ts.
import test, { type ExecutionContext } from 'ava'
import { Resp, RespDecoder, type ChannelHandler, type EventLoop, type RespReply } from '../index'
import { loopFor, serve, textClient as client, until } from './channel-helpers'

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
