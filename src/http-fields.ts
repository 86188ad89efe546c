/**
 * What the HTTP messages of both codecs share: header fields read lazily from a delivery's
 * arena (`HttpRequest`, `HttpClientResponse`), and the header list and body of a message JS
 * writes (`HttpResponse`, `HttpClientRequest`).
 */
import { Buffer } from 'node:buffer' // the module's binding, not the global's getter on every use (arena-view.ts)
import { invalidArgType } from './errors'

/** @internal Node's fast latin1 decoding (`buffer.latin1Slice`), typed. */
export const latin1 = (b: Buffer, start: number, end: number): string => (b as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(start, end)

/** @internal An empty body, shared. */
export const EMPTY = Buffer.alloc(0)

/** Header fields as a constructor takes them: an object (arrays for repeated fields) or `[name, value]` pairs in order. */
export type HeaderInit = Record<string, string | number | string[]> | Array<[string, string]>

/** @internal `headers` as `[name, value]` pairs in order. */
export function headerList(headers: HeaderInit): Array<[string, string]> {
  if (Array.isArray(headers)) return headers
  if (headers === null || typeof headers !== 'object') throw invalidArgType('headers', 'object or array of [name, value] pairs', headers)
  return Object.entries(headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x] as [string, string]) : [[k, String(v)] as [string, string]]))
}

/** @internal `[name, value]` pairs as node:http's `headers`: lower-case names, duplicates joined with `, `, `set-cookie` an array. */
export function fieldRecord(pairs: Array<[string, string]>): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = Object.create(null)
  for (const [name, v] of pairs) {
    const k = name.toLowerCase()
    const old = h[k]
    if (k === 'set-cookie') h[k] = old === undefined ? [v] : [...(old as string[]), v]
    else h[k] = old === undefined ? v : `${old}, ${v}`
  }
  return h
}

/** @internal `body` as a Buffer (a view of a Uint8Array, UTF-8 bytes of a string). */
export function bodyBuffer(body: string | Uint8Array): Buffer {
  if (typeof body === 'string') return Buffer.from(body)
  if (!(body instanceof Uint8Array)) throw invalidArgType('body', 'string, Buffer or Uint8Array', body)
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
}

/**
 * @internal The fields `n:u32 (name:bytes value:bytes)*n` at `at` of a delivery's arena
 * (crates/wire/src/http_wire.rs): offsets found on first use, strings made when read.
 */
export class HttpFields {
  #arena: Buffer
  #at: number
  /** Name and value offsets of every field (start, end each). */
  #spans: number[] | undefined
  #end = -1
  #record: Record<string, string | string[]> | undefined

  constructor(arena: Buffer, at: number) {
    this.#arena = arena
    this.#at = at
  }

  #offsets(): number[] {
    if (this.#spans) return this.#spans
    const arena = this.#arena
    let p = this.#at
    const n = arena.readUInt32LE(p)
    p += 4
    const spans = new Array<number>(n * 4)
    for (let i = 0; i < 2 * n; i++) {
      const len = arena.readUInt32LE(p)
      spans[2 * i] = p + 4
      spans[2 * i + 1] = p + 4 + len
      p += 4 + len
    }
    this.#spans = spans
    this.#end = p
    return spans
  }

  /** Where the fields end in the arena (what follows them starts there). */
  end(): number {
    this.#offsets()
    return this.#end
  }

  /** The value of field `name` (case-insensitive), duplicates joined with `, `. */
  get(name: string): string | undefined {
    const want = name.toLowerCase()
    let out: string | undefined
    const s = this.#offsets()
    for (let i = 0; i < s.length; i += 4) {
      if (s[i + 1] - s[i] !== want.length) continue
      if (latin1(this.#arena, s[i], s[i + 1]).toLowerCase() !== want) continue
      const v = latin1(this.#arena, s[i + 2], s[i + 3])
      out = out === undefined ? v : `${out}, ${v}`
    }
    return out
  }

  /** As node:http's `headers`: lower-case names, duplicates joined with `, `, `set-cookie` an array. */
  record(): Record<string, string | string[]> {
    this.#record ??= fieldRecord(this.#pairs())
    return this.#record
  }

  /** The fields as read, `[name, value]` in wire order. */
  #pairs(): Array<[string, string]> {
    const s = this.#offsets()
    const pairs: Array<[string, string]> = []
    for (let i = 0; i < s.length; i += 4) pairs.push([latin1(this.#arena, s[i], s[i + 1]), latin1(this.#arena, s[i + 2], s[i + 3])])
    return pairs
  }

  /** Where the fields start in the arena. */
  start(): number {
    return this.#at
  }

  /**
   * The fields as the object `record()` gave holds them now, if a handler changed it (set,
   * replaced or deleted a field, or changed a `set-cookie` array): `[name, value]` pairs, an
   * array value as one field per element, fields whose value is `undefined` or `null` left
   * out. Undefined when the object was never made or still says what was read.
   */
  changed(): Array<[string, string]> | undefined {
    const now = this.#record
    if (!now) return undefined
    const was = fieldRecord(this.#pairs())
    const keys = Object.keys(now)
    let same = keys.length === Object.keys(was).length
    for (let i = 0; same && i < keys.length; i++) same = sameValue(now[keys[i]], was[keys[i]])
    if (same) return undefined
    const pairs: Array<[string, string]> = []
    for (const k of keys) {
      const v: unknown = now[k]
      if (v === undefined || v === null) continue
      if (Array.isArray(v)) for (const x of v) pairs.push([k, String(x)])
      else pairs.push([k, String(v)])
    }
    return pairs
  }

  /** Names and values in wire order, as node:http's `rawHeaders`. */
  raw(): string[] {
    const s = this.#offsets()
    const out: string[] = []
    for (let i = 0; i < s.length; i += 2) out.push(latin1(this.#arena, s[i], s[i + 1]))
    return out
  }
}

/** Whether two values of a `headers` object are the same (arrays element by element). */
function sameValue(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b)) return a === b
  return a.length === b.length && a.every((x, i) => x === b[i])
}

/** A message read natively (`HttpRequest`, `HttpClientResponse`): its header fields, with node:http's names. */
export abstract class HttpHeaderView {
  /** @internal The message's header fields. */
  protected abstract _headerFields(): HttpFields

  /** The value of header `name` (case-insensitive), duplicates joined with `, `; no object is made. */
  header(name: string): string | undefined {
    return this._headerFields().get(name)
  }

  /** The headers as node:http's `headers` (lower-case names; `set-cookie` an array). Made on first use. */
  get headers(): Record<string, string | string[]> {
    return this._headerFields().record()
  }

  /** Names and values in wire order, as node:http's `rawHeaders`. */
  get rawHeaders(): string[] {
    return this._headerFields().raw()
  }
}
