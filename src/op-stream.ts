/**
 * The JS → native half of a loop's hub: op records in a Float64Array the native side shares,
 * message bytes in one arena Buffer, and the few things that cannot be numbers (Buffers too
 * big to copy, error strings) in arrays passed with the batch. The ops are applied when the
 * delivery that made them returns, or once per microtask checkpoint outside a delivery; no
 * napi call per write.
 *
 * Ground rules (the loop's JS thread only):
 * - An op and the bytes or big chunk it names go in the same batch: `encode` applies the
 *   batch first when the op would not fit, and the arena restarts with every batch.
 * - `encode` leaves its result in `kind`, `a`, `b` (no tuple per write); the caller's `op`
 *   right after it consumes them.
 * - Protocol messages are written by their own module in the layout the native encoder reads
 *   (`FramedCodec`: RESP replies, src/resp.ts; HTTP responses and body pieces, src/http-wire.ts).
 *   Inbound, WebSocket frames and HTTP requests and body pieces a JS handler fires on to a
 *   native handler go in their layouts too (`ReadWs`, `ReadHttp`), other values as tokens.
 */
import { Buffer } from 'node:buffer' // the module's binding, not the global's getter on every use (arena-view.ts)
import type * as Native from '../native'
import { RespReply, replyBytes, writeReply } from './resp'
import { HttpRequest } from './http-request'
import { HttpContent } from './http-content'
import { HttpResponse } from './http-response'
import { HttpClientRequest } from './http-client'
import { httpBytes, httpInboundBytes, writeHttp, writeHttpInbound, type HttpInbound, type HttpOutbound, type LendBig } from './http-wire'
import { FileRegion, REGION_BYTES, writeRegion } from './file-region'
import { isWebSocketFrame, writeWs, wsBytes, type WebSocketFrame } from './ws'
import type { Tokens } from './hub-refs'
import { ARENA_BYTES, OP_CAPACITY } from './wire'
import { RecordField, WireKind } from './protocol'
import type { WritabilityCounter } from './writability'

/**
 * Byte writes of at least this size are not copied: the op carries the JS Buffer itself and
 * the native side holds a reference to it until the socket has written it (as node:net
 * writes from the Buffer). Smaller ones are copied into the op arena, which costs less than
 * the reference. It is also the size from which the hub hands read batches over without a
 * copy (`HAND_OVER_BYTES` in crates/node/src/channel/delivery.rs), so a received Buffer
 * written back lies in memory the hub lent and is never held.
 */
const BORROW_MIN = 8 * 1024

/** How a protocol module writes its messages in their JS→native layout (no closure per write). */
interface FramedCodec<M> {
  /** Writes `m` at `at`; the end offset, or -1 if it does not fit. `lend` takes big bodies. */
  write(m: M, buf: Buffer, at: number, lend: LendBig): number
  /** `m` in a Buffer of its own (too big for the arena). */
  bytes(m: M, lend: LendBig): Buffer
}
/**
 * Streams holding big chunks or error strings outside a delivery of their own (a handler wrote
 * what it got to a channel of another loop of this thread; a task or timer wrote a large
 * Buffer). A delivery applies them before it returns: the Buffers it lent an `autoRelease`
 * handler are detached then, and must have been taken as slices of their reads first
 * (crates/wire/src/big.rs). So does every other call from a loop into JS (tasks,
 * timers, src/loop.ts): the loop's own delivery applies the op buffer natively right after
 * them, and the native side cannot see what JS holds (a write would lose its bytes).
 */
const holding = new Set<OpStream>()

/** Applies the ops of every stream in `holding`. */
export function applyHolding(): void {
  for (const s of holding) s.applyNow()
}

/** `TypedArray.prototype.set`, called directly (see `encode`). */
const copyInto = Uint8Array.prototype.set as (this: Uint8Array, src: Uint8Array, at: number) => void

const RESP_CODEC: FramedCodec<RespReply> = { write: writeReply, bytes: replyBytes }
const WS_CODEC: FramedCodec<WebSocketFrame> = { write: writeWs, bytes: wsBytes }
const HTTP_CODEC: FramedCodec<HttpOutbound> = { write: writeHttp, bytes: httpBytes }
const HTTP_INBOUND_CODEC: FramedCodec<HttpInbound> = { write: writeHttpInbound, bytes: httpInboundBytes }
const FILE_CODEC: FramedCodec<FileRegion> = {
  write: (r, buf, at) => (at + REGION_BYTES > buf.length ? -1 : writeRegion(r, buf, at)),
  bytes: (r) => {
    const b = Buffer.allocUnsafe(REGION_BYTES)
    writeRegion(r, b, 0)
    return b
  },
}

export class OpStream {
  #arenaUsed = 0
  /** What the last `encode` made: the op's kind and its `a`, `b` fields. */
  kind = 0
  a = 0
  b = 0
  /** Buffers of this batch passed by reference (an op's `a` indexes them). */
  big: Buffer[] = []
  /** Strings of this batch (an op's error code and message). */
  #strings: string[] = []
  /** Deliveries under way: while one is, ops wait for it to return instead of a microtask. */
  delivering = 0
  #flushQueued = false
  readonly #flush = () => {
    this.#flushQueued = false
    if (this.ops[0] > 0 || this.big.length > 0) this.applyNow()
  }

  constructor(
    readonly native: Native.NativeChannels,
    /** `[count, records...]`, shared with the native side. */
    readonly ops: Float64Array,
    /** The bytes the ops of a batch name, shared with the native side. */
    readonly arena: Buffer,
    readonly writability: WritabilityCounter,
    readonly tokens: Tokens,
  ) {}

  /** Appends one op record (applying the batch first if it is full). */
  op(kind: number, channel: number, ctx: number, a: number, b: number, c: number): void {
    const ops = this.ops
    // The count as an int32 (it is at most OP_CAPACITY): the record offsets below are then
    // integer arithmetic, not doubles checked back to indices.
    let n = ops[0] | 0
    if (kind === WireKind.Flush && n > 0) {
      // A flush right after a byte write from the same context (writeAndFlush): one op that
      // the native side applies as the write, then the flush.
      const last = 1 + (n - 1) * RecordField.Length
      if (ops[last] === WireKind.WriteBytes && ops[last + 1] === channel && ops[last + 2] === ctx) {
        ops[last] = WireKind.WriteBytesFlush
        return
      }
    } else if (kind === WireKind.WriteResp && c === 0 && n > 0) {
      // RESP replies written one after another by the same context, none with a promise
      // listened to, whose tag forms lie end to end in the arena: one op (native code frames
      // them in one pass and writes one message), as a server answering a pipelined batch.
      const last = 1 + (n - 1) * RecordField.Length
      if (ops[last] === kind && ops[last + 5] === 0 && ops[last + 1] === channel && ops[last + 2] === ctx && b >= 0 && ops[last + 4] >= 0 && ops[last + 3] + ops[last + 4] === a) {
        ops[last + 4] += b
        return
      }
    }
    if (n >= OP_CAPACITY) {
      this.applyNow()
      n = 0
    }
    if (n === 0) this.writability.epoch++
    const at = 1 + n * RecordField.Length
    ops[at] = kind
    ops[at + 1] = channel
    ops[at + 2] = ctx
    ops[at + 3] = a
    ops[at + 4] = b
    ops[at + 5] = c
    ops[0] = n + 1
    if (this.delivering === 0 && !this.#flushQueued) {
      this.#flushQueued = true
      queueMicrotask(this.#flush)
    }
  }

  /** True if big chunks or strings wait: the batch must go before a direct native call. */
  holdsRefs(): boolean {
    return this.big.length > 0 || this.#strings.length > 0
  }

  /** Applies the buffered ops now. */
  applyNow(): void {
    const big = this.big.length > 0 ? this.big : undefined
    const strings = this.#strings.length > 0 ? this.#strings : undefined
    this.big = []
    this.#strings = []
    holding.delete(this)
    this.native.applyOps(big, strings)
    this.#arenaUsed = 0
  }

  /** Applies the buffered ops, if any. */
  sync(): void {
    if (this.ops[0] > 0 || this.holdsRefs()) this.applyNow()
  }

  /** Puts an error's code and message into the batch's strings; the index of the first. */
  errorStrings(error: unknown): number {
    const at = this.#strings.length
    if (this.delivering === 0) holding.add(this)
    const e = error as { code?: unknown; message?: unknown } | null
    this.#strings.push(typeof e?.code === 'string' ? e.code : 'ERR_JS_HANDLER', typeof e?.message === 'string' ? e.message : String(error))
    return at
  }

  /**
   * Puts a message into the op stream: bytes in the arena, a big chunk or a token. The op's
   * kind and its `a`, `b` fields are left in `kind`, `a`, `b`.
   */
  encode(msg: unknown, bytesKind: number, bigKind: number, valueKind: number): void {
    // The op this encodes must go with the same batch as its bytes or big chunk.
    if (this.ops[0] >= OP_CAPACITY) this.applyNow()
    if (this.ops[0] === 0) this.#arenaUsed = 0
    let buf: Uint8Array
    if (msg instanceof Uint8Array) {
      // The usual write (an echo, a proxy), first. `length` (a byte array's byteLength), which
      // TurboFan inlines, and `set` called directly: the loads of `byteLength` and `set` went
      // through the generic LoadIC and called the getter (callgrind, 64 B echo: encode with
      // them ~378 instructions a write, now 142).
      const len = msg.length
      if (len < BORROW_MIN) {
        if (this.#arenaUsed + len > ARENA_BYTES) this.applyNow()
        const off = this.#arenaUsed
        copyInto.call(this.arena, msg, off)
        this.#arenaUsed = off + len
        return this.#encoded(bytesKind, off, len)
      }
      buf = msg
    } else if (typeof msg === 'string') {
      const room = ARENA_BYTES - this.#arenaUsed
      if (msg.length * 3 <= room) {
        const off = this.#arenaUsed
        const n = this.arena.write(msg, off, 'utf8')
        this.#arenaUsed += n
        return this.#encoded(bytesKind, off, n)
      }
      buf = Buffer.from(msg, 'utf8')
    } else if (msg instanceof RespReply && bytesKind === WireKind.WriteBytes) {
      return this.#encodeFramed(WireKind.WriteResp, msg, RESP_CODEC)
    } else if ((msg instanceof HttpResponse || msg instanceof HttpContent || msg instanceof HttpClientRequest) && bytesKind === WireKind.WriteBytes) {
      return this.#encodeFramed(WireKind.WriteHttp, msg, HTTP_CODEC)
    } else if ((msg instanceof HttpRequest || msg instanceof HttpContent) && bytesKind === WireKind.ReadBytes) {
      // A request or body piece a JS handler fires on reaches a native handler as the codec's message.
      return this.#encodeFramed(WireKind.ReadHttp, msg, HTTP_INBOUND_CODEC)
    } else if (isWebSocketFrame(msg) && (bytesKind === WireKind.WriteBytes || bytesKind === WireKind.ReadBytes)) {
      // Inbound too: a frame a JS handler fires on reaches a native handler as a frame.
      return this.#encodeFramed(bytesKind === WireKind.WriteBytes ? WireKind.WriteWs : WireKind.ReadWs, msg, WS_CODEC)
    } else if (msg instanceof FileRegion && bytesKind === WireKind.WriteBytes) {
      return this.#encodeFramed(WireKind.WriteFile, msg, FILE_CODEC)
    } else {
      return this.#encoded(valueKind, this.tokens.lend(msg), 0)
    }
    const len = buf.length
    if (len >= BORROW_MIN) {
      if (this.delivering === 0) holding.add(this)
      this.big.push(Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, len))
      return this.#encoded(bigKind, this.big.length - 1, len)
    }
    if (this.#arenaUsed + len > ARENA_BYTES) {
      this.applyNow()
    }
    const off = this.#arenaUsed
    copyInto.call(this.arena, buf, off)
    this.#arenaUsed += len
    return this.#encoded(bytesKind, off, len)
  }

  /**
   * A protocol message in the layout its module writes (RESP replies: src/resp.ts; HTTP
   * responses and body pieces: src/http-wire.ts) into the arena, or as a big chunk (`b` = -1).
   */
  #encodeFramed<M>(kind: number, msg: M, codec: FramedCodec<M>): void {
    this.lentBytes = 0
    let end = codec.write(msg, this.arena, this.#arenaUsed, this.#lend)
    if (end < 0 && this.#arenaUsed > 0) {
      this.applyNow()
      end = codec.write(msg, this.arena, this.#arenaUsed, this.#lend)
    }
    if (end < 0) {
      this.big.push(codec.bytes(msg, this.#lend))
      return this.#encoded(kind, this.big.length - 1, -1)
    }
    const off = this.#arenaUsed
    this.#arenaUsed = end
    return this.#encoded(kind, off, end - off)
  }

  /** Bytes of bodies the last framed message lent to the batch (they count as written too). */
  lentBytes = 0

  /** Lends a message's big body to this batch: its index in `big` (see `LendBig`). */
  #lend: LendBig = (b) => {
    if (this.delivering === 0) holding.add(this)
    this.big.push(b)
    this.lentBytes += b.length
    return this.big.length - 1
  }

  #encoded(kind: number, a: number, b: number): void {
    this.kind = kind
    this.a = a
    this.b = b
  }
}
