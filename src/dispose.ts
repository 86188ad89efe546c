/**
 * Explicit resource management: `await using ch = await bootstrap.connect(...)` closes the
 * channel when the scope ends (`Symbol.asyncDispose`, as on node:net's `Server` and streams).
 * What `ServerBootstrap.bind` returns (`ServerChannel`) has it too: disposing stops listening.
 * `await using loop = new EventLoop()` (and an `EventLoopGroup`) shuts it down gracefully with
 * no quiet period and Netty's 15 s timeout when the scope ends.
 */
import { Channel } from './channel'
import { EventLoopGroup } from './group'
import { EventLoop } from './loop'

declare module './loop' {
  interface EventLoop {
    /** `shutdownGracefully(0, 15000)` (`await using`); resolves once the loop terminated. */
    [Symbol.asyncDispose](): Promise<void>
  }
}

declare module './group' {
  interface EventLoopGroup {
    /** `shutdownGracefully(0, 15000)` (`await using`); resolves once every loop terminated. */
    [Symbol.asyncDispose](): Promise<void>
  }
}

for (const cls of [EventLoop, EventLoopGroup]) {
  Object.defineProperty(cls.prototype, Symbol.asyncDispose, {
    value: function asyncDispose(this: EventLoop | EventLoopGroup): Promise<void> {
      return this.shutdownGracefully(0, 15_000)
    },
    writable: true,
    configurable: true,
  })
}

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
