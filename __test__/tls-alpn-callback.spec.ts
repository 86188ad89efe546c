import test, { type ExecutionContext } from 'ava'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import * as tls from 'node:tls'
import { type ALPNCallback, type ALPNCallbackInfo, type ChannelHandler, NetloopError, SslContext, SslHandshakeCompletionEvent, type SslContextOptions, type TlsInfo } from '../index'
import { loopFor, serve, until } from './channel-helpers'
import { sClient } from './tls-interop-helpers'
import { echo, pem, serverContext, withTls } from './tls-helpers'

/** A netloop TLS echo server whose context has `extra` (an ALPNCallback); what it saw. */
async function alpnServer(t: ExecutionContext, extra: Partial<SslContextOptions>) {
  const sessions: TlsInfo[] = []
  const failed: NetloopError[] = []
  const errors: unknown[] = []
  const app: ChannelHandler = {
    ...echo,
    userEventTriggered: (ctx, e) => {
      if (!(e instanceof SslHandshakeCompletionEvent)) return
      if (e.isSuccess) sessions.push(ctx.channel.tls!)
      else failed.push(e.cause!)
    },
    exceptionCaught: (_ctx, e) => void errors.push(e),
  }
  const s = await serve(t, loopFor(t), withTls(serverContext(extra), app))
  return { ...s, sessions, failed, errors }
}

/** A node:tls server with the same certificate and `ALPNCallback`. */
async function nodeServer(t: ExecutionContext, ALPNCallback: ALPNCallback): Promise<number> {
  const server = tls.createServer({ cert: pem('server.pem'), key: pem('server.key'), ALPNCallback }, (s) => s.pipe(s))
  server.on('tlsClientError', () => {})
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  return (server.address() as AddressInfo).port
}

/** What a node:tls client offering `protocols` gets: the protocol, or its error's code. */
function offer(port: number, protocols: string[] | undefined, servername = 'localhost'): Promise<string | false> {
  return new Promise((resolve) => {
    const s = tls.connect({ port, host: '127.0.0.1', ca: pem('ca.pem'), servername, ALPNProtocols: protocols })
    s.once('secureConnect', () => {
      // TLS 1.3: a server's refusal after the client's Finished arrives as an alert; wait for
      // an echo to be sure the server accepted.
      s.write('x')
      s.once('data', () => {
        resolve(s.alpnProtocol)
        s.destroy()
      })
    })
    s.once('error', (e: Error & { code?: string }) => {
      resolve(`error ${e.code}`)
      s.destroy()
    })
  })
}

test('the protocol the ALPNCallback returns is negotiated, and it is given the name and the offer', async (t) => {
  const seen: ALPNCallbackInfo[] = []
  const { port, sessions } = await alpnServer(t, {
    ALPNCallback: (info) => {
      seen.push(info)
      return info.protocols.includes('http/1.1') ? 'http/1.1' : undefined
    },
  })
  t.is(await offer(port, ['h2', 'http/1.1']), 'http/1.1')
  t.deepEqual(seen, [{ servername: 'localhost', protocols: ['h2', 'http/1.1'] }])
  await until(() => sessions.length === 1)
  t.is(sessions[0].alpnProtocol, 'http/1.1')
})

test('netloop and node:tls reach the same verdict with the same ALPNCallback', async (t) => {
  const callback: ALPNCallback = ({ servername, protocols }) => {
    if (servername === 'localhost' && protocols.includes('h2')) return 'h2'
    if (protocols.includes('wrong')) return 'spdy/3' // not offered: an invalid result
    return protocols.find((p) => p.startsWith('x-'))
  }
  const ours = await alpnServer(t, { ALPNCallback: callback })
  const theirs = await nodeServer(t, callback)
  const offers: (string[] | undefined)[] = [['h2', 'http/1.1'], ['http/1.1', 'x-custom'], ['http/1.1'], undefined]
  for (const protocols of offers) {
    const [a, b] = [await offer(ours.port, protocols), await offer(theirs, protocols)]
    t.is(a, b, `offer ${JSON.stringify(protocols)}: netloop ${a}, node:tls ${b}`)
  }
  // An invalid result fails both; node:tls resets the connection, netloop sends internal_error.
  t.is(await offer(theirs, ['wrong']), 'error ECONNRESET')
  t.is(await offer(ours.port, ['wrong']), 'error ERR_SSL_TLSV1_ALERT_INTERNAL_ERROR')
  t.is(await offer(ours.port, ['http/1.1']), 'error ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL', 'a refusal is the RFC 7301 alert')
  t.is(await offer(ours.port, undefined), false, 'no offer: no question, no protocol')
})

test('a refusal, a protocol the client did not offer and a throw each fail the handshake with their own code', async (t) => {
  const boom = new Error('protocol table unavailable')
  const { port, failed, errors } = await alpnServer(t, {
    ALPNCallback: ({ protocols }) => {
      if (protocols[0] === 'refuse') return undefined
      if (protocols[0] === 'invalid') return 'h3'
      throw boom
    },
  })
  t.is(await offer(port, ['refuse']), 'error ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL')
  t.is(await offer(port, ['invalid']), 'error ERR_SSL_TLSV1_ALERT_INTERNAL_ERROR')
  t.is(await offer(port, ['throw']), 'error ERR_SSL_TLSV1_ALERT_INTERNAL_ERROR')
  await until(() => failed.length === 3)
  t.deepEqual(
    failed.map((e) => e.code),
    ['ERR_TLS_NO_COMMON_PARAMETERS', 'ERR_TLS_ALPN_CALLBACK_INVALID_RESULT', 'ERR_TLS_ALPN_CALLBACK'],
  )
  t.regex(failed[0].message, /no_application_protocol.*"refuse"/)
  t.regex(failed[1].message, /"h3".*not one of the client's protocols \["invalid"\]/)
  t.is(failed[2].cause, boom, "the callback's own error is the cause")
  await until(() => errors.length === 3)
  t.is(await offer(port, undefined), false, 'the server goes on')
})

test('with an SNICallback: the context is chosen first, then the protocol, in one wait', async (t) => {
  const order: string[] = []
  const other = SslContext.forServer({ cert: pem('wrong-host.pem'), key: pem('wrong-host.key'), ALPNProtocols: ['ignored'] })
  const { port, sessions } = await alpnServer(t, {
    SNICallback: (name, cb) => {
      order.push(`sni ${name}`)
      setTimeout(() => cb(null, name === 'example.org' ? other : undefined), 20)
    },
    ALPNCallback: ({ servername, protocols }) => {
      order.push(`alpn ${servername}`)
      return servername === 'example.org' ? protocols[1] : protocols[0]
    },
  })
  t.is(await offer(port, ['a', 'b'], 'example.org'), 'b')
  t.is(await offer(port, ['a', 'b'], 'localhost'), 'a')
  t.deepEqual(order, ['sni example.org', 'alpn example.org', 'sni localhost', 'alpn localhost'])
  await until(() => sessions.length === 2)
  t.deepEqual(
    sessions.map((s) => [s.servername, s.alpnProtocol]),
    [
      ['example.org', 'b'],
      ['localhost', 'a'],
    ],
  )
})

test('openssl s_client -alpn gets the chosen protocol, on TLS 1.3 and 1.2', async (t) => {
  const { port } = await alpnServer(t, { ALPNCallback: ({ protocols }) => protocols.at(-1) })
  t.regex(await sClient(port, ['-alpn', 'h2,http/1.1']), /ALPN protocol: http\/1\.1/)
  t.regex(await sClient(port, ['-alpn', 'h2,acme-tls/1', '-tls1_2']), /ALPN protocol: acme-tls\/1/)
})

test('ALPNCallback: a server option, a function, exclusive with ALPNProtocols, and kept on its thread', (t) => {
  const both = t.throws(() => serverContext({ ALPNCallback: () => 'h2', ALPNProtocols: ['h2'] }))
  t.is((both as NetloopError).code, 'ERR_TLS_ALPN_CALLBACK_WITH_PROTOCOLS')
  const client = t.throws(() => SslContext.forClient({ ALPNCallback: () => 'h2' }))
  t.is((client as NetloopError).code, 'ERR_INVALID_ARG_VALUE')
  const notFn = t.throws(() => serverContext({ ALPNCallback: 'h2' as unknown as ALPNCallback }))
  t.is((notFn as NetloopError).code, 'ERR_INVALID_ARG_TYPE')
  const ctx = serverContext({ ALPNCallback: () => 'h2' })
  const shared = t.throws(() => new SslContext({ netloopSslContext: ctx.netloopSslContext }))
  t.is((shared as NetloopError).code, 'ERR_TLS_ALPN_CALLBACK_NOT_SHAREABLE')
  const dropped = t.throws(() => ctx.reload({ cert: pem('server.pem'), key: pem('server.key') }))
  t.is((dropped as NetloopError).code, 'ERR_INVALID_ARG_VALUE')
  t.notThrows(() => ctx.reload({ cert: pem('server.pem'), key: pem('server.key'), ALPNCallback: () => 'h2' }))
})
