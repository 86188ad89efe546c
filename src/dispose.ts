/**
 * Explicit resource management: `await using ch = await bootstrap.connect(...)` closes the
 * channel when the scope ends (`Symbol.asyncDispose`, as on node:net's `Server` and streams).
 * Server channels that `ServerBootstrap.bind` returns are `Channel`s too: disposing one stops
 * listening.
 */
import { Channel } from './channel'

declare module './channel' {
  interface Channel {
    /** Closes the channel (`await using`); resolves once it is closed. */
    [Symbol.asyncDispose](): Promise<void>
  }
}

Object.defineProperty(Channel.prototype, Symbol.asyncDispose, {
  value: function asyncDispose(this: Channel): Promise<void> {
    return this.close()
  },
  writable: true,
  configurable: true,
})
