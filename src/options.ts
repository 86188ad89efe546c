/**
 * Channel options with Netty's names, their validation and their wire form (numbers).
 */
import { NetloopError, checkBoolean, checkInteger } from './errors'

/** Every channel option (the guide's list), with Netty's names in camelCase. */
export interface ChannelOptions {
  /** Disable Nagle's algorithm (default true). */
  tcpNoDelay?: boolean
  /** SO_KEEPALIVE (default false). */
  soKeepAlive?: boolean
  /** Listen backlog of server channels (default 1024). */
  soBacklog?: number
  /** SO_REUSEADDR of server channels (default true). */
  soReuseaddr?: boolean
  /**
   * SO_REUSEPORT of server channels (default false). With a worker-thread group, every worker
   * loop binds its own listener on the port and the kernel spreads connections.
   */
  soReusePort?: boolean
  /** SO_RCVBUF in bytes (default: the kernel's). */
  soRcvbuf?: number
  /** SO_SNDBUF in bytes (default: the kernel's). */
  soSndbuf?: number
  /** SO_LINGER in seconds; -1 (default) disables it, 0 resets on close. */
  soLinger?: number
  /** Pending outbound bytes above which the channel turns unwritable (default 65536). */
  writeBufferHighWaterMark?: number
  /** Pending outbound bytes below which it turns writable again (default 32768). */
  writeBufferLowWaterMark?: number
  /** Milliseconds before a connect fails with `ETIMEDOUT`; 0 disables (default 30000). */
  connectTimeoutMillis?: number
  /** Read as soon as data arrives (default true); false: only after `read()`. */
  autoRead?: boolean
  /** Most write system calls per flush before yielding to other channels (default 16). */
  writeSpinCount?: number
  /** Most reads per readiness event (default 16). */
  maxMessagesPerRead?: number
  /**
   * Bytes after which a read batch ends, the rest read in a later turn (Netty's
   * `maxBytesPerRead`; default 65536, 0: no limit). A channel's reads reach JS once per loop
   * iteration, so this bounds what an iteration holds before your handler sees it.
   */
  maxBytesPerRead?: number
  /** Keep the output open after the peer half-closes (default false). */
  allowHalfClosure?: boolean
  /**
   * Server channels: most accepted connections open at once (default 0: no limit). Beyond it
   * a new connection is closed as soon as it is accepted and counted in
   * `EventLoop.metrics().refusedConnections` of the server's loop.
   */
  maxConnections?: number
}

export type ChannelOptionName = keyof ChannelOptions

type Kind = 'boolean' | 'count' | 'linger' | 'positive'

const KINDS: Record<ChannelOptionName, Kind> = {
  tcpNoDelay: 'boolean',
  soKeepAlive: 'boolean',
  soReuseaddr: 'boolean',
  soReusePort: 'boolean',
  autoRead: 'boolean',
  allowHalfClosure: 'boolean',
  soBacklog: 'count',
  soRcvbuf: 'positive',
  soSndbuf: 'positive',
  soLinger: 'linger',
  writeBufferHighWaterMark: 'count',
  writeBufferLowWaterMark: 'count',
  connectTimeoutMillis: 'count',
  writeSpinCount: 'positive',
  maxMessagesPerRead: 'positive',
  maxBytesPerRead: 'count',
  maxConnections: 'count',
}

/** The option names, for iteration. */
export const OPTION_NAMES = Object.keys(KINDS) as ChannelOptionName[]

/** Checks `name` and `value`; returns the value as the native side takes it. */
export function encodeOption(name: string, value: unknown): number {
  const kind = KINDS[name as ChannelOptionName]
  if (kind === undefined) {
    throw new NetloopError('ERR_INVALID_ARG_VALUE', `Unknown channel option '${name}'. Known options: ${OPTION_NAMES.join(', ')}`)
  }
  if (kind === 'boolean') {
    checkBoolean(name, value)
    return value ? 1 : 0
  }
  return checkInteger(name, value, kind === 'linger' ? -1 : kind === 'positive' ? 1 : 0, 0x7fffffff)
}

/** The native value of option `name` back in JS form. */
export function decodeOption(name: ChannelOptionName, v: number): boolean | number {
  return KINDS[name] === 'boolean' ? v !== 0 : v
}

/** Checks a set of options; returns them as parallel name/value lists for the native side. */
export function encodeOptions(options: ChannelOptions): [string[], number[]] {
  const names: string[] = []
  const values: number[] = []
  for (const [k, v] of Object.entries(options)) {
    if (v === undefined) continue
    names.push(k)
    values.push(encodeOption(k, v))
  }
  const high = options.writeBufferHighWaterMark ?? 65536
  const low = options.writeBufferLowWaterMark ?? Math.min(32768, high)
  if (low > high) {
    throw new NetloopError('ERR_OUT_OF_RANGE', `writeBufferLowWaterMark (${low}) must not exceed writeBufferHighWaterMark (${high})`)
  }
  // The native side checks low <= high after each step: lower the low mark first when the
  // high one drops below the default low mark, raise the high mark first otherwise.
  const hi = names.indexOf('writeBufferHighWaterMark')
  if (hi >= 0 && high < 32768) {
    names.splice(hi, 1)
    values.splice(hi, 1)
    if (!names.includes('writeBufferLowWaterMark')) {
      names.push('writeBufferLowWaterMark')
      values.push(low)
    }
    const lo = names.indexOf('writeBufferLowWaterMark')
    names.splice(lo + 1, 0, 'writeBufferHighWaterMark')
    values.splice(lo + 1, 0, high)
  }
  return [names, values]
}
