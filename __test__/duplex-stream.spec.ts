// channel.toDuplex(): the stream.Duplex contract over a channel (backpressure both ways,
// half-close, destroy, errors) and its net.Socket-like members.
import test from 'ava'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import * as net from 'node:net'
import { join } from 'node:path'
import { Bootstrap, type Channel, type ChannelDuplex, NetloopError } from '../index'
import { netloopServer } from './duplex-helpers'
import { until, withLoop } from './helpers'

/** A netloop server handing its first channel's duplex out, and a node:net client connected to it. */
async function pair(t: Parameters<typeof netloopServer>[0], options?: Parameters<Channel['toDuplex']>[0], clientOptions: net.NetConnectOpts = { port: 0 }) {
  let resolveDuplex!: (d: ChannelDuplex) => void
  const duplex = new Promise<ChannelDuplex>((r) => (resolveDuplex = r))
  const port = await netloopServer(t, (ch) => resolveDuplex(ch.toDuplex(options)))
  const client = net.connect({ ...clientOptions, port, host: '127.0.0.1' } as net.NetConnectOpts)
  client.on('error', () => undefined)
  t.teardown(() => client.destroy())
  await once(client, 'connect')
  return { duplex: await duplex, client }
}

/** Collects what a readable stream emits until it ends. */
function collect(s: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = []
  s.on('data', (d: Buffer) => parts.push(d))
  return new Promise((resolve) => s.once('end', () => resolve(Buffer.concat(parts))))
}

test('toDuplex: write() returns false while the channel is unwritable, and drain follows its writability', async (t) => {
  const { duplex, client } = await pair(t)
  client.pause() // the peer does not read: the channel's buffer fills up
  const chunk = Buffer.alloc(64 * 1024, 7)
  t.true(duplex.write(Buffer.from('first')), 'a small write to a writable channel returns true')
  let written = 5
  let ok = true
  while (ok) {
    ok = duplex.write(chunk)
    written += chunk.length
    if (written > 256 << 20) break
  }
  t.false(ok, 'write() turned false before 256 MiB')
  t.false(duplex.channel.isWritable, 'the channel is unwritable when write() says false')
  t.true(duplex.writableNeedDrain || duplex.writableLength > 0)
  let received = 0
  client.on('data', (d: Buffer) => (received += d.length))
  client.resume()
  await once(duplex, 'drain')
  t.true(duplex.channel.isWritable, "'drain' comes once the channel is writable again")
  await until(() => received === written)
  t.is(duplex.bytesWritten, written)
})

test('toDuplex: a consumer that falls behind turns autoRead off; reading again turns it on', async (t) => {
  const { duplex, client } = await pair(t)
  const total = 8 << 20
  client.write(Buffer.alloc(total, 1))
  // Nobody reads the duplex: its buffer fills to the high water mark, then the channel stops reading.
  await until(() => duplex.channel.config.autoRead === false)
  const bufferedWhenStopped = duplex.readableLength
  t.true(bufferedWhenStopped < 2 << 20, `buffered ${bufferedWhenStopped} bytes when reading stopped`)
  t.true(bufferedWhenStopped < total)
  let received = duplex.readableLength
  let sawOnAgain = false
  duplex.on('data', (d: Buffer) => {
    received += d.length
    if (duplex.channel.config.autoRead) sawOnAgain = true
  })
  received = 0
  await until(() => received === total)
  t.true(sawOnAgain, 'autoRead is back on while the consumer keeps up')
  t.is(duplex.bytesRead, total)
})

test('toDuplex: end() sends FIN after the queued writes and reading goes on (allowHalfOpen)', async (t) => {
  const { duplex, client } = await pair(t, { allowHalfOpen: true }, { port: 0, allowHalfOpen: true })
  const clientGot = collect(client)
  duplex.write('last words')
  duplex.end()
  t.is((await clientGot).toString(), 'last words', 'the client sees the data, then its end')
  t.true(duplex.channel.isOpen, 'the channel stays open for reading')
  const serverGot = collect(duplex)
  const clientClosed = once(client, 'close')
  client.end('still talking')
  t.is((await serverGot).toString(), 'still talking')
  await duplex.channel.closeFuture // both sides done: the duplex closes the channel
  await clientClosed
  t.false(duplex.channel.isOpen)
})

test("toDuplex: the peer's FIN ends the readable side; without allowHalfOpen a reply still goes out, then the channel closes", async (t) => {
  const { duplex, client } = await pair(t, undefined, { port: 0, allowHalfOpen: true })
  const clientGot = collect(client)
  let request = ''
  duplex.on('data', (d: Buffer) => (request += d))
  duplex.on('end', () => duplex.write(`you said ${request}`))
  const duplexClosed = once(duplex, 'close')
  client.end('hello')
  t.is((await clientGot).toString(), 'you said hello')
  await duplex.channel.closeFuture
  await duplexClosed
  t.true(duplex.writableFinished)
})

test('toDuplex: destroy() closes the channel', async (t) => {
  const { duplex, client } = await pair(t)
  const closed = once(client, 'close')
  duplex.destroy()
  await duplex.channel.closeFuture
  await closed
  t.false(duplex.channel.isOpen)
})

test("toDuplex: the channel's close ends the stream", async (t) => {
  const { duplex, client } = await pair(t)
  const got = collect(duplex)
  const closed = once(duplex, 'close')
  client.write('before the close')
  client.destroy()
  t.is((await got).toString(), 'before the close')
  await closed
  t.false(duplex.channel.isOpen)
})

test('toDuplex: an exception in the pipeline destroys the stream with it and closes the channel', async (t) => {
  const { duplex } = await pair(t)
  const boom = Object.assign(new Error('boom'), { code: 'ERR_TEST' })
  const failed = once(duplex, 'error')
  duplex.channel.pipeline.fireExceptionCaught(boom)
  t.is((await failed)[0], boom)
  await duplex.channel.closeFuture
  t.true(duplex.destroyed)
})

test('toDuplex: a write waiting for writability fails when the channel closes', async (t) => {
  const { duplex, client } = await pair(t)
  client.pause()
  const errors: Error[] = []
  duplex.on('error', (e) => errors.push(e))
  const chunk = Buffer.alloc(64 * 1024)
  let last: Promise<Error | null | undefined> | undefined
  let ok = true
  for (let n = 0; ok && n < 4096; n++) {
    last = new Promise((resolve) => (ok = duplex.write(chunk, resolve)))
  }
  t.false(ok)
  duplex.channel.close()
  const closed = duplex.closed ? Promise.resolve() : new Promise((resolve) => duplex.once('close', resolve))
  const err = (await last) as NetloopError
  t.true(err instanceof Error, 'the held write is called back with an error')
  await closed
  t.true(duplex.destroyed)
  t.is((errors[0] as NetloopError).code, 'ERR_CHANNEL_CLOSED')
  t.is(err.code, 'ERR_CHANNEL_CLOSED')
})

test('toDuplex: addresses, socket options, counters and encrypted read like a net.Socket', async (t) => {
  const { duplex, client } = await pair(t)
  t.is(duplex.remoteAddress, client.localAddress)
  t.is(duplex.remotePort, client.localPort)
  t.is(duplex.remoteFamily, 'IPv4')
  t.is(duplex.localAddress, client.remoteAddress)
  t.is(duplex.localPort, client.remotePort)
  t.deepEqual(duplex.address(), { address: client.remoteAddress, port: client.remotePort, family: 'IPv4' })
  t.is(duplex.setNoDelay(false), duplex)
  t.false(duplex.channel.config.tcpNoDelay)
  duplex.setNoDelay()
  t.true(duplex.channel.config.tcpNoDelay)
  duplex.setKeepAlive(true, 1000)
  t.true(duplex.channel.config.soKeepAlive)
  t.false(duplex.encrypted)
  t.false(duplex.connecting)
  t.is(duplex.readyState, 'open')
  client.write('12345')
  await once(duplex, 'data')
  duplex.write('abc')
  await once(client, 'data')
  t.is(duplex.bytesRead, 5)
  t.is(duplex.bytesWritten, 3)
  const remote = duplex.remotePort
  const closed = once(duplex.resume(), 'close')
  client.end()
  await closed
  t.is(duplex.remotePort, remote, 'kept after the close')
  t.throws(() => duplex.setTimeout(-1), { instanceOf: NetloopError, code: 'ERR_OUT_OF_RANGE' })
})

test("toDuplex: setTimeout emits 'timeout' after the given inactivity, counted from the last read", async (t) => {
  const { duplex, client } = await pair(t)
  duplex.resume()
  let lastRead = 0
  let reads = 0
  duplex.on('data', () => {
    lastRead = performance.now()
    reads++
  })
  let readsAtTimeout = -1
  const timedOut = new Promise<number>((resolve) =>
    duplex.setTimeout(150, () => {
      readsAtTimeout = reads
      resolve(performance.now())
    }),
  )
  // Four reads 60 ms apart: 180 ms in all, longer than the timeout, which only the reads'
  // refreshing it keeps from firing in between.
  for (let i = 0; i < 4; i++) {
    client.write('x')
    await once(duplex, 'data')
    if (i < 3) await new Promise((r) => setTimeout(r, 60))
  }
  const at = await timedOut
  t.is(readsAtTimeout, 4, 'no timeout between the reads')
  // A Node timer's refresh() counts from the loop's cached time, taken when the turn that
  // delivered the read began: on a loaded machine tens of ms before the 'data' event.
  t.true(at - lastRead >= 100, `timeout ${(at - lastRead).toFixed(0)} ms after the last read`)
  t.is(duplex.timeout, 150)
  t.true(duplex.channel.isOpen, "'timeout' does not close the stream")
  duplex.setTimeout(0)
  t.is(duplex.timeout, undefined)
})

test('toDuplex: a client channel works as a duplex too (pipeline() through a node:net echo server)', async (t) => {
  const echo = net.createServer((s) => s.pipe(s))
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r))
  t.teardown(() => echo.close())
  const loop = withLoop(t)
  const ch = await new Bootstrap().group(loop).handler(() => undefined).connect((echo.address() as net.AddressInfo).port, '127.0.0.1')
  const duplex = ch.toDuplex()
  const got = collect(duplex)
  duplex.cork()
  duplex.write('one ')
  duplex.write('two ')
  duplex.uncork()
  duplex.end('three')
  t.is((await got).toString(), 'one two three')
  await ch.closeFuture
})

test('toDuplex: unref() lets the process exit while the channel is open', async (t) => {
  const port = await netloopServer(t, (ch) => ch.pipeline.addLast('sink', {}))
  const script = `
    const { Bootstrap, EventLoop } = require(${JSON.stringify(join(__dirname, '..', 'index'))})
    const loop = new EventLoop()
    new Bootstrap().group(loop).handler(() => {}).connect(${port}, '127.0.0.1').then((ch) => {
      ch.toDuplex().unref()
      console.log('connected')
    })`
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => child.kill('SIGKILL'))
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
  const [code] = await once(child, 'exit')
  clearTimeout(timer)
  t.is(out.trim(), 'connected')
  t.is(code, 0, 'the child exited by itself')
})

test('toDuplex: options are checked', async (t) => {
  const { duplex } = await pair(t)
  const ch = duplex.channel
  t.throws(() => ch.toDuplex({ allowHalfOpen: 'yes' as never }), { instanceOf: NetloopError, code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => ch.toDuplex({ readableHighWaterMark: -1 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => ch.toDuplex({ name: '' }), { code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => ch.toDuplex(null as never), { code: 'ERR_INVALID_ARG_TYPE' })
  t.deepEqual(ch.pipeline.names(), ['ChannelDuplexHandler#0'], 'a rejected call adds no handler')
})
