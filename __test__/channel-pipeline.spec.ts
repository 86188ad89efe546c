import test from 'ava'

import { type Channel, type ChannelHandler, type ChannelHandlerContext, LengthFieldPrepender, LineBasedFrameDecoder, NetloopError } from '../index'
import { captureUnhandled, collect, dial, loopFor, netClient, serve, until } from './channel-helpers'

const upper: ChannelHandler = { channelRead: (ctx, m: Buffer) => ctx.fireChannelRead(Buffer.from(m.toString().toUpperCase())) }
const echo: ChannelHandler = { channelRead: (ctx, m) => ctx.writeAndFlush(m) }

test('names, get and context reflect the pipeline, duplicates and unknown bases are rejected', async (t) => {
  const loop = loopFor(t)
  let checked = false
  const { port } = await serve(t, loop, (ch) => {
    const p = ch.pipeline
    const framer = new LineBasedFrameDecoder(64)
    p.addLast('echo', echo).addFirst('framer', framer).addBefore('echo', 'upper', upper).addAfter('framer', 'mid', {})
    t.deepEqual(p.names(), ['framer', 'mid', 'upper', 'echo'])
    t.is(p.get('framer'), framer)
    t.is(p.get('echo'), echo)
    t.is(p.context(upper)?.name, 'upper')
    t.is(p.context('nothing'), undefined)
    t.is(t.throws(() => p.addLast('echo', {}))?.code, 'ERR_DUPLICATE_HANDLER_NAME')
    t.is(t.throws(() => p.addBefore('nothing', 'x', {}))?.code, 'ERR_NO_SUCH_HANDLER')
    t.is(t.throws(() => p.addLast('', {}))?.code, 'ERR_INVALID_ARG_TYPE')
    t.is(t.throws(() => p.addLast('y', null as never))?.code, 'ERR_INVALID_ARG_TYPE')
    t.is(t.throws(() => p.remove('nothing'))?.code, 'ERR_NO_SUCH_HANDLER')
    t.deepEqual(p.names(), ['framer', 'mid', 'upper', 'echo'])
    checked = true
  })
  const s = await netClient(t, port)
  const c = collect(s)
  s.end('abc\n')
  await c.ended
  t.true(checked)
  t.is(c.data().toString(), 'ABC')
})

test('handlers added, removed and replaced while traffic flows take effect for the next message', async (t) => {
  const loop = loopFor(t)
  const added: string[] = []
  const stage: ChannelHandler = {
    handlerAdded: () => void added.push('added'),
    handlerRemoved: () => void added.push('removed'),
    channelRead(ctx, m: Buffer) {
      const line = m.toString().replace(/\*/g, '').toLowerCase()
      const p = ctx.pipeline
      if (line === 'upper') p.addBefore('stage', 'upper', upper)
      else if (line === 'plain') p.remove('star')
      else if (line === 'star') p.replace('upper', 'star', { channelRead: (c, x: Buffer) => c.fireChannelRead(Buffer.from(`*${x}*`)) })
      else if (line === 'native') p.addFirst('framer2', new LineBasedFrameDecoder(10, false)) // keeps the delimiter for 'framer'
      ctx.writeAndFlush(`${m}\n`)
    },
  }
  const { port } = await serve(t, loop, (ch) => ch.pipeline.addLast('framer', new LineBasedFrameDecoder(1024)).addLast('stage', stage))
  const s = await netClient(t, port)
  const c = collect(s)
  const lines = ['a', 'upper', 'b', 'star', 'c', 'plain', 'd', 'native', 'e']
  for (const l of lines) {
    s.write(`${l}\n`)
    const before = c.data().toString().split('\n').length
    await until(() => c.data().toString().split('\n').length > before)
  }
  s.end()
  await c.ended
  t.deepEqual(c.data().toString().trim().split('\n'), ['a', 'upper', 'B', 'STAR', '*c*', '*plain*', 'd', 'native', 'e'])
  t.deepEqual(added, ['added', 'removed'])
})

test('a handler that throws sends the error to the next exceptionCaught, and the channel stays open', async (t) => {
  const loop = loopFor(t)
  const caught: Array<[string, unknown]> = []
  const { port } = await serve(t, loop, (ch) =>
    ch.pipeline
      .addLast('framer', new LineBasedFrameDecoder(64))
      .addLast('boom', {
        channelRead(_ctx, m: Buffer) {
          if (m.toString() === 'boom') throw new Error('boom')
          _ctx.fireChannelRead(m)
        },
        exceptionCaught: () => void caught.push(['boom itself', null]),
      })
      .addLast('catcher', {
        exceptionCaught: (ctx, e) => {
          caught.push(['catcher', e.message])
          ctx.writeAndFlush('caught\n')
        },
        channelRead: (ctx, m) => ctx.writeAndFlush(`${m}\n`),
      }),
  )
  const s = await netClient(t, port)
  const c = collect(s)
  s.write('boom\nafter\n')
  await until(() => c.data().toString() === 'caught\nafter\n')
  s.end()
  await c.ended
  t.deepEqual(caught, [['catcher', 'boom']])
})

test.serial('an exception nobody handles is reported with the channel id and the channel stays as it is', async (t) => {
  const unhandled = captureUnhandled(t)
  const loop = loopFor(t)
  const { port, children } = await serve(t, loop, (ch) =>
    ch.pipeline.addLast('framer', new LineBasedFrameDecoder(4)).addLast('echo', { channelRead: (ctx, m) => ctx.writeAndFlush(`${m}\n`) }),
  )
  const s = await netClient(t, port)
  const c = collect(s)
  s.write('too long a line\nok\n')
  await until(() => unhandled.length > 0 && c.data().toString().includes('ok'))
  const { error, channel } = unhandled[0]
  t.is((error as NetloopError).code, 'ERR_TOO_LONG_FRAME')
  t.is(channel.id, children[0].id)
  t.true(children[0].isOpen)
  s.end()
  await c.ended
})

test.serial('an exception thrown or rejected in any handler method never crashes the process', async (t) => {
  const unhandled = captureUnhandled(t)
  const loop = loopFor(t)
  const methods = ['channelRegistered', 'channelActive', 'channelRead', 'channelReadComplete', 'channelInactive', 'channelUnregistered', 'userEventTriggered', 'channelWritabilityChanged', 'exceptionCaught', 'write', 'flush', 'read', 'close']
  const sync: Record<string, unknown> = {}
  const rejecting: Record<string, unknown> = {}
  for (const m of methods) {
    sync[m] = () => {
      throw new Error(m)
    }
    rejecting[m] = async () => Promise.reject(new Error(`async ${m}`))
  }
  const cannotBeAdded: ChannelHandler = {
    handlerAdded() {
      throw new Error('handlerAdded')
    },
  }
  const sets: ChannelHandler[][] = [[sync as ChannelHandler], [rejecting as ChannelHandler], [cannotBeAdded]]
  let n = 0
  const { port } = await serve(t, loop, (ch) => {
    for (const [i, h] of sets[n++ % sets.length].entries()) ch.pipeline.addLast(`bad${i}`, h)
    ch.pipeline.addLast('writer', { channelRead: (ctx: ChannelHandlerContext) => ctx.writeAndFlush('x') })
  })
  for (let i = 0; i < sets.length; i++) {
    const s = await netClient(t, port)
    const c = collect(s)
    s.write('data')
    await new Promise((r) => setTimeout(r, 30))
    // Reset, so that the close does not wait for anything.
    s.resetAndDestroy()
    await c.ended
  }
  const messages = () => new Set(unhandled.map((u) => (u.error as Error).message))
  await until(() => messages().has('async channelRegistered') && messages().has('handlerAdded'))
  for (const m of ['channelRegistered', 'async channelRegistered', 'handlerAdded']) t.true(messages().has(m), m)
  t.is(loop.state, 'started')
})

test('handlers added without a name get generated names; removeIfExists tolerates absent ones', async (t) => {
  const loop = loopFor(t)
  let names: string[] = []
  const h = { channelRead: (ctx: ChannelHandlerContext, m: unknown) => ctx.fireChannelRead(m) }
  let removed: unknown[] = []
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast(new LineBasedFrameDecoder(10)).addLast(h).addFirst({}).addLast(new LineBasedFrameDecoder(10))
    names = ch.pipeline.names()
    removed = [ch.pipeline.removeIfExists('nope'), ch.pipeline.removeIfExists(h)]
  })
  const s = await netClient(t, port)
  await until(() => names.length > 0)
  t.deepEqual(names, ['handler#2', 'LineBasedFrameDecoder#0', 'handler#1', 'LineBasedFrameDecoder#3'])
  t.deepEqual(removed, [undefined, h])
  s.destroy()
})

test("a handler's methods are read when it is added: one assigned later counts once the handler is added again", async (t) => {
  const loop = loopFor(t)
  const handler: ChannelHandler = {
    channelRead(ctx, m: Buffer) {
      const line = m.toString()
      if (line === 'arm') {
        // Too late for this context: the pipeline read the handler's methods when it was added.
        handler.channelReadComplete = (c) => void c.writeAndFlush('complete\n')
      } else if (line === 'readd') {
        ctx.pipeline.replace('h', 'h', handler)
      }
      ctx.writeAndFlush(`${line}\n`)
    },
  }
  const { port } = await serve(t, loop, (ch) => ch.pipeline.addLast('framer', new LineBasedFrameDecoder(64)).addLast('h', handler))
  const s = await netClient(t, port)
  const c = collect(s)
  const send = async (line: string, expect: string) => {
    s.write(`${line}\n`)
    await until(() => c.data().toString().includes(expect))
  }
  await send('arm', 'arm\n')
  await send('one', 'one\n')
  t.false(c.data().toString().includes('complete'), 'the method assigned after add is not called')
  await send('readd', 'readd\n')
  await send('two', 'two\n')
  await until(() => c.data().toString().includes('two\ncomplete\n'))
  t.regex(c.data().toString(), /two\ncomplete\n/, 'the handler added again calls the new method')
})

test('addBefore and addAfter without a name generate one; get, remove and removeIfExists find handlers by class', async (t) => {
  const loop = loopFor(t)
  class Upper implements ChannelHandler {
    channelRead(ctx: ChannelHandlerContext, m: Buffer) {
      ctx.fireChannelRead(Buffer.from(m.toString().toUpperCase()))
    }
  }
  class Absent {}
  let result: Record<string, unknown> = {}
  const { port } = await serve(t, loop, (ch) => {
    const p = ch.pipeline
    const upper = new Upper()
    p.addLast('echo', echo).addBefore('echo', upper).addAfter('echo', {}).addBefore('Upper#0', new LineBasedFrameDecoder(64))
    result = {
      names: p.names(),
      get: p.get(Upper) === upper,
      native: p.get(LineBasedFrameDecoder) instanceof LineBasedFrameDecoder,
      context: p.context(Upper)?.name,
      absent: p.removeIfExists(Absent),
      missing: (() => {
        try {
          p.remove(Absent)
        } catch (e) {
          return (e as NetloopError).code
        }
      })(),
      removed: p.removeIfExists(Upper) === upper,
      after: p.names(),
      removedNative: p.remove(LineBasedFrameDecoder) instanceof LineBasedFrameDecoder,
    }
  })
  const s = await netClient(t, port)
  const c = collect(s)
  s.end('abc')
  await c.ended
  t.deepEqual(result, {
    names: ['LineBasedFrameDecoder#2', 'Upper#0', 'echo', 'handler#1'],
    get: true,
    native: true,
    context: 'Upper#0',
    absent: undefined,
    missing: 'ERR_NO_SUCH_HANDLER',
    removed: true,
    after: ['LineBasedFrameDecoder#2', 'echo', 'handler#1'],
    removedNative: true,
  })
  t.is(c.data().toString(), 'abc', 'neither the removed Upper nor the removed framer saw the bytes')
})

test('a ChannelPromise knows its channel, and a removed listener is not called', async (t) => {
  const loop = loopFor(t)
  const { port } = await serve(t, loop, () => undefined)
  const inHandler: boolean[] = []
  const ch = await dial(loop, port, (c) =>
    c.pipeline.addLast('out', {
      write(ctx, msg, promise) {
        inHandler.push(promise.channel === c)
        ctx.write(msg, promise)
      },
      close(ctx, promise) {
        inHandler.push(promise.channel === c)
        ctx.close(promise)
      },
    }),
  )
  const calls: string[] = []
  const p = ch.newPromise()
  const removed = () => calls.push('removed')
  p.addListener(removed).addListener((e) => calls.push(`kept ${e}`))
  t.true(p.removeListener(removed))
  t.false(p.removeListener(removed))
  t.is(p.channel, ch)
  t.is(ch.voidPromise().channel, ch)
  await ch.writeAndFlush('x', p)
  ch.writeAndFlush('y') // the void promise
  await ch.close()
  t.deepEqual(calls, ['kept null'])
  t.deepEqual(inHandler, [true, true, true])
})

test('a pipeline of native handlers only is kept compact after its initializer: names, get and context still work, and a JS handler added later sees traffic', async (t) => {
  const loop = loopFor(t)
  const framer = new LineBasedFrameDecoder(64)
  const prepender = new LengthFieldPrepender(2)
  let channel: Channel | undefined
  const { port } = await serve(t, loop, (ch) => {
    channel = ch
    ch.pipeline.addLast('framer', framer).addLast('prepender', prepender)
  })
  const s = await netClient(t, port)
  await until(() => channel !== undefined)
  const p = channel!.pipeline
  t.deepEqual(p.names(), ['framer', 'prepender'])
  t.is(p.get('framer'), framer)
  t.is(p.get(LengthFieldPrepender), prepender)
  t.is(p.get(prepender as never), prepender)
  t.is(p.get('nothing'), undefined)
  const ctx = p.context('prepender')!
  t.is(ctx.nativeHandler, prepender)
  t.is(p.context('prepender'), ctx, 'the contexts made again stay the same objects')
  t.is(p.context(framer)?.name, 'framer')
  p.addLast('echo', echo)
  t.deepEqual(p.names(), ['framer', 'prepender', 'echo'])
  const c = collect(s)
  s.end('hi\n')
  await c.ended
  t.deepEqual(c.data(), Buffer.from([0, 2, 0x68, 0x69]))
})

test('a pipeline with a JS handler is kept compact too: its JS context stays the same object through traffic, look-ups and removal', async (t) => {
  const loop = loopFor(t)
  const framer = new LineBasedFrameDecoder(64)
  const seen: ChannelHandlerContext[] = []
  const events: string[] = []
  const app: ChannelHandler = {
    handlerAdded: (ctx) => void seen.push(ctx),
    channelRead: (ctx, m) => {
      seen.push(ctx)
      ctx.write(Buffer.concat([Buffer.from('>'), m as Buffer]))
    },
    channelReadComplete: (ctx) => void ctx.flush(),
    handlerRemoved: (ctx) => void (seen.push(ctx), events.push('removed')),
  }
  let channel: Channel | undefined
  const { port } = await serve(t, loop, (ch) => {
    channel = ch
    ch.pipeline.addLast('framer', framer).addLast('prepender', new LengthFieldPrepender(2)).addLast('app', app).addLast('tail-js', { channelRead: (ctx, m) => void events.push(`tail-js ${String(m)}`) })
  })
  const s = await netClient(t, port)
  await until(() => channel !== undefined)
  const p = channel!.pipeline
  t.deepEqual(p.names(), ['framer', 'prepender', 'app', 'tail-js'])
  t.is(p.get('app'), app)
  t.is(p.get('framer'), framer)
  const c = collect(s)
  s.write('one\n')
  await until(() => c.data().length >= 6)
  t.deepEqual(c.data().subarray(0, 6), Buffer.from([0, 4, 0x3e, 0x6f, 0x6e, 0x65]), 'outbound from the JS handler crosses to the native prepender in front of it')
  t.is(p.context('app'), seen[0], 'the context JS was given is the one the pipeline holds')
  s.write('two\n')
  await until(() => c.data().length >= 12)
  t.true(seen.every((x) => x === seen[0]), 'one context for every call')
  p.remove('app')
  t.deepEqual(events, ['removed'])
  t.is(seen.at(-1), seen[0])
  t.true(seen[0].isRemoved)
  s.write('three\n')
  await until(() => events.includes('tail-js three'))
  t.deepEqual(p.names(), ['framer', 'prepender', 'tail-js'])
  s.destroy()
})

test('a pipeline whose initializer took a context of a native handler is not compacted', async (t) => {
  const loop = loopFor(t)
  let kept: ChannelHandlerContext | undefined
  let channel: Channel | undefined
  await netClient(t, (await serve(t, loop, (ch) => {
    channel = ch
    kept = ch.pipeline.addLast('framer', new LineBasedFrameDecoder(64)).context('framer')
  })).port)
  await until(() => channel !== undefined)
  t.is(channel!.pipeline.context('framer'), kept)
  channel!.pipeline.remove('framer')
  t.true(kept!.isRemoved)
})
