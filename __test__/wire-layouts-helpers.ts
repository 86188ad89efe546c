/**
 * What the layout round-trip specs share (`wire-layouts-*.spec.ts`, decision 0018): one check
 * per byte layout that crosses the JS boundary. The native writers encode fixed samples
 * (`wireSamples`, crates/wire/src/samples.rs) that the TS readers the hub uses must read back
 * field by field, and the TS writers' layouts must be read by the native readers the ops use
 * (`wireEcho`) into the values written. The values are stated in the specs once; a field
 * added, moved or resized on one side only fails a test.
 */
import { mkdtempSync, openSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import * as native from '../native'

export const MAX_ID = 2 ** 53 - 1
export const latin1 = (b: Buffer) => b.toString('latin1')
export const hex = (s: string | Buffer) => (typeof s === 'string' ? Buffer.from(s, 'latin1') : s).toString('hex')
/** A 70,000-byte body (larger than a lent one's threshold, not a multiple of anything). */
export const body = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251))
/** The native writers' samples. */
export const samples = native.wireSamples()
/** What the native reader of `kind` read from `layout`, as JSON values (bytes as hex). */
export const echo = (kind: string, layout: Buffer): unknown => JSON.parse(native.wireEcho(kind, layout))

/** A descriptor of a fresh 100-byte file. */
export function openFile(): number {
  const path = join(mkdtempSync(join(tmpdir(), 'netloop-wire-')), 'f')
  writeFileSync(path, Buffer.alloc(100, 1))
  return openSync(path, 'r')
}
