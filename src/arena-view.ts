/**
 * Buffers over a delivery's arena (src/hub-delivery.ts, src/resp.ts): the reads a handler gets
 * are views of the bytes the native side wrote there, not copies.
 *
 * The views are real Buffers (`Buffer.prototype`, so `deepStrictEqual` with `Buffer.from(...)`
 * holds), made with `Buffer.from(arrayBuffer, offset, length)`: about 10 ns per view dearer
 * than a bare typed-array construction whose chain merely holds `Buffer.prototype` (measured:
 * 30 against 20 ns), but cheaper than `arena.subarray()` (53 ns: it looks up the species
 * constructor and reads `arena.buffer` again for every view). Node's own `FastBuffer` is not
 * exported.
 */
// Imported, not the global: in Node the global `Buffer` is a getter, called on each use (a
// global load IC and the getter were ~4 % of the RESP example's instructions per SET).
import { Buffer } from 'node:buffer'

/** The arena the views were last made of, its ArrayBuffer and offset (read once per arena). */
let viewArena: Buffer | undefined
let viewBuffer = new ArrayBuffer(0)
let viewBase = 0

/** A view of `len` bytes at `at` of the last arena given to `viewsOf` (no copy). */
export function view(at: number, len: number): Buffer {
  return Buffer.from(viewBuffer, viewBase + at, len)
}

/** The view maker for `arena`: `view(at, len)` is `arena.subarray(at, at + len)`, cheaper. */
export function viewsOf(arena: Buffer): (at: number, len: number) => Buffer {
  if (arena !== viewArena) {
    viewArena = arena
    viewBuffer = arena.buffer as ArrayBuffer
    viewBase = arena.byteOffset
  }
  return view
}
