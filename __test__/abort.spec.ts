// AbortSignal support: Bootstrap.connect / ServerBootstrap.bind with `{ signal }` and the pieces
// of src/abort.ts. An aborted operation rejects with an AbortError whose cause is the signal's
// reason and undoes what it started; an already-aborted signal rejects at once.
import test from 'ava'
import dc from 'node:diagnostics_channel'
import { getEventListeners, once } from 'node:events'
import * as net from 'node:net'
import { AbortError, Bootstrap, type Channel, NetloopError, ServerBootstrap } from '../index'
import { signalOf, whenAborted } from '../src/abort'
import { until, withLoop } from './helpers'

test('signalOf reads options.signal and rejects what is not an AbortSignal', (t) => {
  const c = new AbortController()
  t.is(signalOf({ signal: c.signal }), c.signal)
  t.is(signalOf(undefined), undefined)
  t.is(signalOf({}), undefined)
  t.throws(() => signalOf({ signal: 'stop' }), { instanceOf: NetloopError, code: 'ERR_INVALID_ARG_TYPE', message: /"options\.signal" argument must be of type AbortSignal/ })
  t.throws(() => signalOf(42), { code: 'ERR_INVALID_ARG_TYPE' })
})

test('an already-aborted signal rejects at once with its reason as cause and undoes the operation', async (t) => {
  const c = new AbortController()
  const reason = new Error('user gave up')
  c.abort(reason)
  let undone = 0
  const op = new Promise<number>(() => undefined)
  const err = await t.throwsAsync(whenAborted(c.signal, op, () => undone++))
  t.true(err instanceof AbortError)
  t.is(err!.name, 'AbortError')
  t.is((err as AbortError).code, 'ABORT_ERR')
  t.is(err!.cause, reason)
  t.is(undone, 1)
})

test('aborting a pending operation rejects it, runs the undo once and drops the listener', async (t) => {
  const c = new AbortController()
  let fail!: (e: Error) => void
  const op = new Promise<number>((_resolve, reject) => (fail = reject))
  let undone = 0
  const result = whenAborted(c.signal, op, () => undone++)
  t.is(getEventListeners(c.signal, 'abort').length, 1)
  c.abort() // reason: a DOMException AbortError, as node's
  const err = await t.throwsAsync(result)
  t.true(err instanceof AbortError)
  t.is((err!.cause as Error).name, 'AbortError')
  t.is(undone, 1)
  t.is(getEventListeners(c.signal, 'abort').length, 0)
  // The operation failing afterwards (the undo closed it) is no unhandled rejection.
  fail(new Error('closed by the abort'))
  await new Promise((r) => setImmediate(r))
})

test('an operation that settles first keeps its result and leaves no listener on the signal', async (t) => {
  const c = new AbortController()
  let undone = 0
  t.is(await whenAborted(c.signal, Promise.resolve(7), () => undone++), 7)
  await t.throwsAsync(whenAborted(c.signal, Promise.reject(new Error('refused')), () => undone++), { message: 'refused' })
  t.is(getEventListeners(c.signal, 'abort').length, 0)
  c.abort()
  t.is(undone, 0)
})

// ---- Bootstrap.connect / ServerBootstrap.bind with { signal } ----

/** A netloop server that never accepts (server autoRead off) with its backlog full: a connect to it stays pending. */
async function unansweredPort(t: Parameters<typeof withLoop>[0]): Promise<number> {
  const loop = withLoop(t)
  const server = await new ServerBootstrap().group(loop).option('autoRead', false).option('soBacklog', 1).childHandler(() => undefined).bind(0, '127.0.0.1')
  t.teardown(() => server.close())
  const port = server.localAddress!.port
  // Two connections fill the accept queue of a backlog of 1; later SYNs are dropped.
  for (let i = 0; i < 2; i++) {
    const s = net.connect(port, '127.0.0.1')
    s.on('error', () => undefined)
    t.teardown(() => s.destroy())
    await once(s, 'connect')
  }
  return port
}

/** The client channels made while `fn` runs (from netloop:client.socket). */
function madeChannels(t: { teardown(fn: () => unknown): void }): Channel[] {
  const made: Channel[] = []
  const grab = (m: unknown) => void made.push((m as { channel: Channel }).channel)
  dc.subscribe('netloop:client.socket', grab)
  t.teardown(() => dc.unsubscribe('netloop:client.socket', grab))
  return made
}

test.serial('connect({ signal }): an already-aborted signal rejects at once and makes no channel', async (t) => {
  const made = madeChannels(t)
  const loop = withLoop(t)
  const reason = new Error('not any more')
  const err = await t.throwsAsync(new Bootstrap().group(loop).handler(() => undefined).connect(9, '127.0.0.1', { signal: AbortSignal.abort(reason) }))
  t.true(err instanceof AbortError)
  t.is(err!.cause, reason)
  t.is(made.length, 0)
  await t.throwsAsync(new Bootstrap().group(loop).handler(() => undefined).connect(9, '127.0.0.1', { signal: 'soon' as never }), { code: 'ERR_INVALID_ARG_TYPE' })
})

test.serial('connect({ signal }): an abort while connecting closes the half-open channel and rejects with AbortError', async (t) => {
  const port = await unansweredPort(t)
  const made = madeChannels(t)
  const loop = withLoop(t)
  const c = new AbortController()
  const pending = new Bootstrap().group(loop).handler(() => undefined).connect(port, '127.0.0.1', { signal: c.signal })
  await until(() => made.length === 1)
  t.false(made[0].isActive, 'still connecting')
  c.abort(new Error('the user pressed cancel'))
  const err = await t.throwsAsync(pending)
  t.true(err instanceof AbortError)
  t.is((err as AbortError).code, 'ABORT_ERR')
  t.is((err!.cause as Error).message, 'the user pressed cancel')
  await made[0].closeFuture
  t.false(made[0].isOpen)
  t.is(getEventListeners(c.signal, 'abort').length, 0)
})

test.serial('connect({ signal }): as with node:net, an abort after the connect closes the channel', async (t) => {
  const server = net.createServer((s) => s.on('error', () => undefined))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  const loop = withLoop(t)
  const c = new AbortController()
  const ch = await new Bootstrap().group(loop).handler(() => undefined).connect((server.address() as net.AddressInfo).port, '127.0.0.1', { signal: c.signal })
  t.true(ch.isActive)
  t.is(getEventListeners(c.signal, 'abort').length, 1)
  c.abort()
  await ch.closeFuture
  t.false(ch.isOpen)
  t.is(getEventListeners(c.signal, 'abort').length, 0)
})

test.serial('bind({ signal }): an already-aborted signal rejects at once; an abort after listening closes the server', async (t) => {
  const loop = withLoop(t)
  const sb = () => new ServerBootstrap().group(loop).childHandler(() => undefined)
  const err = await t.throwsAsync(sb().bind(0, '127.0.0.1', { signal: AbortSignal.abort('no') }))
  t.true(err instanceof AbortError)
  t.is(err!.cause, 'no')
  const c = new AbortController()
  const server = await sb().bind(0, '127.0.0.1', { signal: c.signal })
  const port = server.localAddress!.port
  t.true(server.isOpen)
  c.abort()
  await server.closeFuture
  t.false(server.isOpen)
  const refused = await new Promise<string | undefined>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(undefined))
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code))
  })
  t.is(refused, 'ECONNREFUSED')
  t.is(getEventListeners(c.signal, 'abort').length, 0)
})
