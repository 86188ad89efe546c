// STARTTLS: TLS added to a channel that already spoke plaintext (SMTP, IMAP, LDAP, Postgres).
import test, { type ExecutionContext } from 'ava'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import * as net from 'node:net'
import { join } from 'node:path'
import * as tls from 'node:tls'
import { Bootstrap, type ChannelHandler, type ChannelHandlerContext, LineBasedFrameDecoder, SslHandler, SslHandshakeCompletionEvent } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { certsDir, clientContext, pem, serverContext } from './tls-helpers'

/**
 * A line server: `STARTTLS` is answered `220 go ahead` in plaintext and TLS starts; every other
 * line is echoed with what the channel negotiated. Between the command and the end of the
 * handshake nothing may be read: the TLS handler takes every byte that arrives after it was
 * added, so a line read then was sent in plaintext after the command, in the same packet
 * (the injection of CVE-2011-0411): the connection is refused. The line decoder is removed
 * and a fresh one added, so a partial line it held comes out as raw bytes, refused the same
 * way.
 */
async function starttlsServer(t: ExecutionContext) {
  const ctx = serverContext()
  const refused: string[] = []
  const init = (ch: Parameters<Parameters<typeof serve>[2]>[0]) => {
    let upgrading = false
    const app: ChannelHandler = {
      channelRead: (c: ChannelHandlerContext, line: Buffer) => {
        if (upgrading) {
          refused.push(String(line))
          c.close()
          return
        }
        if (String(line) === 'STARTTLS') {
          upgrading = true
          c.writeAndFlush('220 go ahead\r\n')
          // Not replace(): as in Netty, it hands what the old decoder held to the new one.
          c.pipeline.remove('lines')
          c.pipeline.addBefore('app', 'lines', new LineBasedFrameDecoder(1024))
          c.pipeline.addFirst('tls', new SslHandler(ctx))
          return
        }
        c.writeAndFlush(`${line} (${c.channel.tls?.protocol ?? 'plaintext'})\n`)
      },
      userEventTriggered: (_c, e) => {
        if (e instanceof SslHandshakeCompletionEvent && e.isSuccess) upgrading = false
      },
      exceptionCaught: (c) => void c.close(),
    }
    ch.pipeline.addLast('lines', new LineBasedFrameDecoder(1024)).addLast('app', app)
  }
  const s = await serve(t, loopFor(t), init)
  return { ...s, refused }
}

/** Reads from `s` until `until` matches what came. */
async function readUntil(s: NodeJS.ReadableStream, until: RegExp): Promise<string> {
  let got = ''
  while (!until.test(got)) {
    const [d] = await once(s as net.Socket, 'data')
    got += String(d)
  }
  return got
}

test('STARTTLS: a plaintext answer, then TLS on the same connection (a node:tls client upgrading its socket)', async (t) => {
  const { port } = await starttlsServer(t)
  const raw = net.connect(port, '127.0.0.1')
  t.teardown(() => raw.destroy())
  await once(raw, 'connect')
  raw.write('hello\n')
  t.is(await readUntil(raw, /\n/), 'hello (plaintext)\n')
  raw.write('STARTTLS\n')
  t.is(await readUntil(raw, /\r\n/), '220 go ahead\r\n')
  const secure = tls.connect({ socket: raw, ca: pem('ca.pem'), servername: 'localhost' })
  await once(secure, 'secureConnect')
  t.true(secure.authorized)
  secure.write('over tls\n')
  t.is(await readUntil(secure, /\n/), 'over tls (TLSv1.3)\n')
})

for (const [what, injected] of [
  ['a whole line', 'MAIL FROM:<mallory>\n'],
  ['a partial line', 'MAIL FR'],
] as const) {
  test(`STARTTLS: plaintext sent after the command in the same packet (${what}) closes the connection`, async (t) => {
    const { port, refused } = await starttlsServer(t)
    const raw = net.connect(port, '127.0.0.1')
    t.teardown(() => raw.destroy())
    await once(raw, 'connect')
    raw.write(`STARTTLS\n${injected}`)
    t.is(await readUntil(raw, /\r\n/), '220 go ahead\r\n')
    await once(raw, 'close')
    t.deepEqual(refused, [injected.replace('\n', '')])
  })
}

test('STARTTLS from a netloop client: the SslHandler added after the 220 answer', async (t) => {
  const { port } = await starttlsServer(t)
  const lines: string[] = []
  let tls: SslHandler | undefined
  const app: ChannelHandler = {
    channelRead: (c: ChannelHandlerContext, line: Buffer) => {
      lines.push(String(line))
      if (String(line) === '220 go ahead') {
        tls = new SslHandler(clientContext(), { servername: 'localhost' })
        c.pipeline.addFirst('tls', tls)
      }
    },
  }
  const ch = await new Bootstrap()
    .group(loopFor(t))
    .handler((c) => void c.pipeline.addLast('lines', new LineBasedFrameDecoder(1024)).addLast('app', app))
    .connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  await ch.writeAndFlush('hello\nSTARTTLS\n', ch.newPromise())
  await until(() => tls !== undefined)
  const session = await tls!.handshakeFuture()
  t.true(session.authorized)
  await ch.writeAndFlush('over tls\n', ch.newPromise())
  await until(() => lines.length === 3)
  t.deepEqual(lines, ['hello (plaintext)', '220 go ahead', 'over tls (TLSv1.3)'])
})

test('openssl s_client -starttls smtp upgrades after EHLO and STARTTLS, and talks over TLS', async (t) => {
  const ctx = serverContext()
  const got: string[] = []
  const smtp: ChannelHandler = {
    channelActive: (c) => void c.writeAndFlush('220 netloop ESMTP\r\n'),
    channelRead: (c: ChannelHandlerContext, line: Buffer) => {
      const text = String(line)
      got.push(`${c.channel.tls ? 'tls' : 'plain'}: ${text}`)
      if (/^EHLO /i.test(text)) c.writeAndFlush('250-netloop\r\n250 STARTTLS\r\n')
      else if (text === 'STARTTLS') {
        c.writeAndFlush('220 Ready to start TLS\r\n')
        c.pipeline.addFirst('tls', new SslHandler(ctx))
      } else if (text === 'QUIT') void c.writeAndFlush('221 bye\r\n', c.newPromise()).then(() => c.close())
      else c.writeAndFlush(`250 ${text} (${c.channel.tls?.protocol})\r\n`)
    },
    exceptionCaught: (c) => void c.close(),
  }
  const { port } = await serve(t, loopFor(t), (ch) => void ch.pipeline.addLast('lines', new LineBasedFrameDecoder(1024)).addLast('app', smtp))
  const p = spawn('openssl', ['s_client', '-starttls', 'smtp', '-connect', `127.0.0.1:${port}`, '-CAfile', join(certsDir(), 'ca.pem'), '-servername', 'localhost', '-quiet', '-verify_return_error'], { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  p.stdout.on('data', (d) => (out += String(d)))
  p.stderr.on('data', (d) => (out += String(d)))
  const exited = once(p, 'exit')
  const kill = setTimeout(() => p.kill('SIGKILL'), 10_000)
  t.teardown(() => clearTimeout(kill))
  await until(() => /verify return:1/.test(out), 8000)
  p.stdin.write('NOOP\r\n')
  await until(() => /250 NOOP/.test(out), 8000)
  p.stdin.end('QUIT\r\n')
  await exited
  t.regex(out, /250 NOOP \(TLSv1\.3\)/)
  t.deepEqual(got.map((g) => g.replace(/^(plain: EHLO) .*/, '$1')), ['plain: EHLO', 'plain: STARTTLS', 'tls: NOOP', 'tls: QUIT'])
})
