/**
 * How the hub talks to the native channel hub: the sizes of the shared buffers, and the
 * load-time check that the addon speaks this build's protocol. The codes themselves are the
 * boundary protocol's (crates/wire/src/protocol/, copied into src/protocol.ts and src/protocol-*.ts).
 */
import { native } from './binding'
import { PROTOCOL } from './protocol'

let checked = false

/** Throws if the native addon speaks another version of the boundary protocol. */
export function checkWire(): void {
  if (checked) return
  const addon = native as unknown as Record<string, Record<string, unknown> | undefined>
  const diff: string[] = []
  for (const [name, members] of Object.entries(PROTOCOL)) {
    const theirs = addon[name]
    for (const [k, v] of Object.entries(members)) if (theirs?.[k] !== v) diff.push(`${name}.${k}`)
  }
  if (diff.length > 0) {
    throw new Error(`netloop: the native addon does not match this TypeScript build (protocol constants differ: ${diff.join(', ')})`)
  }
  checked = true
}

/** Event records per delivery call, op records per buffer, write-arena bytes. */
export const EVENT_CAPACITY = 4096
export const OP_CAPACITY = 4096
export const ARENA_BYTES = 1 << 20
