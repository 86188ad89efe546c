/**
 * node:tls's `ALPNCallback` for netloop servers: how the callback is called and how its answer
 * is reduced to one outcome. The native `SslHandler` asks it with the `SNICallback`, in one
 * question about the ClientHello (docs/decisions/0007-tls.md, "ALPNCallback").
 */
import { inspect } from 'node:util'
import { invalidArgType } from './errors'

/** What an `ALPNCallback` is given. */
export interface ALPNCallbackInfo {
  /** The server name the client asked for (SNI), if any. */
  servername: string | undefined
  /** The ALPN protocols the client offered, in its order of preference. */
  protocols: string[]
}

/**
 * node:tls's `ALPNCallback`: called once per connection whose client offers ALPN protocols,
 * on the thread of the channel's loop, after the `SNICallback` (if any) chose the context.
 * Return one of `protocols` to serve it, or `undefined` to refuse the connection with the
 * `no_application_protocol` alert. Synchronous, as node:tls's.
 */
export type ALPNCallback = (info: ALPNCallbackInfo) => string | undefined

/** What a callback came to. */
export type AlpnOutcome =
  /** Not asked: no callback, or the client offered no protocol. */
  | { kind: 'unasked' }
  | { kind: 'select'; protocol: string }
  /** It returned `undefined`. */
  | { kind: 'refuse' }
  /** It returned something that is not one of the client's protocols. */
  | { kind: 'invalid'; message: string }
  /** It threw. */
  | { kind: 'fail'; error: unknown }

/** @internal Checks the option. */
export function checkAlpnCallback(v: unknown): asserts v is ALPNCallback | undefined {
  if (v !== undefined && typeof v !== 'function') throw invalidArgType('ALPNCallback', 'function', v)
}

/** @internal Calls `callback` about a client that offered `protocols`. */
export function runAlpnCallback(callback: ALPNCallback, servername: string | undefined, protocols: string[]): AlpnOutcome {
  let r: unknown
  try {
    r = callback({ servername, protocols: [...protocols] })
  } catch (error) {
    return { kind: 'fail', error }
  }
  if (r === undefined) return { kind: 'refuse' }
  if (typeof r === 'string' && protocols.includes(r)) return { kind: 'select', protocol: r }
  const returned = typeof r === 'string' ? JSON.stringify(r) : inspect(r, { depth: 0 })
  return {
    kind: 'invalid',
    message: `the ALPNCallback returned ${returned}, which is not one of the client's protocols ${JSON.stringify(protocols)}`,
  }
}
