// Netty's backpressure pattern for a server that answers what it reads: while the channel is
// not writable (more than the high water mark, 64 KiB by default, waits to be sent: the client
// does not read), stop reading it (`autoRead` off); read again once it drained below the low
// mark. TCP then holds the client back instead of the server's memory growing with what it
// queues. (`examples/echo.ts` spells the same out in its own handler.)
//
//   ch.pipeline.addLast('backpressure', readWhileWritable)   // anywhere: it only watches
import type { ChannelHandler } from 'netloop'

/** Turns `autoRead` off while the channel is unwritable (stateless: one for every channel). */
export const readWhileWritable: ChannelHandler = {
  channelWritabilityChanged(ctx) {
    ctx.channel.config.autoRead = ctx.channel.isWritable
    ctx.fireChannelWritabilityChanged()
  },
}
