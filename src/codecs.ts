/**
 * The built-in native handlers. Each runs in Rust inside the channel's native pipeline; a
 * decoded frame crosses into JS once, as a `Buffer`, whatever the number of native handlers
 * before it. Constructors take Netty's parameters and check them at once.
 */
import { NetloopError, checkBoolean, checkInteger } from './errors'
import { NativeHandlerKind } from './protocol'

const int = (name: string, v: unknown, min: number, max = 0x7fffffff): number => checkInteger(name, v, min, max)

function bool(name: string, v: unknown): number {
  checkBoolean(name, v)
  return v ? 1 : 0
}

function order(v: unknown): number {
  if (v !== 'BE' && v !== 'LE') {
    throw new NetloopError('ERR_INVALID_ARG_VALUE', `The "byteOrder" argument must be 'BE' or 'LE'. Received ${String(v)}`)
  }
  return v === 'LE' ? 1 : 0
}

/**
 * What the native side reads of a description: its kind, numbers and byte strings. Frozen and
 * shared by the descriptions with the same ones (see `specOf`).
 */
interface NativeSpec {
  readonly kind: NativeHandlerKind
  readonly params: number[]
  readonly delimiters: Buffer[] | undefined
}

/**
 * Descriptions with the same kind and parameters share one frozen spec: a `childHandler` that
 * makes `new HttpServerCodec()` for each connection then keeps one small object per handler
 * (one field), not its arrays and Buffers too (an idle WebSocket connection kept about 500
 * bytes of them; docs/decisions/0017-websocket.md, "Memory per idle connection"). Found by
 * comparing numbers and bytes with the specs of the same kind, which allocates nothing when
 * one matches. Bounded: past `MAX_SHARED` different specs the table starts afresh.
 */
const shared = new Map<NativeHandlerKind, NativeSpec[]>()
let sharedCount = 0
const MAX_SHARED = 256

function sameSpec(e: NativeSpec, params: number[], delimiters: Buffer[] | undefined): boolean {
  const p = e.params
  if (p.length !== params.length) return false
  for (let i = 0; i < p.length; i++) if (!Object.is(p[i], params[i])) return false
  const d = e.delimiters
  if (d === undefined || delimiters === undefined) return d === delimiters
  if (d.length !== delimiters.length) return false
  for (let i = 0; i < d.length; i++) if (!d[i].equals(delimiters[i])) return false
  return true
}

function specOf(kind: NativeHandlerKind, params: number[], delimiters: Buffer[] | undefined): NativeSpec {
  let list = shared.get(kind)
  if (list !== undefined) for (let i = 0; i < list.length; i++) if (sameSpec(list[i], params, delimiters)) return list[i]
  if (sharedCount >= MAX_SHARED) {
    shared.clear()
    sharedCount = 0
    list = undefined
  }
  const e: NativeSpec = Object.freeze({ kind, params: Object.freeze(params) as number[], delimiters: delimiters && (Object.freeze(delimiters) as Buffer[]) })
  if (list === undefined) shared.set(kind, (list = []))
  list.push(e)
  sharedCount++
  return e
}

/** A handler implemented natively. Add it to a pipeline like any handler. */
export abstract class NativeHandler {
  /** @internal Kind, numbers and byte strings, shared (see `specOf`). */
  #spec: NativeSpec

  /** @internal */
  constructor(kind: NativeHandlerKind, params: number[], delimiters?: Buffer[]) {
    this.#spec = specOf(kind, params, delimiters)
  }

  /** @internal The kind of native handler. */
  get _kind(): NativeHandlerKind {
    return this.#spec.kind
  }

  /** @internal Its parameters, as the native side reads them (shared, frozen). */
  get _params(): number[] {
    return this.#spec.params
  }

  /** @internal Byte strings the native side reads beside the numbers (shared, frozen). */
  get _delimiters(): Buffer[] | undefined {
    return this.#spec.delimiters
  }

  /** @internal This description's byte strings replaced (a TLS client's server name, at its add). */
  _setDelimiters(delimiters: Buffer[]): void {
    this.#spec = specOf(this.#spec.kind, [...this.#spec.params], delimiters)
  }

  /** @internal Called when the handler is added to `ch`'s pipeline. */
  _attach(_ch: unknown): void {}

  /** @internal Called when the channel closed, while the native side can still be asked. */
  _onClosed(): void {}
}

/** Splits on `\n` or `\r\n` (Netty's `LineBasedFrameDecoder`). Frames are `Buffer`s. */
export class LineBasedFrameDecoder extends NativeHandler {
  constructor(maxLength: number, stripDelimiter = true, failFast = false) {
    super(NativeHandlerKind.Line, [int('maxLength', maxLength, 1), bool('stripDelimiter', stripDelimiter), bool('failFast', failFast)])
  }
}

/** Splits on any of the delimiters (Netty's `DelimiterBasedFrameDecoder`). */
export class DelimiterBasedFrameDecoder extends NativeHandler {
  constructor(maxFrameLength: number, delimiters: Array<Buffer | Uint8Array | string>, options: { stripDelimiter?: boolean; failFast?: boolean } = {}) {
    if (!Array.isArray(delimiters) || delimiters.length === 0) {
      throw new NetloopError('ERR_INVALID_ARG_VALUE', 'The "delimiters" argument must be a non-empty array')
    }
    const bufs = delimiters.map((d) => {
      const b = typeof d === 'string' ? Buffer.from(d) : d instanceof Uint8Array ? Buffer.from(d) : undefined
      if (!b || b.length === 0) throw new NetloopError('ERR_INVALID_ARG_VALUE', 'Each delimiter must be a non-empty Buffer, Uint8Array or string')
      return b
    })
    super(
      NativeHandlerKind.Delimiter,
      [int('maxFrameLength', maxFrameLength, 1), bool('stripDelimiter', options.stripDelimiter ?? true), bool('failFast', options.failFast ?? true)],
      bufs,
    )
  }

  /** `\r\n` and `\n` (Netty's `Delimiters.lineDelimiter()`). */
  static lineDelimiter(): Buffer[] {
    return [Buffer.from('\r\n'), Buffer.from('\n')]
  }

  /** The NUL byte (Netty's `Delimiters.nulDelimiter()`). */
  static nulDelimiter(): Buffer[] {
    return [Buffer.from([0])]
  }
}

/** Frames of exactly `frameLength` bytes (Netty's `FixedLengthFrameDecoder`). */
export class FixedLengthFrameDecoder extends NativeHandler {
  constructor(frameLength: number) {
    super(NativeHandlerKind.FixedLength, [int('frameLength', frameLength, 1)])
  }
}

export interface LengthFieldOptions {
  /** Added to the field's value to get the bytes after the field (default 0). */
  lengthAdjustment?: number
  /** Bytes dropped from the front of each frame (default 0). */
  initialBytesToStrip?: number
  /** Report a too-long frame as soon as its header is read (default true). */
  failFast?: boolean
  /** Byte order of the field (default 'BE'). */
  byteOrder?: 'BE' | 'LE'
}

/** Frames whose header carries their length (Netty's `LengthFieldBasedFrameDecoder`). */
export class LengthFieldBasedFrameDecoder extends NativeHandler {
  constructor(maxFrameLength: number, lengthFieldOffset: number, lengthFieldLength: number, options: LengthFieldOptions = {}) {
    const width = int('lengthFieldLength', lengthFieldLength, 1, 8)
    if (![1, 2, 3, 4, 8].includes(width)) {
      throw new NetloopError('ERR_OUT_OF_RANGE', `The value of "lengthFieldLength" is out of range. It must be 1, 2, 3, 4 or 8. Received ${width}`)
    }
    super(NativeHandlerKind.LengthField, [
      int('maxFrameLength', maxFrameLength, 1),
      int('lengthFieldOffset', lengthFieldOffset, 0),
      width,
      int('lengthAdjustment', options.lengthAdjustment ?? 0, -0x7fffffff),
      int('initialBytesToStrip', options.initialBytesToStrip ?? 0, 0),
      bool('failFast', options.failFast ?? true),
      order(options.byteOrder ?? 'BE'),
    ])
  }
}

/** Prepends the length of each outbound message (Netty's `LengthFieldPrepender`). */
export class LengthFieldPrepender extends NativeHandler {
  constructor(lengthFieldLength: number, options: { lengthIncludesLengthFieldLength?: boolean; lengthAdjustment?: number; byteOrder?: 'BE' | 'LE' } = {}) {
    const width = int('lengthFieldLength', lengthFieldLength, 1, 8)
    if (![1, 2, 3, 4, 8].includes(width)) {
      throw new NetloopError('ERR_OUT_OF_RANGE', `The value of "lengthFieldLength" is out of range. It must be 1, 2, 3, 4 or 8. Received ${width}`)
    }
    super(NativeHandlerKind.Prepender, [
      width,
      bool('lengthIncludesLengthFieldLength', options.lengthIncludesLengthFieldLength ?? false),
      int('lengthAdjustment', options.lengthAdjustment ?? 0, -0x7fffffff),
      order(options.byteOrder ?? 'BE'),
    ])
  }
}

/**
 * Fires `IdleStateEvent`s when the channel has not read, written, or done either for the
 * given number of milliseconds (0 disables a kind), as Netty's `IdleStateHandler`.
 */
export class IdleStateHandler extends NativeHandler {
  /**
   * `observeOutput`: a write still in progress (bytes leaving slowly) counts as activity for
   * writer and all idleness (Netty's `observeOutput`, default false).
   */
  constructor(readerIdleMs: number, writerIdleMs: number, allIdleMs: number, options: { observeOutput?: boolean } = {}) {
    super(NativeHandlerKind.Idle, [
      int('readerIdleMs', readerIdleMs, 0),
      int('writerIdleMs', writerIdleMs, 0),
      int('allIdleMs', allIdleMs, 0),
      bool('observeOutput', options.observeOutput ?? false),
    ])
  }
}

/**
 * Passes on fewer flushes, so pipelined small answers leave in fewer write system calls
 * (Netty's `FlushConsolidationHandler`). Add it before (towards the head from) the handlers
 * whose flushes it consolidates. While a native read batch lasts, their flushes are counted and
 * one is passed on at the batch's end (and every `explicitFlushAfterFlushes`-th at once, default
 * 256); outside reads a flush passes at once unless `consolidateWhenNoReadInProgress` (default
 * false) is set: then one flush is passed on from a task in the loop's next task batch.
 *
 * A JS handler sees a read batch after the native pipeline finished it (events reach JS once
 * per loop iteration), so its flushes arrive outside the batch: to consolidate a JS handler that
 * calls `writeAndFlush` per message, set `consolidateWhenNoReadInProgress: true`. A JS handler
 * that writes and flushes once in `channelReadComplete` needs no consolidation: its writes of
 * one batch already leave in one write system call.
 */
export class FlushConsolidationHandler extends NativeHandler {
  constructor(options: { explicitFlushAfterFlushes?: number; consolidateWhenNoReadInProgress?: boolean } = {}) {
    super(NativeHandlerKind.FlushConsolidation, [
      int('explicitFlushAfterFlushes', options.explicitFlushAfterFlushes ?? 256, 1),
      bool('consolidateWhenNoReadInProgress', options.consolidateWhenNoReadInProgress ?? false),
    ])
  }
}
