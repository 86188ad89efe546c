/**
 * Explicit resource management: `await using ch = await bootstrap.connect(...)` closes the
 * channel when the scope ends (`Symbol.asyncDispose`, as on node:net's `Server` and streams).
 * What `ServerBootstrap.bind` returns (`ServerChannel`) has it too: disposing stops listening.
 */
import { Channel } from './channel'

declare module './channel' {
  interface ServerChannel {
    /** Stops listening (`await using`). */
    [Symbol.asyncDispose](): Promise<void>
  }
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
