// The views a delivery lends JS over its arena (src/arena-view.ts): real Buffers over the
// arena's memory, equal to the Buffers `Buffer.from` makes.
import { deepStrictEqual } from 'node:assert'

import test from 'ava'

import { viewsOf } from '../src/arena-view'

test('a view is a Buffer over the arena’s bytes, not a copy, and deep-equal to Buffer.from’s', (t) => {
  const backing = Buffer.alloc(64)
  const arena = backing.subarray(8, 40) // an arena that starts inside its ArrayBuffer
  arena.write('hello world', 4, 'latin1')
  const v = viewsOf(arena)(4, 5)
  t.is(Object.getPrototypeOf(v), Buffer.prototype)
  t.true(Buffer.isBuffer(v))
  t.is(v.toString('latin1'), 'hello')
  t.notThrows(() => deepStrictEqual(v, Buffer.from('hello', 'latin1')))
  arena[4] = 0x4a // 'J'
  t.is(v.toString('latin1'), 'Jello', 'the view shares the arena’s memory')
  t.is(v.subarray(1).toString('latin1'), 'ello')
  t.true(Buffer.isBuffer(v.subarray(1)))
})

test('views follow the arena they were last made for', (t) => {
  const a = Buffer.from('aaaa')
  const b = Buffer.from('bbbb')
  t.is(viewsOf(a)(0, 2).toString(), 'aa')
  t.is(viewsOf(b)(1, 2).toString(), 'bb')
  t.is(viewsOf(a)(2, 2).toString(), 'aa')
})

test('a view past the end of the arena’s memory throws a RangeError', (t) => {
  const arena = Buffer.alloc(16)
  t.throws(() => viewsOf(arena)(arena.buffer.byteLength, 4), { instanceOf: RangeError })
})
