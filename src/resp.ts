/**
 * RESP (the Redis protocol) parsed and framed natively (Netty's codec-redis):
 * `RespDecoder` is a native handler that turns bytes into whole values, delivered to JS once
 * per value (a command is an array of `Buffer`s, each a view of the delivery's arena: no copy
 * per argument); `Resp.*` builds replies that native code frames as RESP when they are written.
 *
 * ```ts
 * ch.pipeline.addLast('resp', new RespDecoder()).addLast('app', {
 *   channelRead: (ctx, cmd: Buffer[]) => ctx.write(cmd[0].equals(PING) ? Resp.PONG : Resp.error('ERR unknown')),
 *   channelReadComplete: (ctx) => ctx.flush(),
 * })
 * ```
 *
 * The tag format both sides share is described in crates/wire/src/resp_wire.rs.
 */
// Imported, not the global: in Node the global `Buffer` is a getter, called on each use.
import { Buffer } from 'node:buffer'
import { NativeHandler } from './codecs'
import { NativeHandlerKind, RespTag as T } from './protocol'
import { checkBoolean, checkInteger, invalidArg, invalidArgType } from './errors'
import { view, viewsOf } from './arena-view'

/** Limits of a `RespDecoder` (defaults as redis-server's where it has one). */
export interface RespDecoderOptions {
  /** Longest bulk string, in bytes (default 512 MiB, Redis's proto-max-bulk-len). */
  maxBulkLength?: number
  /** Most elements of one array (default 1048576). */
  maxArrayLength?: number
  /** Most arrays nested in one another (default 32; a command needs 1). */
  maxNestingDepth?: number
  /** Longest inline command or type line (default 65536, as Redis). */
  maxInlineLength?: number
  /** Accept inline commands such as `PING\r\n` typed into telnet (default true). */
  inlineCommands?: boolean
  /** Accept RESP3 types (default true). */
  resp3?: boolean
  /**
   * For servers: while the channel is not writable (replies queued past the high water mark),
   * deliver no new command and stop reading (`autoRead` off meanwhile), and go on once it
   * drains: a client that pipelines without reading its replies is held back by TCP instead of
   * growing the server's memory (node:http's rule; redis-server has none). Commands of one read
   * that reach the handler after the channel turned unwritable go back to the decoder and come
   * again once it drains, so what is queued stays near the high water mark whatever a reply's
   * size. Default: on for a server's channels, off for clients (a client would stop reading
   * replies while its own commands cannot drain).
   */
  pauseWhileUnwritable?: boolean
}

/**
 * Decodes RESP2/RESP3 natively (Netty's `RedisDecoder` + `RedisArrayAggregator`). Each whole
 * value reaches the next handler as JS data: bulk strings as `Buffer`s, simple strings as
 * strings, integers as numbers (bigint beyond 2^53), null as `null`, arrays as arrays, errors
 * as `RespErrorReply`, maps as `Map`, sets as `Set`. A protocol error or a limit reaches
 * `exceptionCaught` as `ERR_RESP_*` and the decoder discards what follows: close the channel
 * (after an error reply), as redis-server does.
 */
export class RespDecoder extends NativeHandler {
  constructor(options: RespDecoderOptions = {}) {
    const n = (name: keyof RespDecoderOptions, v: unknown, d: number, min: number) => (v === undefined ? d : checkInteger(name, v, min, 0x7fffffff))
    const b = (name: keyof RespDecoderOptions, v: unknown, d: boolean | 2) => {
      if (v === undefined) return d === 2 ? 2 : d ? 1 : 0
      checkBoolean(name, v)
      return v ? 1 : 0
    }
    super(NativeHandlerKind.Resp, [
      n('maxBulkLength', options.maxBulkLength, 512 * 1024 * 1024, 0),
      n('maxArrayLength', options.maxArrayLength, 1024 * 1024, 0),
      n('maxNestingDepth', options.maxNestingDepth, 32, 0),
      n('maxInlineLength', options.maxInlineLength, 64 * 1024, 16),
      b('inlineCommands', options.inlineCommands, true),
      b('resp3', options.resp3, true),
      // 2: by the channel (crates/wire/src/codecs.rs).
      b('pauseWhileUnwritable', options.pauseWhileUnwritable, 2),
    ])
  }
}

/** An error reply (`-ERR ...`), as read from a peer. */
export class RespErrorReply {
  constructor(readonly message: string) {}
}

/** A reply to write: framed natively as RESP when it reaches the native side. */
export class RespReply {
  /** @internal */
  constructor(
    /** @internal */ readonly _tag: number,
    /** @internal */ readonly _value: unknown,
  ) {}
}

/** A sequence's tag (JS only: its replies are written back to back, without a header). */
const SEQUENCE = 0

/** Aggregates hold values, not sequences (a sequence would add to the wire count). */
function items<T extends RespReply | [RespReply, RespReply]>(name: string, list: T[]): T[] {
  if (!Array.isArray(list)) throw invalidArgType(name, 'an array', list)
  for (const i of list) if (Array.isArray(i) ? i[0]._tag === SEQUENCE || i[1]._tag === SEQUENCE : (i as RespReply)._tag === SEQUENCE) throw invalidArg(`Resp.${name}: a sequence of replies cannot be an element`)
  return list
}

const enc = (s: string | Uint8Array): Buffer => (typeof s === 'string' ? Buffer.from(s) : Buffer.isBuffer(s) ? s : Buffer.from(s.buffer, s.byteOffset, s.byteLength))

/** Reply builders (Netty's `SimpleStringRedisMessage`, `ErrorRedisMessage`, ...). */
export const Resp = {
  /** `+text` */
  simple: (text: string): RespReply => new RespReply(T.Simple, enc(text)),
  /** `-text` (e.g. `ERR unknown command`) */
  error: (text: string): RespReply => new RespReply(T.Error, enc(text)),
  /** `:n` */
  integer: (n: number | bigint): RespReply => new RespReply(T.Integer, BigInt(n)),
  /** `$len\r\ndata` */
  bulk: (data: string | Uint8Array): RespReply => new RespReply(T.Bulk, enc(data)),
  /** `$-1` (a missing key) */
  nullBulk: (): RespReply => NULL_BULK,
  /** `*n` followed by each item */
  array: (list: RespReply[]): RespReply => new RespReply(T.Array, items('array', list)),
  /** `*-1` */
  nullArray: (): RespReply => NULL_ARRAY,
  /** RESP3 `_` */
  null: (): RespReply => NULL,
  /** RESP3 `#t` / `#f` */
  boolean: (b: boolean): RespReply => new RespReply(T.Boolean, b),
  /** RESP3 `,d` */
  double: (d: number): RespReply => new RespReply(T.Double, d),
  /** RESP3 `%n` */
  map: (pairs: Array<[RespReply, RespReply]>): RespReply => new RespReply(T.Map, items('map', pairs)),
  /**
   * Several replies back to back, as if each were written on its own, in one write: a server
   * answering a pipelined batch can collect its replies and write them once per read batch
   * (in `channelReadComplete`), which costs less than a write per reply. Not an element of
   * an array or map (`ERR_INVALID_ARG_VALUE`).
   */
  sequence: (replies: RespReply[]): RespReply => {
    if (!Array.isArray(replies)) throw invalidArgType('replies', 'an array', replies)
    return new RespReply(SEQUENCE, replies)
  },
  /** `+OK` */
  OK: undefined as unknown as RespReply,
  /** `+PONG` */
  PONG: undefined as unknown as RespReply,
}
const NULL_BULK = new RespReply(T.NullBulk, undefined)
const NULL_ARRAY = new RespReply(T.NullArray, undefined)
const NULL = new RespReply(T.Null, undefined)
Resp.OK = Resp.simple('OK')
Resp.PONG = Resp.simple('PONG')

/** @internal Bytes `r` takes in tag form (an upper bound for strings). */
function size(r: RespReply): number {
  switch (r._tag) {
    case T.Simple:
    case T.Error:
    case T.Bulk:
      return 5 + (r._value as Buffer).length
    case T.Integer:
    case T.Double:
      return 9
    case T.Boolean:
      return 2
    case T.Array: {
      let n = 5
      for (const i of r._value as RespReply[]) n += size(i)
      return n
    }
    case T.Map: {
      let n = 5
      for (const [k, v] of r._value as Array<[RespReply, RespReply]>) n += size(k) + size(v)
      return n
    }
    case SEQUENCE: {
      let n = 0
      for (const i of r._value as RespReply[]) n += size(i)
      return n
    }
    default:
      return 1
  }
}

/** @internal Writes `r` in tag form into `buf` at `at`; returns the end offset, or -1 if it does not fit. */
export function writeReply(r: RespReply, buf: Buffer, at: number): number {
  const tag = r._tag
  if (tag === T.Bulk || tag === T.Simple || tag === T.Error) {
    // The common replies: one bounds check, no walk for the size.
    const v = r._value as Buffer
    return at + 5 + v.length > buf.length ? -1 : putBytes(tag, v, buf, at)
  }
  if (tag === SEQUENCE) {
    // A batch's replies in one walk, each checked as it goes (no walk for the size first).
    // A sequence bigger than the arena's room is found out after copying at most that room.
    const list = r._value as RespReply[]
    for (let i = 0; i < list.length && at >= 0; i++) at = writeReply(list[i], buf, at)
    return at
  }
  if (at + size(r) > buf.length) return -1
  return put(r, buf, at)
}

/** `tag len:u32le data` at `at` (the caller checked it fits); returns the end offset. */
function putBytes(tag: number, v: Buffer, buf: Buffer, at: number): number {
  const n = v.length
  buf[at] = tag
  buf[at + 1] = n
  buf[at + 2] = n >>> 8
  buf[at + 3] = n >>> 16
  buf[at + 4] = n >>> 24
  at += 5
  // A short value byte by byte: cheaper than a call into the copy for a few bytes.
  if (n <= 32) for (let i = 0; i < n; i++) buf[at + i] = v[i]
  else buf.set(v, at)
  return at + n
}

/** @internal The tag form of `r` in a Buffer of its own. */
export function replyBytes(r: RespReply): Buffer {
  const b = Buffer.allocUnsafe(size(r))
  return b.subarray(0, put(r, b, 0))
}

function put(r: RespReply, buf: Buffer, at: number): number {
  switch (r._tag) {
    case T.Simple:
    case T.Error:
    case T.Bulk:
      return putBytes(r._tag, r._value as Buffer, buf, at)
    case SEQUENCE: {
      const list = r._value as RespReply[]
      for (let i = 0; i < list.length; i++) at = put(list[i], buf, at)
      return at
    }
  }
  buf[at++] = r._tag
  switch (r._tag) {
    case T.Integer:
      buf.writeBigInt64LE(r._value as bigint, at)
      return at + 8
    case T.Double:
      buf.writeDoubleLE(r._value as number, at)
      return at + 8
    case T.Boolean:
      buf[at] = r._value ? 1 : 0
      return at + 1
    case T.Array: {
      const items = r._value as RespReply[]
      buf.writeUInt32LE(items.length, at)
      at += 4
      for (const i of items) at = put(i, buf, at)
      return at
    }
    case T.Map: {
      const pairs = r._value as Array<[RespReply, RespReply]>
      buf.writeUInt32LE(pairs.length, at)
      at += 4
      for (const [k, v] of pairs) at = put(v, buf, put(k, buf, at))
      return at
    }
    default:
      return at
  }
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** Where the value `readValue` read last ends in its arena (a read record may hold several). */
let valueEnd = 0

/** @internal Reads the tag-form value at `at` of `arena` (bulk strings are views of it); its end is `readEnd()`. */
export function readValue(arena: Buffer, at: number): unknown {
  viewsOf(arena)
  // A command (an array of bulk strings) without a cursor object; anything else, or an array
  // holding anything but bulk strings, takes the general reader from the start.
  if (arena[at] === T.Array) {
    const n = u32(arena, at + 1)
    const out = new Array<Buffer>(n)
    let p = at + 5
    let i = 0
    for (; i < n && arena[p] === T.Bulk; i++) {
      const len = u32(arena, p + 1)
      out[i] = view(p + 5, len)
      p += 5 + len
    }
    if (i === n) {
      valueEnd = p
      return out
    }
  }
  const c = { at }
  const v = value(arena, c)
  valueEnd = c.at
  return v
}

/** The end offset of the value `readValue` read last. */
export function readEnd(): number {
  return valueEnd
}

/** The u32le at `at` (inline: the Buffer method checks its argument each call). */
function u32(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0
}

/** A length-prefixed byte string at the cursor: a view of the arena (no copy). */
function bytes(b: Buffer, c: { at: number }): Buffer {
  const len = u32(b, c.at)
  const v = view(c.at + 4, len)
  c.at += 4 + len
  return v
}

function count(b: Buffer, c: { at: number }): number {
  const n = b.readUInt32LE(c.at)
  c.at += 4
  return n
}

// No closure per value: a command is an array of bulk strings, read here once per argument.
function value(b: Buffer, c: { at: number }): unknown {
  const tag = b[c.at++]
  switch (tag) {
    case T.Bulk:
      return bytes(b, c)
    case T.Array:
    case T.Push: {
      const n = count(b, c)
      const out = new Array(n)
      for (let i = 0; i < n; i++) {
        if (b[c.at] === T.Bulk) {
          c.at++
          out[i] = bytes(b, c)
        } else out[i] = value(b, c)
      }
      return out
    }
    case T.Simple:
      return bytes(b, c).toString()
    case T.Error:
    case T.BulkError:
      return new RespErrorReply(bytes(b, c).toString())
    case T.Integer: {
      const v = b.readBigInt64LE(c.at)
      c.at += 8
      return v <= SAFE && v >= -SAFE ? Number(v) : v
    }
    case T.NullBulk:
    case T.NullArray:
    case T.Null:
      return null
    case T.Boolean:
      return b[c.at++] !== 0
    case T.Double: {
      const v = b.readDoubleLE(c.at)
      c.at += 8
      return v
    }
    case T.BigNumber:
      return BigInt(bytes(b, c).toString())
    case T.Verbatim: {
      c.at += 3
      return bytes(b, c).toString()
    }
    case T.Map: {
      const n = count(b, c)
      const m = new Map<unknown, unknown>()
      for (let i = 0; i < n; i++) m.set(value(b, c), value(b, c))
      return m
    }
    case T.Set: {
      const n = count(b, c)
      const s = new Set<unknown>()
      for (let i = 0; i < n; i++) s.add(value(b, c))
      return s
    }
    case T.Attribute: {
      const n = count(b, c)
      for (let i = 0; i < 2 * n; i++) value(b, c)
      return value(b, c)
    }
    default:
      return undefined
  }
}
