// AbortSignal support (src/abort.ts): the pieces Bootstrap.connect / ServerBootstrap.bind use for
// `{ signal }`. An aborted operation rejects with an AbortError whose cause is the signal's
// reason and undoes what it started; an already-aborted signal rejects at once.
import test from 'ava'
import { getEventListeners } from 'node:events'
import { AbortError, NetloopError } from '../index'
import { signalOf, whenAborted } from '../src/abort'

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
