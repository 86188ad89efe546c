// The default handler of exceptions that reach a pipeline's tail: quiet for a peer that went
// away (ECONNRESET/EPIPE, as node:http is), loud (stderr, with the stack) for anything else.
import test from 'ava'

import { type Channel, ChannelPipeline } from '../index'
import { loopFor, netClient, serve, until } from './channel-helpers'

/** Calls `fn` with console.error replaced by a recorder; returns what was printed. */
async function printed(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = []
  const original = console.error
  console.error = (...args: unknown[]) => void lines.push(args.map((a) => (a instanceof Error ? a.stack : String(a))).join(' '))
  try {
    await fn()
    await new Promise((r) => setTimeout(r, 50)) // whatever the close produced is delivered
  } finally {
    console.error = original
  }
  return lines
}

test.serial('a client reset on a server without exceptionCaught prints nothing by default', async (t) => {
  ChannelPipeline.setUnhandledExceptionHandler(undefined)
  const lines = await printed(async () => {
    const loop = loopFor(t)
    let child: Channel | undefined
    let read = false
    const { port } = await serve(t, loop, (ch) => {
      child = ch
      ch.pipeline.addLast('r', { channelRead: (ctx, m) => void ((read = true), ctx.writeAndFlush(m)) })
    })
    for (let i = 0; i < 3; i++) {
      read = false
      const s = await netClient(t, port)
      s.write('hello')
      await until(() => read)
      s.resetAndDestroy()
      await until(() => !child!.isOpen)
    }
  })
  t.deepEqual(lines, [])
})

test.serial('a handler error that reaches the tail is still printed with its stack by default', async (t) => {
  ChannelPipeline.setUnhandledExceptionHandler(undefined)
  const lines = await printed(async () => {
    const loop = loopFor(t)
    let thrown = false
    const { port } = await serve(t, loop, (ch) => {
      ch.pipeline.addLast('r', {
        channelRead: () => {
          thrown = true
          throw new Error('a real bug')
        },
      })
    })
    const s = await netClient(t, port)
    s.write('hello')
    await until(() => thrown)
  })
  t.is(lines.length, 1)
  t.regex(lines[0], /reached the tail of the pipeline of channel \d+.*a real bug/s)
  t.regex(lines[0], /at .*unhandled-default\.spec\.ts/)
})
