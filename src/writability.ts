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
 *   `crates/node/src/channel/ops.rs` reserves every write of a batch on its channel before
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
 */
import type * as Native from '../native'
import type { Channel } from './channel'
import { PipelineEvent } from './events'
import { WritabilitySlot } from './protocol'

/** Bytes each queued message counts on top of its own size (Netty's default, as natively). */
export const ENTRY_OVERHEAD = 96
/** What a non-byte message counts (the native size estimator's value). */
export const VALUE_SIZE = 8

/** A channel's writability as JS tracks it (the binding's bookkeeping, not API). */
export class WriteCount {
  /** Bytes of writes queued as ops in op epoch `epoch` (not applied yet). */
  queued = 0
  epoch = -1
  /** An upper bound of the native pending bytes (exact when read, plus applied writes). */
  hint = 0
  /** The high water mark, once read (reset when an option changes). */
  high = Number.NaN
  /** The op epoch in which the channel was seen unwritable (no crossing can happen in it). */
  unwritableEpoch = -1
}

/** A channel's state from `writability()`, by `WritabilitySlot`. */
type NativeState = number[]

export class WritabilityCounter {
  /** Bumped whenever the op buffer starts filling again (the previous ops were applied). */
  epoch = 0

  constructor(
    private readonly native: Native.NativeChannels,
    private readonly ops: Float64Array,
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
    this.#read(ch, q)
  }

  /** False while the channel is unwritable, counting what JS queued. */
  isWritable(ch: Channel): boolean {
    return this.#read(ch, this.queued(ch._writes))[WritabilitySlot.Writable] === 1
  }

  /** `[bytesBeforeUnwritable, bytesBeforeWritable]`, counting what JS queued. */
  bytesBefore(ch: Channel): [number, number] {
    const q = this.queued(ch._writes)
    const s = this.#read(ch, q)
    const total = s[WritabilitySlot.Pending] + q
    const high = s[WritabilitySlot.High]
    const low = s[WritabilitySlot.Low]
    return s[WritabilitySlot.Writable] === 1 ? [Math.max(0, high + 1 - total), 0] : [0, Math.max(0, total + 1 - low)]
  }

  /** Reads the native state exactly; a crossing the queued bytes make is reported here. */
  #read(ch: Channel, queued: number): NativeState {
    const s = this.native.writability(ch.id, queued)
    const w = ch._writes
    w.hint = s[WritabilitySlot.Pending]
    w.high = s[WritabilitySlot.High]
    if (s[WritabilitySlot.Writable] === 0) w.unwritableEpoch = this.epoch
    if (s[WritabilitySlot.Crossed] === 1) ch.pipeline._fireInbound(ch.pipeline._head, PipelineEvent.ChannelWritabilityChanged, undefined)
    return s
  }
}
