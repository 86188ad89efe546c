// Misbehaving TLS peers mixed with good ones against one netloop TLS echo server: garbage,
// half a ClientHello, resets mid-stream, readers that stop, records broken after the handshake,
// clients that write then end. Every good client's bytes come back intact, every connection
// closes, and the server goes on serving.
import test from 'ava'
import * as net from 'node:net'
import * as tls from 'node:tls'
import { createHash, randomBytes } from 'node:crypto'
import type { Channel, ChannelHandler } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { runMixedClients } from './helpers'
import { pem, serverContext, withTls } from './tls-helpers'

const CLIENTS = 240
const CONCURRENCY = 20
/** Codes a server connection may fail with when its peer misbehaves. */
const EXPECTED = new Set(['ECONNRESET', 'EPIPE', 'ERR_TLS_PROTOCOL', 'ERR_TLS_ALERT_RECEIVED'])

const rnd = (n: number) => Math.floor(Math.random() * n)
const sha = (b: Buffer) => createHash('sha1').update(b).digest('hex')

test('240 good and misbehaving TLS clients: good echoes intact, every connection closed, the server unharmed', async (t) => {
  t.timeout(60_000)
  const errors = new Map<string, number>()
  const app: ChannelHandler = {
    // Backpressure as a serious server does it: stop reading while the echo backs up.
    channelRead: (ctx, m: Buffer) => {
      ctx.write(m)
      if (!ctx.channel.isWritable) ctx.channel.config.autoRead = false
    },
    channelReadComplete: (ctx) => ctx.flush(),
    channelWritabilityChanged: (ctx) => {
      if (ctx.channel.isWritable) ctx.channel.config.autoRead = true
    },
    exceptionCaught: (ctx, e) => {
      const code = (e as { code?: string }).code ?? String(e)
      errors.set(code, (errors.get(code) ?? 0) + 1)
      void ctx.close()
    },
  }
  const { port, children } = await serve(t, loopFor(t), withTls(serverContext(), app), { writeBufferHighWaterMark: 256 * 1024 })
  const ca = pem('ca.pem')
  const connect = () => tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca })
  const problems: string[] = []

  const echo = () =>
    new Promise<void>((resolve) => {
      const data = randomBytes(1 + rnd(300_000))
      const s = connect()
      const got: Buffer[] = []
      let n = 0
      s.on('secureConnect', () => {
        for (let at = 0; at < data.length; ) {
          const k = 1 + rnd(40_000)
          s.write(data.subarray(at, at + k))
          at += k
        }
      })
      s.on('data', (d: Buffer) => {
        got.push(d)
        n += d.length
        if (n >= data.length) s.end()
      })
      s.on('error', (e: NodeJS.ErrnoException) => problems.push(`echo error ${e.code}`))
      s.on('close', () => {
        if (sha(Buffer.concat(got)) !== sha(data)) problems.push(`echo mismatch ${n}/${data.length}`)
        resolve()
      })
    })
  const writeThenEnd = () =>
    new Promise<void>((resolve) => {
      const data = randomBytes(1 + rnd(20_000))
      const s = connect()
      const got: Buffer[] = []
      s.on('secureConnect', () => s.end(data))
      s.on('data', (d: Buffer) => got.push(d))
      s.on('error', (e: NodeJS.ErrnoException) => problems.push(`end error ${e.code}`))
      s.on('close', () => {
        if (sha(Buffer.concat(got)) !== sha(data)) problems.push(`write-then-end got ${Buffer.concat(got).length}/${data.length}`)
        resolve()
      })
    })
  const raw = (send: (s: net.Socket) => void) =>
    new Promise<void>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => send(s))
      s.on('error', () => {})
      s.on('close', () => resolve())
      s.resume()
    })
  const halfHello = () =>
    raw((s) => {
      s.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]))
      setTimeout(() => s.destroy(), rnd(30))
    })
  // Garbage, then the client's FIN: one in a few thousand starts like a TLS record whose
  // announced length has not arrived, which a server rightly waits for (until its handshake
  // timeout, were the client to stay); the FIN ends that wait.
  const garbage = () => raw((s) => s.end(randomBytes(1 + rnd(4000))))
  const stopsReading = () =>
    new Promise<void>((resolve) => {
      const s = connect()
      s.on('secureConnect', () => {
        s.pause()
        const b = randomBytes(65536)
        for (let i = 0; i < 32; i++) s.write(b)
        setTimeout(() => s.destroy(), 30 + rnd(100))
      })
      s.on('error', () => {})
      s.on('close', () => resolve())
    })
  const resetMidStream = () =>
    new Promise<void>((resolve) => {
      const sock = net.connect(port, '127.0.0.1')
      const s = tls.connect({ socket: sock, servername: 'localhost', ca })
      s.on('secureConnect', () => {
        s.write(randomBytes(100_000))
        setTimeout(() => sock.resetAndDestroy(), rnd(15))
      })
      s.on('error', () => {})
      sock.on('error', () => {})
      s.on('close', () => resolve())
    })
  const brokenRecords = () =>
    new Promise<void>((resolve) => {
      const sock = net.connect(port, '127.0.0.1')
      const s = tls.connect({ socket: sock, servername: 'localhost', ca })
      s.on('secureConnect', () => sock.write(randomBytes(200)))
      s.on('error', () => {})
      sock.on('error', () => {})
      s.on('close', () => resolve())
    })

  const kinds = [echo, echo, echo, writeThenEnd, halfHello, garbage, stopsReading, resetMidStream, brokenRecords]
  await runMixedClients(kinds, CLIENTS, CONCURRENCY)
  t.deepEqual(problems, [])
  await until(() => children.every((c: Channel) => !c.isOpen), 15_000)
  for (const code of errors.keys()) t.true(EXPECTED.has(code), `unexpected server error ${code}`)
  // Still serving.
  const before = problems.length
  await echo()
  t.is(problems.length, before)
})
