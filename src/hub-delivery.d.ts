/**
 * The native → JS half of a loop's hub: one delivery per loop iteration brings the event
 * records of all the loop's channels (crates/node/src/channel/delivery.rs); each record is
 * routed to its JS context's pipeline, or completes a promise, makes or forgets a channel.
 *
 * Ground rules (the loop's JS thread only):
 * - Consecutive records of one channel run in that channel's async context (the context that
 *   made it: the connect() call, or the server's bind() for accepted channels).
 * - Ops JS makes during a delivery are applied when it returns (`OpStream.delivering`); big
 *   chunks and strings go with the batch at once, as a direct native call would need them.
 * - One bad record must not stop the others: a throw while routing one is reported, and the
 *   next record goes on (handler errors themselves are routed by the pipeline).
 */
import type { Channel } from './channel';
import { NetloopError } from './errors';
import type { ChannelHub } from './hub';
import type { Promises, Tokens } from './hub-refs';
import { type OpStream } from './op-stream';
/** A NetloopError naming its channel (and its cause, if given). */
export declare function errorOf(code: string, message: string, channel: number, cause?: unknown): NetloopError;
/** The error that closed a channel, if one did (Netty's initial close cause). */
export declare const closeCauses: WeakMap<Channel, unknown>;
export declare class Delivery {
    #private;
    readonly hub: ChannelHub;
    /** The records of a delivery, shared with the native side. */
    readonly events: Float64Array;
    readonly stream: OpStream;
    readonly tokens: Tokens;
    readonly promises: Promises;
    constructor(hub: ChannelHub, 
    /** The records of a delivery, shared with the native side. */
    events: Float64Array, stream: OpStream, tokens: Tokens, promises: Promises);
    /**
     * One delivery: `count` records in the events array, their bytes in `arena` or, when `base`
     * is not negative, in `arena` from `base` on (a small batch copied into the thread's read
     * pool, `crates/node/src/channel/delivery.rs`): record offsets are then relative to `base`,
     * added where the arena is read (no view of the pool made per delivery). Large reads come as
     * Buffers of their own in `segments` (a read record's `c` - 1).
     */
    dispatch(count: number, arena: Buffer | undefined, strings: string[] | undefined, base: number | undefined, segments: Buffer[] | undefined): void;
}
