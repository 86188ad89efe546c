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
/** A view of `len` bytes at `at` of the last arena given to `viewsOf` (no copy). */
export declare function view(at: number, len: number): Buffer;
/** The view maker for `arena`: `view(at, len)` is `arena.subarray(at, at + len)`, cheaper. */
export declare function viewsOf(arena: Buffer): (at: number, len: number) => Buffer;
