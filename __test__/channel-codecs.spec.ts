import test from 'ava'
import type * as net from 'node:net'

import {
  type ChannelHandler,
  DelimiterBasedFrameDecoder,
  FixedLengthFrameDecoder,
  IdleStateEvent,
  IdleStateHandler,
  LengthFieldBasedFrameDecoder,
  LengthFieldPrepender,
  LineBasedFrameDecoder,
  type NativeHandler,
  NetloopError,
} from '../index'
import { collect, dial, loopFor, netClient, serve, sleep, until } from './channel-helpers'

/** Writes `data` one byte at a time, yielding in between, so the server sees fragments. */
async function dribble(s: net.Socket, data: Buffer): Promise<void> {
  for (let i = 0; i < data.length; i += 3) {
    s.write(data.subarray(i, i + 3))
    await sleep(1)
  }
}

/** A server whose pipeline is `decoder` then a recorder of frames and exceptions. */
async function decoding(t: Parameters<typeof loopFor>[0], decoder: () => NativeHandler) {
  const loop = loopFor(t)
  const frames: string[] = []
  const errors: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    ch.pipeline.addLast('decoder', decoder()).addLast('rec', {
      channelRead: (_ctx, m: Buffer) => void frames.push(m.toString()),
      exceptionCaught: (_ctx, e) => void errors.push((e as NetloopError).code),
    }),
  )
  return { port, frames, errors }
}

test('LineBasedFrameDecoder splits fragmented input and reports too-long lines, then recovers', async (t) => {
  const { port, frames, errors } = await decoding(t, () => new LineBasedFrameDecoder(8))
  const s = await netClient(t, port)
  await dribble(s, Buffer.from('one\r\ntwo\nthis line is too long\nthree\n'))
  await until(() => frames.length === 3)
  t.deepEqual(frames, ['one', 'two', 'three'])
  t.deepEqual(errors, ['ERR_TOO_LONG_FRAME'])
})

test('an empty line reaches the next handler as an empty Buffer', async (t) => {
  const { port, frames } = await decoding(t, () => new LineBasedFrameDecoder(8))
  const s = await netClient(t, port)
  s.write('\n')
  await until(() => frames.length === 1)
  s.write('a\n\n')
  await until(() => frames.length === 3)
  t.deepEqual(frames, ['', 'a', ''])
})

test('DelimiterBasedFrameDecoder splits on any delimiter, the first match wins', async (t) => {
  const { port, frames, errors } = await decoding(t, () => new DelimiterBasedFrameDecoder(16, ['||', ';']))
  const s = await netClient(t, port)
  await dribble(s, Buffer.from('a||b;c;;0123456789abcdefghij||d||'))
  await until(() => frames.length === 5)
  t.deepEqual(frames, ['a', 'b', 'c', '', 'd'])
  t.deepEqual(errors, ['ERR_TOO_LONG_FRAME'])
})

test('FixedLengthFrameDecoder emits frames of exactly the length whatever the fragmentation', async (t) => {
  const { port, frames } = await decoding(t, () => new FixedLengthFrameDecoder(4))
  const s = await netClient(t, port)
  await dribble(s, Buffer.from('abcdefghijkl'))
  await until(() => frames.length === 3)
  t.deepEqual(frames, ['abcd', 'efgh', 'ijkl'])
})

test('LengthFieldBasedFrameDecoder reads length-prefixed frames and fails fast on a too-long one', async (t) => {
  const { port, frames, errors } = await decoding(t, () => new LengthFieldBasedFrameDecoder(16, 0, 2, { initialBytesToStrip: 2 }))
  const s = await netClient(t, port)
  const frame = (body: string) => Buffer.concat([Buffer.from([0, body.length]), Buffer.from(body)])
  await dribble(s, Buffer.concat([frame('hello'), frame('x'.repeat(40)), frame('world')]))
  await until(() => frames.length === 2)
  t.deepEqual(frames, ['hello', 'world'])
  t.deepEqual(errors, ['ERR_TOO_LONG_FRAME'])
})

test('native codecs reject bad parameters at construction', (t) => {
  t.is(t.throws(() => new LineBasedFrameDecoder(0))?.code, 'ERR_OUT_OF_RANGE')
  t.is(t.throws(() => new LineBasedFrameDecoder('8' as never))?.code, 'ERR_INVALID_ARG_TYPE')
  t.is(t.throws(() => new FixedLengthFrameDecoder(-1))?.code, 'ERR_OUT_OF_RANGE')
  t.is(t.throws(() => new LengthFieldBasedFrameDecoder(100, 0, 5))?.code, 'ERR_OUT_OF_RANGE')
  t.is(t.throws(() => new LengthFieldPrepender(3, { byteOrder: 'XX' as never }))?.code, 'ERR_INVALID_ARG_VALUE')
  t.is(t.throws(() => new DelimiterBasedFrameDecoder(10, []))?.code, 'ERR_INVALID_ARG_VALUE')
  t.is(t.throws(() => new IdleStateHandler(-1, 0, 0))?.code, 'ERR_OUT_OF_RANGE')
})

test('mixed pipeline, native first: decoder -> JS -> prepender -> JS frames replies on the wire', async (t) => {
  const loop = loopFor(t)
  const seen: string[] = []
  const tagger: ChannelHandler = {
    write: (ctx, m: string, p) => {
      seen.push(`tag:${m}`)
      ctx.write(`<${m}>`, p)
    },
  }
  const { port } = await serve(t, loop, (ch) =>
    ch.pipeline
      .addLast('framer', new LineBasedFrameDecoder(64))
      .addLast('prepender', new LengthFieldPrepender(1))
      .addLast('tagger', tagger)
      .addLast('app', { channelRead: (ctx, m: Buffer) => ctx.writeAndFlush(m.toString().toUpperCase()) }),
  )
  const s = await netClient(t, port)
  const c = collect(s)
  s.write('ab\ncd\n')
  await until(() => c.data().length === 10)
  t.deepEqual([...c.data()], [4, ...Buffer.from('<AB>'), 4, ...Buffer.from('<CD>')])
  t.deepEqual(seen, ['tag:AB', 'tag:CD'])
})

test('mixed pipeline, JS first: JS -> native decoder -> JS sees frames of what the first handler passes on', async (t) => {
  const loop = loopFor(t)
  const frames: string[] = []
  const { port } = await serve(t, loop, (ch) =>
    ch.pipeline
      .addLast('rot', { channelRead: (ctx, m: Buffer) => ctx.fireChannelRead(Buffer.from(m.toString().replace(/;/g, '\n'))) })
      .addLast('framer', new LineBasedFrameDecoder(64))
      .addLast('app', { channelRead: (_ctx, m: Buffer) => void frames.push(m.toString()) }),
  )
  const s = await netClient(t, port)
  await dribble(s, Buffer.from('one;two;three;'))
  await until(() => frames.length === 3)
  t.deepEqual(frames, ['one', 'two', 'three'])
})

test('a JS value passes through native handlers untouched to the next JS handler', async (t) => {
  const loop = loopFor(t)
  const got: unknown[] = []
  const value = { kind: 'parsed', n: 42 }
  const { port } = await serve(t, loop, (ch) =>
    ch.pipeline
      .addLast('parse', { channelRead: (ctx) => ctx.fireChannelRead(value) })
      .addLast('framer', new LineBasedFrameDecoder(64))
      .addLast('app', { channelRead: (_ctx, m) => void got.push(m) }),
  )
  const s = await netClient(t, port)
  s.write('x\n')
  await until(() => got.length === 1)
  t.is(got[0], value)
})

test('a non-byte message that reaches the socket fails its write with ERR_UNSUPPORTED_MESSAGE', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, () => {})
  const ch = await dial(loop, port, () => {})
  const err = await t.throwsAsync(ch.writeAndFlush({ not: 'bytes' }, ch.newPromise()).promise)
  t.is((err as NetloopError).code, 'ERR_UNSUPPORTED_MESSAGE')
  await ch.close()
})

test('IdleStateHandler fires reader-idle events, first then repeats, and activity postpones them', async (t) => {
  const loop = loopFor(t)
  const events: IdleStateEvent[] = []
  const { port } = await serve(t, loop, (ch) =>
    ch.pipeline.addLast('idle', new IdleStateHandler(60, 0, 0)).addLast('rec', {
      userEventTriggered: (ctx, e) => {
        if (e instanceof IdleStateEvent) events.push(e)
        if (events.length === 3) ctx.close()
      },
    }),
  )
  const s = await netClient(t, port)
  const c = collect(s)
  await c.ended
  t.deepEqual(
    events.map((e) => [e.state, e.first]),
    [
      ['READER_IDLE', true],
      ['READER_IDLE', false],
      ['READER_IDLE', false],
    ],
  )
})
