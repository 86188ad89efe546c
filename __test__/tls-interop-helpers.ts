// What the TLS interop specs share: openssl s_client against a netloop server, a netloop TLS
// echo server that records each session, and a netloop client that fetches over TLS.
import type { ExecutionContext } from 'ava'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { Bootstrap, type Channel, type ChannelHandler, SslHandler, SslHandshakeCompletionEvent, type TlsInfo } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { certsDir, clientContext, echo, serverContext, withTls } from './tls-helpers'

/**
 * Runs `openssl s_client` against `port`, writes `input`, waits until the output shows it echoed
 * back (or the client exits), then ends its input so it says goodbye. Returns what it printed.
 */
export async function sClient(port: number, args: string[], input = 'ping-netloop\n'): Promise<string> {
  const p = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', join(certsDir(), 'ca.pem'), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let out = ''
  p.stdout.on('data', (d) => (out += String(d)))
  p.stderr.on('data', (d) => (out += String(d)))
  const exited = once(p, 'exit')
  const kill = setTimeout(() => p.kill('SIGKILL'), 10_000)
  try {
    p.stdin.write(input)
    const echoed = input.trim()
    await Promise.race([until(() => out.includes('---\n' + echoed) || out.includes(echoed + '\n'), 8000), exited])
    p.stdin.end()
    await exited
  } finally {
    clearTimeout(kill)
  }
  return out
}

/**
 * A netloop TLS echo server; `sessions` gets each child's `channel.tls` when its handshake
 * completes (read then: it is not readable once the channel closed).
 */
export async function echoServer(t: ExecutionContext, extra: Parameters<typeof serverContext>[0] = {}) {
  const loop = loopFor(t)
  const sessions: TlsInfo[] = []
  const app: ChannelHandler = { ...echo, userEventTriggered: (ctx, e) => void (e instanceof SslHandshakeCompletionEvent && e.isSuccess && sessions.push(ctx.channel.tls!)) }
  const s = await serve(t, loop, withTls(serverContext(extra), app))
  return { ...s, sessions }
}

/** A netloop client that sends `request` after the handshake and collects until the peer closes. */
export async function fetchOver(t: ExecutionContext, port: number, request: string, alpn?: string[]): Promise<{ ch: Channel; tls: TlsInfo; body: () => string }> {
  const loop = loopFor(t)
  const got: Buffer[] = []
  const app: ChannelHandler = { channelRead: (_c, m: Buffer) => void got.push(Buffer.from(m)) }
  const ctx = clientContext(alpn ? { ALPNProtocols: alpn } : {})
  const ch: Channel = await new Bootstrap()
    .group(loop)
    .handler((c) => c.pipeline.addLast('tls', new SslHandler(ctx, { servername: 'localhost' })).addLast('app', app))
    .connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  const tls = ch.tls!
  await ch.writeAndFlush(Buffer.from(request), ch.newPromise())
  return { ch, tls, body: () => Buffer.concat(got).toString() }
}
