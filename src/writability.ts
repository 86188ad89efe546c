/**
 * JS's share of a channel's writability. A write a JS handler makes waits as an op record
 * until the hub applies the ops (when the delivery returns, or at the next microtask
 * checkpoint), so the native outbound buffer cannot see it yet: JS counts it here, with the
 * same size the buffer will (bytes: their length, other values 8, plus 96 per entry), and
 * `isWritable`, `bytesBeforeUnwritable`, `bytesBeforeWritable` and
 * `channelWritabilityChanged` go by the native pending bytes *plus* these queued bytes, as
 * Netty's go by every write made so far.
 *
 * Ground rules (the JS thread of the channel's loop):
 * - Queued bytes belong to one *op epoch*: the ops made since the op buffer was last emptied.
 *   Once the ops are applied (the native side empties the buffer) they count natively:
 *   `crates/wire/src/ops.rs` reserves every write of a batch on its channel before
 *   applying the batch, so the two counts never overlap and never leave a gap.
 * - The crossing of the high mark is decided here, synchronously in the write that crosses
 *   (Netty fires `channelWritabilityChanged` inside that write): the native side marks the
 *   channel unwritable without an event (`writability(id, queued)`), and JS fires the event
 *   from the head of the pipeline. Every other crossing (the buffer drained below the low
 *   mark, a crossing JS did not see) is fired natively and reaches JS as a record. So each
 *   crossing fires once.
 * - A write asks the native side only when it may cross: `hint` bounds the native pending
 *   bytes from above between two exact reads (queued bytes are added to it once applied), so
 *   a write below the mark costs no native call. The getters always read exactly.
 * - An exact read answers in a shared `Float64Array` (no JS array per call), read at once
 *   into the channel's `WriteCount`, before any event fires: a handler that reads again in
 *   that event overwrites the array, never the values taken.
 */
import type * as Native from '../native'
import type { Channel } from './channel'
import { PipelineEvent } from './events'
import { WritabilitySlot } from './protocol'

/** Bytes each queued message counts on top of its own size (Netty's default, as natively). */
export const ENTRY_OVERHEAD = 96
/** What a non-byte message counts (the native size estimator's value). */
export const VALUE_SIZE = 8

/**
 * `v` (a whole number read from a `Float64Array`, which V8 reads as a boxed double) as a small
 * integer when it is one, so that `WriteCount`'s fields stay unboxed.
 */
const whole = (v: number): number => (v >= 0 && v <= 0x3fffffff ? v | 0 : v)

/** A channel's writability as JS tracks it (the binding's bookkeeping, not API). */
export class WriteCount {
  /** Bytes of writes queued as ops in op epoch `epoch` (not applied yet). */
  queued = 0
  epoch = -1
  /** An upper bound of the native pending bytes (exact when read, plus applied writes). */
  hint = 0
  /**
   * The high water mark, once read (reset when an option changes); -1 until then, which no
   * count is below. (Whole numbers, as all the fields here: a NaN, or a double read from the
   * state array, would make the field a boxed double in every channel's count, 16 bytes each.)
   */
  high = -1
  /** The low water mark and writability, as last read exactly. */
  low = 0
  writable = true
  /** The op epoch in which the channel was seen unwritable (no crossing can happen in it). */
  unwritableEpoch = -1
}

export class WritabilityCounter {
  /** Bumped whenever the op buffer starts filling again (the previous ops were applied). */
  epoch = 0

  constructor(
    private readonly native: Native.NativeChannels,
    private readonly ops: Float64Array,
    /** Where `writability()` answers, by `WritabilitySlot`. */
    private readonly state: Float64Array,
  ) {}

  /** The bytes `ch` queued that the native side has not seen (older ones join the hint). */
  queued(w: WriteCount): number {
    if (w.epoch !== this.epoch || this.ops[0] === 0) {
      w.hint += w.queued
      w.queued = 0
      w.epoch = this.epoch
    }
    return w.queued
  }

  /** Counts a write of `size` bytes (before the overhead) that `ch` just queued. */
  count(ch: Channel, size: number): void {
    const w = ch._writes
    const q = this.queued(w) + size + ENTRY_OVERHEAD
    w.queued = q
    if (w.unwritableEpoch === this.epoch || w.hint + q <= w.high) return
    if (this.#read(ch, q)) this.#crossed(ch)
  }

  /** False while the channel is unwritable, counting what JS queued. */
  isWritable(ch: Channel): boolean {
    const crossed = this.#read(ch, this.queued(ch._writes))
    const writable = ch._writes.writable
    if (crossed) this.#crossed(ch)
    return writable
  }

  /** `[bytesBeforeUnwritable, bytesBeforeWritable]`, counting what JS queued. */
  bytesBefore(ch: Channel): [number, number] {
    const w = ch._writes
    const q = this.queued(w)
    const crossed = this.#read(ch, q)
    const total = w.hint + q
    const r: [number, number] = w.writable ? [Math.max(0, w.high + 1 - total), 0] : [0, Math.max(0, total + 1 - w.low)]
    if (crossed) this.#crossed(ch)
    return r
  }

  /**
   * Reads the native state exactly into `ch._writes` (the pending bytes into `hint`); true if
   * the queued bytes crossed the high mark now (the caller fires the event, after taking what
   * it needs).
   */
  #read(ch: Channel, queued: number): boolean {
    this.native.writability(ch.id, queued)
    const s = this.state
    const w = ch._writes
    w.hint = whole(s[WritabilitySlot.Pending])
    w.high = whole(s[WritabilitySlot.High])
    w.low = whole(s[WritabilitySlot.Low])
    w.writable = s[WritabilitySlot.Writable] === 1
    if (!w.writable) w.unwritableEpoch = this.epoch
    return s[WritabilitySlot.Crossed] === 1
  }

  /** Fires the crossing JS decided from the head of the pipeline (Netty fires it inside the write). */
  #crossed(ch: Channel): void {
    ch.pipeline._fireInbound(ch.pipeline._head, PipelineEvent.ChannelWritabilityChanged, undefined)
  }
}
