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
 *   (`FramedCodec`: RESP replies, src/resp.ts; HTTP responses and body pieces, src/http.ts).
 */
import type * as Native from '../native';
import type { Tokens } from './hub-refs';
import type { WritabilityCounter } from './writability';
/** Applies the ops of every stream in `holding`. */
export declare function applyHolding(): void;
export declare class OpStream {
    #private;
    readonly native: Native.NativeChannels;
    /** `[count, records...]`, shared with the native side. */
    readonly ops: Float64Array;
    /** The bytes the ops of a batch name, shared with the native side. */
    readonly arena: Buffer;
    readonly writability: WritabilityCounter;
    readonly tokens: Tokens;
    /** What the last `encode` made: the op's kind and its `a`, `b` fields. */
    kind: number;
    a: number;
    b: number;
    /** Buffers of this batch passed by reference (an op's `a` indexes them). */
    big: Buffer[];
    /** Deliveries under way: while one is, ops wait for it to return instead of a microtask. */
    delivering: number;
    constructor(native: Native.NativeChannels, 
    /** `[count, records...]`, shared with the native side. */
    ops: Float64Array, 
    /** The bytes the ops of a batch name, shared with the native side. */
    arena: Buffer, writability: WritabilityCounter, tokens: Tokens);
    /** Appends one op record (applying the batch first if it is full). */
    op(kind: number, channel: number, ctx: number, a: number, b: number, c: number): void;
    /** True if big chunks or strings wait: the batch must go before a direct native call. */
    holdsRefs(): boolean;
    /** Applies the buffered ops now. */
    applyNow(): void;
    /** Applies the buffered ops, if any. */
    sync(): void;
    /** Puts an error's code and message into the batch's strings; the index of the first. */
    errorStrings(error: unknown): number;
    /**
     * Puts a message into the op stream: bytes in the arena, a big chunk or a token. The op's
     * kind and its `a`, `b` fields are left in `kind`, `a`, `b`.
     */
    encode(msg: unknown, bytesKind: number, bigKind: number, valueKind: number): void;
    /** Bytes of bodies the last framed message lent to the batch (they count as written too). */
    lentBytes: number;
}
