import type * as Native from '../native';
import { type Channel } from './channel';
import { type ChannelHandlerContext } from './context';
import type { EventLoop } from './loop';
import type { ChannelPromise } from './promise';
import { PipelineEvent } from './events';
import { WritabilityCounter } from './writability';
declare const NativeChannels: typeof Native.NativeChannels;
type NativeChannels = Native.NativeChannels;
/** What a child hub does with a channel its server accepted (see `ChannelHub.servers`). */
export interface ServerAcceptor {
    accept(hub: ChannelHub, id: number): void;
}
/** The channel hub of `loop` (made on first use; a field of the loop, it lives as long). */
export declare function hubOf(loop: EventLoop): ChannelHub;
/** Counters of a loop's JS boundary (see `EventLoop.metrics()`). */
export interface ChannelMetrics {
    iterations: number;
    deliveries: number;
    events: number;
    jsToNativeCalls: number;
    ops: number;
    bytesIn: number;
    bytesOut: number;
    /** Of `bytesOut`: Buffers JS had been delivered and wrote back (an echo, a proxy), sent
     * without a copy and without keeping the Buffer alive. */
    bytesOutFromReads: number;
    /** Bytes of reads delivered to `autoRelease` handlers whose Buffers were detached (emptied)
     * when the handler returned, their memory returned at once. */
    bytesReleased: number;
    channels: number;
}
/** Closes every channel of `loop` (its shutdown started). */
export declare function closeChannelsOf(loop: EventLoop): void;
export declare function channelMetrics(loop: EventLoop): ChannelMetrics | undefined;
export declare class ChannelHub {
    #private;
    readonly loop: EventLoop;
    readonly native: NativeChannels;
    /** What JS's queued writes count towards writability (see `writability.ts`). */
    readonly writability: WritabilityCounter;
    constructor(loop: EventLoop);
    /**
     * The servers of this thread that hand accepted channels to this hub's loop, by server
     * channel id (ids are unique in the process): a `NewChannel` record names its server, and
     * the entry makes the JS channel and runs the server's child initializer. A field of the
     * hub, so it lives as long as the loop: `ServerBootstrap.bind` adds the server to each of
     * its child loops' hubs when it opens it, the server's close future removes it (both on
     * this thread).
     */
    readonly servers: Map<number, ServerAcceptor>;
    /** The child initializer of this worker's module (channels handed over by another thread). */
    remoteInit: ((ch: Channel) => void) | undefined;
    /** Adds a channel the native side made (its constructor calls this). */
    addChannel(ch: Channel): void;
    /** The live channel `id` of this hub. */
    channel(id: number): Channel | undefined;
    nextContextId(): number;
    registerContext(ctx: ChannelHandlerContext): void;
    nativeAdd(ch: Channel, pos: number, base: string, ctx: ChannelHandlerContext): void;
    nativeRemove(ch: Channel, name: string): void;
    nativeReplace(ch: Channel, old: string, ctx: ChannelHandlerContext): void;
    /** An inbound event leaving JS at context `ctx` (0: the head) for the native pipeline. */
    sendInbound(ch: Channel, ctx: number, kind: PipelineEvent, arg: unknown): void;
    /** An outbound operation leaving JS at context `ctx` (0: the tail) for the native pipeline. */
    sendOutbound(ch: Channel, ctx: number, kind: PipelineEvent, msg: unknown, promise: ChannelPromise | undefined): void;
    /** Registers channel `ch` on its loop (after its initializer ran). */
    register(ch: Channel): void;
    /** A JS promise id for a native call that completes it (connect, bind, shutdownOutput). */
    promiseFor(p: ChannelPromise): number;
    /** Applies the buffered ops now (before a direct native call that must see them). */
    sync(): void;
}
export {};
