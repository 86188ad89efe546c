import { Channel } from './channel';
/** Options of `publish`. */
export interface PublishOptions {
    /** Send as a binary message (default: false for a string, true for bytes). */
    binary?: boolean;
}
/** The process-wide topic counters (see `topicStats`). */
export interface TopicStats {
    /** `publish` calls (any thread). */
    published: number;
    /** Frames encoded: one per publish that found a subscriber, however many it reached. */
    encoded: number;
    /** Frames written to subscribers. */
    delivered: number;
    /** Messages a subscriber did not get because it was not writable (a slow reader). */
    dropped: number;
}
/**
 * Subscribes `channel` to `topic` (nothing happens if it is already). The channel must be a
 * WebSocket connection: its pipeline has a `WebSocketServerProtocolHandler` (before or after
 * the handshake; messages reach it once upgraded). Otherwise throws a `NetloopError` with
 * code `ERR_INVALID_STATE`; a closed channel throws `ERR_CHANNEL_CLOSED`.
 */
export declare function subscribe(channel: Channel, topic: string): void;
/** Takes `channel` out of `topic`; whether it was subscribed. */
export declare function unsubscribe(channel: Channel, topic: string): boolean;
/**
 * Sends `message` to every subscriber of `topic` on every loop of the process, from any
 * thread (a worker's, or one without a loop). A string is a text message and bytes a binary
 * one, unless `options.binary` says otherwise (text given as bytes must be UTF-8).
 *
 * Returns the subscribers the message went to: those written now on this thread's loops
 * (slow ones that dropped it not counted) plus the subscribers of other loops as counted at
 * the call (each of those loops gets one task that writes it; a slow subscriber there drops
 * it too). 0 when the topic has no subscriber.
 */
export declare function publish(topic: string, message: string | Uint8Array, options?: PublishOptions): number;
/** Subscribers of `topic` on every loop of the process. */
export declare function subscriberCount(topic: string): number;
/** The process-wide topic counters (every thread's publishes). */
export declare function topicStats(): TopicStats;
