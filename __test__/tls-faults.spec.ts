import test, { type ExecutionContext } from 'ava'
import * as net from 'node:net'
import * as tls from 'node:tls'
import { once } from 'node:events'
import { readdirSync } from 'node:fs'
import { type ChannelHandler, NetloopError } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { captureClientHello, echo, pem, serverContext, withTls } from './tls-helpers'

type T = ExecutionContext

/** Connections reset mid-handshake by the storm test (raise by hand: NETLOOP_TLS_RESETS=10000). */
const RESETS = Number(process.env.NETLOOP_TLS_RESETS ?? 2000)

/** A netloop TLS echo server counting its children's exceptions and inactive events. */
async function server(t: T, extra: Parameters<typeof serverContext>[0] = {}) {
  const errors: Array<{ error: unknown; at: number }> = []
  let inactive = 0
  const loop = loopFor(t)
  const app: ChannelHandler = {
    ...echo,
    exceptionCaught: (_c, error) => void errors.push({ error, at: Date.now() }),
    channelInactive: (ctx) => {
      inactive++
      ctx.fireChannelInactive()
    },
  }
  const s = await serve(t, loop, withTls(serverContext(extra), app))
  return { ...s, errors, inactive: () => inactive }
}

/** A good node:tls client echoes through the server: the loop goes on after a fault. */
async function stillEchoes(t: T, port: number): Promise<void> {
  const s = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem') })
  t.teardown(() => s.destroy())
  await once(s, 'secureConnect')
  s.write('still alive')
  const [d] = await once(s, 'data')
  t.is(String(d), 'still alive')
}

function rawClient(t: T, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s))
    s.on('error', reject)
    t.teardown(() => s.destroy())
  })
}

test('garbage instead of a ClientHello: ERR_TLS_PROTOCOL, the socket closes, the server goes on', async (t) => {
  const { port, errors, children } = await server(t)
  const s = await rawClient(t, port)
  s.on('error', () => {})
  const got: Buffer[] = []
  s.on('data', (d: Buffer) => got.push(d))
  const closed = once(s, 'close')
  s.write('this is not a TLS record at all\r\n\r\n')
  await closed
  await until(() => errors.length > 0)
  t.true(errors[0].error instanceof NetloopError)
  t.is((errors[0].error as NetloopError).code, 'ERR_TLS_PROTOCOL')
  await until(() => !children[0].isOpen)
  // What came back, if anything, is a fatal alert record (content type 21), not data.
  const back = Buffer.concat(got)
  t.true(back.length === 0 || back[0] === 21, back.toString('hex'))
  await stillEchoes(t, port)
})

test('half a ClientHello then silence is closed by the handshake timeout (ERR_TLS_HANDSHAKE_TIMEOUT)', async (t) => {
  const hello = await captureClientHello()
  t.true(hello.length > 100 && hello[0] === 0x16, 'a handshake record')
  const { port, errors } = await server(t, { handshakeTimeout: 300 })
  const s = await rawClient(t, port)
  s.on('error', () => {})
  s.resume()
  const closed = once(s, 'close')
  const start = Date.now()
  s.write(hello.subarray(0, hello.length >> 1))
  await closed
  const elapsed = Date.now() - start
  t.true(elapsed >= 250, `closed after ${elapsed} ms`)
  t.true(elapsed < 5000, `closed after ${elapsed} ms`)
  t.is(errors.length, 1)
  t.is((errors[0].error as NetloopError).code, 'ERR_TLS_HANDSHAKE_TIMEOUT')
  await stillEchoes(t, port)
})

function fdCount(): number {
  return readdirSync('/proc/self/fd').length
}

test(`${RESETS} connections reset mid-handshake leave no channel and no fd behind`, async (t) => {
  const hello = await captureClientHello()
  const part = hello.subarray(0, 64)
  const { port, children, inactive } = await server(t)
  await stillEchoes(t, port) // warm up: the loop, the context and the first child exist
  const fdsBefore = fdCount()
  const accepted = children.length
  let next = 0
  const worker = async () => {
    while (next < RESETS) {
      next++
      const s = net.connect(port, '127.0.0.1')
      s.on('error', () => {})
      await once(s, 'connect')
      s.write(part)
      s.resetAndDestroy()
      await once(s, 'close')
    }
  }
  await Promise.all(Array.from({ length: 32 }, worker))
  // Every reset connection was accepted and has gone inactive (the warm-up one is still open).
  await until(() => children.length === accepted + RESETS && inactive() === RESETS, 30_000)
  t.is(children.filter((c) => c.isOpen).length, accepted)
  await until(() => fdCount() <= fdsBefore + 8, 10_000)
  t.true(fdCount() <= fdsBefore + 8, `fds before ${fdsBefore}, after ${fdCount()}`)
  await stillEchoes(t, port)
})
