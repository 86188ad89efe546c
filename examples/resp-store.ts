// The keyspace of the RESP example (resp-handlers.ts runs the commands against it): keys and
// values are bytes, with optional expiry. benches/node/servers/net-resp.mjs holds a copy (types
// stripped) so that the node:net port runs the same store.
// Buffer imported, not the global: in Node the global `Buffer` is a getter, called on each use.
import { Buffer } from 'node:buffer'

/** A key and its value. */
export interface Entry {
  /** The key's bytes (a copy: never a view of a read). */
  readonly key: Buffer
  value: Buffer
  /** ms since the epoch; 0 = never. */
  expiresAt: number
  /** The next entry whose key has the same hash. */
  next: Entry | undefined
  /** False once deleted (the expiry sweep may still hold it). */
  live: boolean
  /** `value` went into a reply (`Store.lend`): the next `set` copies instead of overwriting it. */
  lent: boolean
}

/**
 * A copy of `b` in memory of its own, sized to it. Not `Buffer.from(b)`: below 4 KiB that
 * carves the copy out of Node's shared 8 KiB pool slabs, and a slab stays allocated while any
 * copy in it lives, so a keyspace whose values are overwritten at random pins slab after slab
 * (one live value can hold 8 KiB): the RSS kept rising long after the key count stopped.
 * Up to 64 bytes the copy is a typed array V8 keeps on its heap (no backing store of its own);
 * above, an ArrayBuffer of exactly its size.
 */
export function ownCopy(b: Uint8Array): Buffer {
  const n = b.length
  const copy = n <= 64 ? Buffer.alloc(n) : Buffer.allocUnsafeSlow(n)
  copy.set(b)
  return copy
}

/** `to.set(from)` for two arrays of one length; a short one byte by byte (cheaper than the call). */
function overwrite(to: Uint8Array, from: Uint8Array): void {
  const n = from.length
  if (n > 32) to.set(from)
  else for (let i = 0; i < n; i++) to[i] = from[i]
}

/** FNV-1a over a key's bytes, cut to 30 bits: a small integer, which a Map hashes cheaply. */
function keyHash(b: Uint8Array): number {
  let h = 0x811c9dc5
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i], 0x01000193)
  return h & 0x3fffffff
}

/** Byte equality, in JS: cheaper than a call into `Buffer.equals` for a key's few bytes. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  const n = a.length
  if (n !== b.length) return false
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * The keyspace: a hash table in memory, with no eviction and no memory limit (Redis's
 * `maxmemory` is not implemented). The process grows with the number of distinct keys and
 * their values, as a Redis server does: `redis-benchmark -r 1000000` (random keys out of a
 * million) keeps adding keys for minutes, and the RSS with them. With a fixed keyspace
 * (`-r 1000`) the RSS levels off (__test__/examples-resp-soak.spec.ts, about a million SET/GET
 * over 1000 keys, and 2 million SET/INCR/MSET over 300,000 keys): nothing else is kept per
 * command or per connection.
 *
 * Memory: each key costs its name's and value's bytes plus about 500 bytes (the entry, its Map
 * slot, two Buffers; Node 20, 100,000 keys). Keys and values are copied into memory of their
 * own (`ownCopy`), never into Node's shared pool slabs, and a value overwritten by one of the
 * same length is overwritten in place unless a reply holds it (`lend`), so writes on a full
 * keyspace allocate nothing and the RSS stays flat.
 *
 * Keys are bytes, as in Redis: a Map from the key's hash to a chain of entries, each holding
 * its key's bytes. A key never becomes a JS string (making one from a Buffer calls into C++,
 * and the Map would hash its characters again).
 */
export class Store {
  readonly buckets = new Map<number, Entry>()
  size = 0
  /** Entries with an expiry, for the periodic sweep. */
  readonly volatile = new Set<Entry>()

  /** The live entry of `key`, without the expiry check. */
  #find(key: Uint8Array): Entry | undefined {
    let e = this.buckets.get(keyHash(key))
    while (e !== undefined && !sameBytes(e.key, key)) e = e.next
    return e
  }

  get(key: Uint8Array): Entry | undefined {
    const e = this.#find(key)
    if (e !== undefined && e.expiresAt !== 0 && e.expiresAt <= Date.now()) {
      this.#remove(e)
      return undefined
    }
    return e
  }

  /**
   * `e`'s value for a reply, which may hold it until it is written: the next `set` of the key
   * then stores a new copy instead of overwriting this one in place.
   */
  lend(e: Entry | undefined): Buffer | null {
    if (e === undefined) return null
    e.lent = true
    return e.value
  }

  /**
   * `live`: the key's entry as `get` just returned it (updated in place: no lookup). A value
   * of the same length as the one it replaces is copied over it (no allocation, no garbage),
   * unless that one was lent to a reply.
   */
  set(key: Uint8Array, value: Buffer, expiresAt: number, live?: Entry): void {
    let e = live ?? this.#find(key)
    if (e !== undefined) {
      // Copy: `value` is a view of the read buffer, which would stay alive with it.
      if (!e.lent && e.value.length === value.length) overwrite(e.value, value)
      else {
        e.value = ownCopy(value)
        e.lent = false
      }
      e.expiresAt = expiresAt
    } else {
      const h = keyHash(key)
      e = { key: ownCopy(key), value: ownCopy(value), expiresAt, next: this.buckets.get(h), live: true, lent: false }
      this.buckets.set(h, e)
      this.size++
    }
    if (expiresAt !== 0) this.volatile.add(e)
    else if (this.volatile.size !== 0) this.volatile.delete(e)
  }

  delete(key: Uint8Array): boolean {
    const e = this.get(key)
    if (e === undefined) return false
    this.#remove(e)
    return true
  }

  #remove(e: Entry): void {
    const h = keyHash(e.key)
    const first = this.buckets.get(h)
    if (first === e) {
      if (e.next === undefined) this.buckets.delete(h)
      else this.buckets.set(h, e.next)
    } else {
      let p = first
      while (p !== undefined && p.next !== e) p = p.next
      if (p !== undefined) p.next = e.next
    }
    e.live = false
    this.volatile.delete(e)
    this.size--
  }

  clear(): void {
    this.buckets.clear()
    this.volatile.clear()
    this.size = 0
  }

  /** Drops expired keys (run periodically on the loop, as Redis' active expiry). */
  sweep(): void {
    const now = Date.now()
    for (const e of this.volatile) {
      if (!e.live) this.volatile.delete(e)
      else if (e.expiresAt !== 0 && e.expiresAt <= now) this.#remove(e)
    }
  }
}
