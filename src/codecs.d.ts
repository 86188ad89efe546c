/** A handler implemented natively. Add it to a pipeline like any handler. */
export declare abstract class NativeHandler {
}
/** Splits on `\n` or `\r\n` (Netty's `LineBasedFrameDecoder`). Frames are `Buffer`s. */
export declare class LineBasedFrameDecoder extends NativeHandler {
    constructor(maxLength: number, stripDelimiter?: boolean, failFast?: boolean);
}
/** Splits on any of the delimiters (Netty's `DelimiterBasedFrameDecoder`). */
export declare class DelimiterBasedFrameDecoder extends NativeHandler {
    constructor(maxFrameLength: number, delimiters: Array<Buffer | Uint8Array | string>, options?: {
        stripDelimiter?: boolean;
        failFast?: boolean;
    });
    /** `\r\n` and `\n` (Netty's `Delimiters.lineDelimiter()`). */
    static lineDelimiter(): Buffer[];
    /** The NUL byte (Netty's `Delimiters.nulDelimiter()`). */
    static nulDelimiter(): Buffer[];
}
/** Frames of exactly `frameLength` bytes (Netty's `FixedLengthFrameDecoder`). */
export declare class FixedLengthFrameDecoder extends NativeHandler {
    constructor(frameLength: number);
}
export interface LengthFieldOptions {
    /** Added to the field's value to get the bytes after the field (default 0). */
    lengthAdjustment?: number;
    /** Bytes dropped from the front of each frame (default 0). */
    initialBytesToStrip?: number;
    /** Report a too-long frame as soon as its header is read (default true). */
    failFast?: boolean;
    /** Byte order of the field (default 'BE'). */
    byteOrder?: 'BE' | 'LE';
}
/** Frames whose header carries their length (Netty's `LengthFieldBasedFrameDecoder`). */
export declare class LengthFieldBasedFrameDecoder extends NativeHandler {
    constructor(maxFrameLength: number, lengthFieldOffset: number, lengthFieldLength: number, options?: LengthFieldOptions);
}
/** Prepends the length of each outbound message (Netty's `LengthFieldPrepender`). */
export declare class LengthFieldPrepender extends NativeHandler {
    constructor(lengthFieldLength: number, options?: {
        lengthIncludesLengthFieldLength?: boolean;
        lengthAdjustment?: number;
        byteOrder?: 'BE' | 'LE';
    });
}
/**
 * Fires `IdleStateEvent`s when the channel has not read, written, or done either for the
 * given number of milliseconds (0 disables a kind), as Netty's `IdleStateHandler`.
 */
export declare class IdleStateHandler extends NativeHandler {
    /**
     * `observeOutput`: a write still in progress (bytes leaving slowly) counts as activity for
     * writer and all idleness (Netty's `observeOutput`, default false).
     */
    constructor(readerIdleMs: number, writerIdleMs: number, allIdleMs: number, options?: {
        observeOutput?: boolean;
    });
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
export declare class FlushConsolidationHandler extends NativeHandler {
    constructor(options?: {
        explicitFlushAfterFlushes?: number;
        consolidateWhenNoReadInProgress?: boolean;
    });
}
