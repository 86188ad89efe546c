// channel.messages(): inbound messages as an async iterator, with backpressure.
import test from 'ava'
import { once } from 'node:events'
import * as net from 'node:net'
import { Bootstrap, type Channel, FixedLengthFrameDecoder, LineBasedFrameDecoder, type ChannelMessages } from '../index'
import { until, withLoop } from './helpers'

/** A node:net server running `onSocket` for each connection; resolves with its port. */
async function nodeServer(t: { teardown(fn: () => unknown): void }, onSocket: (s: net.Socket) => void): Promise<number> {
  const server = net.createServer((s) => {
    s.on('error', () => undefined)
    onSocket(s)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  return (server.address() as net.AddressInfo).port
}

/** Connects a netloop client whose pipeline `init` sets up; `messages()` is made in the initializer. */
async function client<T = Buffer>(t: Parameters<typeof withLoop>[0], port: number, init: (ch: Channel) => void = () => undefined, highWaterMark?: number) {
  const loop = withLoop(t)
  let messages!: ChannelMessages<T>
  const ch = await new Bootstrap()
    .group(loop)
    .handler((ch) => {
      init(ch)
      messages = ch.messages<T>({ highWaterMark })
    })
    .connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  return { ch, messages }
}

test('messages(): a client iterates decoded lines in order; the iteration ends when the channel closes', async (t) => {
  const port = await nodeServer(t, (s) => s.end('one\ntwo\nthree\n'))
  const { ch, messages } = await client(t, port, (ch) => void ch.pipeline.addLast('lines', new LineBasedFrameDecoder(64)))
  const got: string[] = []
  for await (const line of messages) got.push(line.toString())
  t.deepEqual(got, ['one', 'two', 'three'])
  t.false(ch.isOpen)
})

test('messages(): the channel stops reading while the consumer is behind and reads again once it caught up', async (t) => {
  const FRAMES = 8192
  const port = await nodeServer(t, (s) => {
    const frames = Buffer.alloc(FRAMES * 1024)
    for (let i = 0; i < FRAMES; i++) frames.writeUInt32BE(i, i * 1024)
    s.end(frames)
  })
  const { ch, messages } = await client(t, port, (ch) => void ch.pipeline.addLast('frames', new FixedLengthFrameDecoder(1024)), 16)
  const first = await messages.next()
  t.is(first.value!.readUInt32BE(0), 0)
  // The consumer dawdles: the queue reaches the high water mark and the channel stops reading.
  await until(() => ch.config.autoRead === false)
  const queuedWhenStopped = messages.queued
  t.true(queuedWhenStopped >= 16, `stopped with ${queuedWhenStopped} queued`)
  t.true(queuedWhenStopped < FRAMES / 4, `at most one read batch beyond the mark (${queuedWhenStopped} of ${FRAMES} queued)`)
  let next = 1
  let sawReadingAgain = false
  for await (const frame of messages) {
    t.is(frame.readUInt32BE(0), next++)
    if (ch.isOpen && ch.config.autoRead) sawReadingAgain = true
  }
  t.is(next, FRAMES)
  t.true(sawReadingAgain)
})

test('messages(): a read error rejects the iteration after the messages before it', async (t) => {
  const port = await nodeServer(t, (s) => s.write('fine\nthis line is far too long for the decoder\n'))
  const { messages } = await client(t, port, (ch) => void ch.pipeline.addLast('lines', new LineBasedFrameDecoder(16)))
  const got: string[] = []
  const err = await t.throwsAsync(async () => {
    for await (const line of messages) got.push(line.toString())
  })
  t.deepEqual(got, ['fine'])
  t.is((err as { code?: string }).code, 'ERR_TOO_LONG_FRAME')
  t.deepEqual(await messages.next(), { value: undefined, done: true }, 'the iteration is over')
})

test('messages(): break leaves the loop, removes the iterator and keeps the channel open and reading', async (t) => {
  const port = await nodeServer(t, (s) => {
    s.write('first\nsecond\n')
    s.on('data', (d) => s.write(`echo ${d}`))
  })
  const { ch, messages } = await client(t, port, (ch) => void ch.pipeline.addLast('lines', new LineBasedFrameDecoder(64)))
  for await (const line of messages) {
    t.is(line.toString(), 'first')
    break
  }
  t.true(ch.isOpen)
  t.deepEqual(ch.pipeline.names(), ['lines'])
  t.true(ch.config.autoRead)
  // A new iterator takes over.
  const again = ch.messages()
  ch.writeAndFlush('ping\n')
  const next = await again.next()
  t.is(next.value!.toString(), 'echo ping')
})

test('messages(): on a channel made with autoRead off, nothing is lost before the iterator exists', async (t) => {
  const port = await nodeServer(t, (s) => s.end('hello at once\n'))
  const loop = withLoop(t)
  const ch = await new Bootstrap()
    .group(loop)
    .option('autoRead', false)
    .handler((ch) => void ch.pipeline.addLast('lines', new LineBasedFrameDecoder(64)))
    .connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  const got: string[] = []
  for await (const line of ch.messages()) got.push(line.toString())
  t.deepEqual(got, ['hello at once'])
})

test("messages(): the peer's FIN ends the iteration when allowHalfClosure keeps the channel open", async (t) => {
  let peer!: net.Socket
  const port = await nodeServer(t, (s) => {
    peer = s
    s.end('last\n')
  })
  const loop = withLoop(t)
  let messages!: ChannelMessages
  const ch = await new Bootstrap()
    .group(loop)
    .option('allowHalfClosure', true)
    .handler((ch) => {
      ch.pipeline.addLast('lines', new LineBasedFrameDecoder(64))
      messages = ch.messages()
    })
    .connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  const got: string[] = []
  for await (const line of messages) got.push(line.toString())
  t.deepEqual(got, ['last'])
  t.true(ch.isOpen, 'the output is still open')
  const heard = once(peer, 'data')
  ch.writeAndFlush('still here')
  t.is(String((await heard)[0]), 'still here')
})

test('messages(): options are checked', async (t) => {
  const port = await nodeServer(t, () => undefined)
  const loop = withLoop(t)
  const ch = await new Bootstrap().group(loop).handler(() => undefined).connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  t.throws(() => ch.messages({ highWaterMark: 0 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => ch.messages({ name: '' }), { code: 'ERR_INVALID_ARG_TYPE' })
})
