/**
 * What a channel keeps apart from its class: the shape of a server channel, the live view of
 * its options (`channel.config`), and the members few channels use (`ChannelExtras`, made on
 * first use so that an idle connection does not carry them).
 */
import type { AddressInfo } from 'node:net'
import type { Channel } from './channel'
import type { HAProxyMessage } from './haproxy'
import { OPTION_NAMES, type ChannelOptions } from './options'
import type { TlsInfo } from './tls-info'

/** What `ServerBootstrap.bind` resolves to: a server channel (or, with `SO_REUSEPORT` worker
 * listeners, the set of them). */
export interface ServerChannel {
  /** Unique in the process (negative for a set of worker listeners). */
  readonly id: number
  readonly localAddress: AddressInfo | undefined
  readonly isOpen: boolean
  /** Resolves when the server is closed. */
  readonly closeFuture: Promise<void>
  /** Stops listening (accepted channels stay open). */
  close(): Promise<void>
  /** Lets the process exit while listening (node:net's `unref()`). */
  unref(): this
  ref(): this
  /** Stops listening (`await using`). */
  [Symbol.asyncDispose](): Promise<void>
}

/** Every option of a live channel, readable and settable (checked at once). */
export type ChannelConfig = Required<ChannelOptions>

/** @internal The object `channel.config` returns: each option a live accessor of `ch`. */
export function configView(ch: Channel): ChannelConfig {
  const cfg = {} as ChannelConfig
  for (const name of OPTION_NAMES) {
    Object.defineProperty(cfg, name, {
      enumerable: true,
      get: () => ch.getOption(name),
      set: (v: unknown) => ch.setOption(name, v as never),
    })
  }
  return Object.freeze(cfg) as ChannelConfig
}

/** The members of a channel that few channels use (see `Channel._extras`). */
/** @internal */
export class ChannelExtras {
  connectHost: string | undefined = undefined
  tlsInfo: TlsInfo | undefined = undefined
  haproxy: HAProxyMessage | undefined = undefined
  closeFuture: Promise<void> | undefined = undefined
  resolveClose: (() => void) | undefined = undefined
  config: ChannelConfig | undefined = undefined
}
