import test from 'ava'
import * as net from 'node:net'

import { EventLoop, NetloopError, type Channel } from '../index'
import { collect, dial, loopFor, netClient, pattern, serve, until } from './channel-helpers'

// A handler with `autoRelease: true` keeps no read past its call: the large reads it gets are
// detached when the delivery's call returns (their memory returned at once, not at V8's next
// full collection). What it writes back during the call is sent intact; what it keeps is empty.

test('an autoRelease echo sends every byte back, and the large reads it kept are empty after its calls', async (t) => {
  const loop = loopFor(t)
  const kept: Array<{ msg: Buffer; length: number }> = []
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('echo', {
      autoRelease: true,
      channelRead(ctx, msg: Buffer) {
        kept.push({ msg, length: msg.length })
        ctx.writeAndFlush(msg)
      },
    })
  })
  const s = await netClient(t, port)
  const got = collect(s)
  const data = pattern(8 * 1024 * 1024, 31)
  s.write(data)
  await until(() => got.data().length >= data.length, 30_000)
  t.true(got.data().equals(data), 'the echo is intact')

  const large = kept.filter((k) => k.length >= 16 * 1024)
  t.true(large.length > 0, 'some reads were 16 KiB or more')
  t.true(large.every((k) => k.msg.length === 0), 'every large read kept past its call is empty')
  const released = loop.metrics().bytesReleased
  const largeBytes = large.reduce((n, k) => n + k.length, 0)
  t.true(released >= largeBytes, `bytesReleased ${released} counts the large reads (${largeBytes} bytes)`)
  t.true(released <= data.length)
})

test('an autoRelease handler that copies what it reads keeps the bytes', async (t) => {
  const loop = loopFor(t)
  const copies: Buffer[] = []
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('copy', {
      autoRelease: true,
      channelRead(_ctx, msg: Buffer) {
        copies.push(Buffer.from(msg))
      },
    })
  })
  const s = await netClient(t, port)
  const data = pattern(4 * 1024 * 1024, 32)
  s.write(data)
  await until(() => copies.reduce((n, b) => n + b.length, 0) >= data.length, 30_000)
  t.true(Buffer.concat(copies).equals(data))
  t.true(loop.metrics().bytesReleased > 0, 'the originals were released')
})

test('a handler without autoRelease keeps its large reads, and none is released', async (t) => {
  const loop = loopFor(t)
  const kept: Buffer[] = []
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('keep', { channelRead: (_ctx, msg: Buffer) => void kept.push(msg) })
  })
  const s = await netClient(t, port)
  const data = pattern(2 * 1024 * 1024, 33)
  s.write(data)
  await until(() => kept.reduce((n, b) => n + b.length, 0) >= data.length, 30_000)
  t.true(Buffer.concat(kept).equals(data))
  t.is(loop.metrics().bytesReleased, 0)
})

test('a read written during the call to a channel of another loop of the same thread arrives intact', async (t) => {
  // The write goes to another loop's op stream, which would apply it in a microtask, after the
  // delivery detached the read: the delivery applies it first.
  const front = loopFor(t)
  const back = loopFor(t)
  const sinkData: Buffer[] = []
  const sink = net.createServer((s) => s.on('data', (d) => sinkData.push(d)))
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r))
  t.teardown(() => void sink.close())
  const out = await dial(back, (sink.address() as net.AddressInfo).port, () => {})
  t.teardown(() => void out.close())
  const { port } = await serve(t, front, (ch) => {
    ch.pipeline.addLast('proxy', {
      autoRelease: true,
      channelRead: (_ctx, msg: Buffer) => void out.writeAndFlush(msg),
    })
  })
  const s = await netClient(t, port)
  const data = pattern(4 * 1024 * 1024, 34)
  s.write(data)
  await until(() => sinkData.reduce((n, b) => n + b.length, 0) >= data.length, 30_000)
  t.true(Buffer.concat(sinkData).equals(data))
  t.true(front.metrics().bytesReleased > 0)
})

test.serial('an autoRelease echo under a stream keeps ArrayBuffer memory far below the 64 MB V8 lets grow', async (t) => {
  // Without the release, every read stays allocated until V8's next full collection, which
  // its external-memory limit starts only 64 MB above what the last one left. Both ends are
  // netloop channels with autoRelease handlers (a node:net client's reads would count too);
  // the client writes one Buffer over and over.
  const loop = loopFor(t)
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('echo', { autoRelease: true, channelRead: (ctx, msg: Buffer) => void ctx.writeAndFlush(msg) })
  })
  const total = 192 * 1024 * 1024
  const chunk = pattern(256 * 1024, 35)
  let sent = 0
  let received = 0
  let peak = 0
  const pump = (ch: Channel) => {
    while (sent < total && ch.isWritable) {
      ch.writeAndFlush(chunk)
      sent += chunk.length
    }
  }
  const client = await dial(loop, port, (ch) => {
    ch.pipeline.addLast('count', {
      autoRelease: true,
      channelRead(_ctx, msg: Buffer) {
        received += msg.length
        peak = Math.max(peak, process.memoryUsage().arrayBuffers)
      },
      channelWritabilityChanged: (ctx) => pump(ctx.channel),
    })
  })
  t.teardown(() => void client.close())
  pump(client)
  await until(() => received >= total, 60_000)
  t.true(peak < 32 * 1024 * 1024, `ArrayBuffer memory peaked at ${(peak / 1048576).toFixed(1)} MiB`)
  t.true(loop.metrics().bytesReleased >= total, 'both ends released their reads')
})

test('autoRelease must be a boolean', async (t) => {
  const loop = new EventLoop()
  t.teardown(() => loop.shutdownGracefully(0, 1000))
  const { port } = await serve(t, loop, () => {})
  let error: unknown
  const ch: Channel = await dial(loop, port, (c) => {
    try {
      c.pipeline.addLast('bad', { autoRelease: 'yes' as never, channelRead: () => {} })
    } catch (e) {
      error = e
    }
  })
  t.teardown(() => void ch.close())
  t.true(error instanceof NetloopError)
  t.is((error as NetloopError).code, 'ERR_INVALID_ARG_TYPE')
  t.is(ch.pipeline.get('bad'), undefined, 'nothing was added')
})
