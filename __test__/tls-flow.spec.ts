import test, { type ExecutionContext } from 'ava'
import * as tls from 'node:tls'
import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { type ChannelHandler, type ChannelHandlerContext, SslHandshakeCompletionEvent } from '../index'
import { loopFor, serve, sleep, until } from './channel-helpers'
import { pem, serverContext, withTls } from './tls-helpers'

type T = ExecutionContext

const MiB = 1 << 20
/** Bytes echoed by the volume test (raise by hand: NETLOOP_TLS_VOLUME_MIB=1024). */
const VOLUME = Number(process.env.NETLOOP_TLS_VOLUME_MIB ?? 64) * MiB

function nodeClient(t: T, port: number): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem') }, () => resolve(s))
    s.once('error', reject)
    t.teardown(() => s.destroy())
  })
}

/**
 * Echoes `volume` bytes of random data from a node:tls client through a netloop TLS server's
 * JS handler (`autoRelease` as given) and checks both directions' checksums; the server's loop.
 */
async function checksummedEcho(t: T, volume: number, autoRelease: boolean) {
  const serverHash = createHash('sha256')
  let serverBytes = 0
  // An echo that stops reading while its output is above the high water mark (autoRead off
  // also stops reading TLS records) and resumes when it drains.
  const app: ChannelHandler = {
    autoRelease,
    channelRead(ctx, msg: Buffer) {
      serverHash.update(msg)
      serverBytes += msg.length
      ctx.write(msg)
    },
    channelReadComplete(ctx) {
      ctx.flush()
      if (!ctx.channel.isWritable) ctx.channel.setOption('autoRead', false)
    },
    channelWritabilityChanged(ctx) {
      if (ctx.channel.isWritable) ctx.channel.setOption('autoRead', true)
      ctx.fireChannelWritabilityChanged()
    },
  }
  const loop = loopFor(t)
  const { port } = await serve(t, loop, withTls(serverContext(), app))
  const s = await nodeClient(t, port)
  const sent = createHash('sha256')
  const received = createHash('sha256')
  let got = 0
  s.on('data', (d: Buffer) => {
    received.update(d)
    got += d.length
  })
  const done = new Promise<void>((resolve) => s.on('data', () => got >= volume && resolve()))
  for (let off = 0; off < volume; off += MiB) {
    const block = randomBytes(Math.min(MiB, volume - off))
    sent.update(block)
    // Backpressure: wait for 'drain' whenever write() says the buffer is full.
    for (let i = 0; i < block.length; i += 64 * 1024) {
      if (!s.write(block.subarray(i, i + 64 * 1024))) await once(s, 'drain')
    }
  }
  await done
  const want = sent.digest('hex')
  t.is(got, volume)
  t.is(serverBytes, volume)
  t.is(serverHash.digest('hex'), want)
  t.is(received.digest('hex'), want)
  return loop
}

test(`${VOLUME / MiB} MiB of checksummed data echo intact over TLS through a JS handler`, async (t) => {
  const loop = await checksummedEcho(t, VOLUME, false)
  t.is(loop.metrics().bytesReleased, 0)
})

test('16 MiB echo intact over TLS through an autoRelease handler, whose large plaintext reads are released', async (t) => {
  const loop = await checksummedEcho(t, 16 * MiB, true)
  t.true(loop.metrics().bytesReleased > 0, 'plaintext reads of 16 KiB and more were detached after the handler')
})

test('a reader that stops reading: the server writes only while writable, then everything arrives intact', async (t) => {
  const CHUNK = 16 * 1024
  const TOTAL = 64 * MiB
  const source = randomBytes(MiB)
  const chunkAt = (n: number) => {
    const off = (n * CHUNK) % MiB
    const c = Buffer.from(source.subarray(off, off + CHUNK))
    c.writeUInt32BE(n, 0) // every chunk differs: a lost or repeated one changes the hash
    return c
  }
  const expected = createHash('sha256')
  for (let n = 0; n < TOTAL / CHUNK; n++) expected.update(chunkAt(n))
  let written = 0
  let unwritable = 0
  const pump = (ctx: ChannelHandlerContext) => {
    while (ctx.channel.isWritable && written < TOTAL) {
      ctx.write(chunkAt(written / CHUNK))
      written += CHUNK
    }
    ctx.flush()
    if (written >= TOTAL) return
    unwritable++
  }
  const app: ChannelHandler = {
    userEventTriggered(ctx, e) {
      if (e instanceof SslHandshakeCompletionEvent && e.isSuccess) pump(ctx)
    },
    channelWritabilityChanged(ctx) {
      if (ctx.channel.isWritable) pump(ctx)
    },
  }
  const { port } = await serve(t, loopFor(t), withTls(serverContext(), app))
  const s = await nodeClient(t, port)
  s.pause() // the client reads nothing for 2 s
  await until(() => unwritable > 0)
  await sleep(2000)
  const stalled = written
  await sleep(200)
  t.is(written, stalled, 'the server stopped writing while the client did not read')
  // Bounded by the water marks plus the socket buffers of both ends (generous).
  t.true(stalled < 32 * MiB, `${stalled} bytes written while the reader stalled`)
  t.true(stalled < TOTAL)
  const received = createHash('sha256')
  let got = 0
  s.on('data', (d: Buffer) => {
    received.update(d)
    got += d.length
  })
  s.resume()
  await until(() => got >= TOTAL, 30_000)
  t.is(got, TOTAL)
  t.is(received.digest('hex'), expected.digest('hex'))
  t.log(`written while stalled: ${(stalled / MiB).toFixed(1)} MiB`)
})

test("a node:tls client that writes then ends gets the JS echo before the server's close_notify", async (t) => {
  // The close_notify and the data come in one read; the close waits for the JS handler's reply.
  const { port } = await serve(t, loopFor(t), withTls(serverContext(), { channelRead: (ctx, m: Buffer) => ctx.writeAndFlush(m) }))
  for (let i = 0; i < 5; i++) {
    const s = await nodeClient(t, port)
    let got = ''
    s.on('data', (d) => (got += d))
    s.end(`hello ${i}`)
    await once(s, 'end')
    t.is(got, `hello ${i}`)
  }
})

test('allowHalfClosure over TLS: the peer close_notify is a ChannelInputShutdownEvent, the reply and shutdownOutput follow', async (t) => {
  const events: string[] = []
  const app: ChannelHandler = {
    channelRead: (_ctx, m: Buffer) => void events.push(`read ${m}`),
    userEventTriggered: (ctx, e) => {
      const name = (e as object).constructor.name
      events.push(name)
      if (name === 'ChannelInputShutdownEvent') {
        // After the peer's end: write the answer, then end ours (close_notify, then the FIN).
        ctx.writeAndFlush(`answer after ${events.filter((x) => x.startsWith('read')).length} reads`)
        void ctx.channel.shutdownOutput()
      }
    },
  }
  const { port, children } = await serve(t, loopFor(t), withTls(serverContext(), app), { allowHalfClosure: true })
  const s = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem'), allowHalfOpen: true })
  t.teardown(() => s.destroy())
  await once(s, 'secureConnect')
  let got = ''
  s.on('data', (d) => (got += d))
  s.end('question')
  await once(s, 'end')
  t.is(got, 'answer after 1 reads')
  t.deepEqual(events.filter((e) => e !== 'SslHandshakeCompletionEvent'), ['read question', 'SslCloseCompletionEvent', 'ChannelInputShutdownEvent'])
  await until(() => !children[0].isOpen)
})
