/**
 * The translation between the TS pipeline's events (`PipelineEvent`, src/events.ts) and the
 * boundary's wire kinds (`WireKind`, the protocol module): the hub turns records into pipeline
 * events and pipeline events into op records through these two tables (decision 0011).
 */
import type { ChannelHandlerContext } from './context';
import { WireKind } from './protocol';
/**
 * The wire kind of each pipeline event that leaves JS for the native pipeline as a plain
 * record (reads, user events and exceptions carry payloads and are encoded by `sendInbound`).
 */
export declare const WIRE_OF_EVENT: ReadonlyArray<WireKind>;
/** The pipeline event of each inbound or outbound wire kind JS receives (the rest: 0, unused). */
export declare const EVENT_OF_WIRE: Uint8Array;
/**
 * Which directions a JS handler has methods for (`HandlerTakes` bits): its native stand-in
 * passes the other direction on natively, as JS skips the handler (adapter.rs), and
 * `channelReadComplete` while no JS handler of the channel has it (handlers.rs).
 */
export declare function takes(ctx: ChannelHandlerContext): number;
