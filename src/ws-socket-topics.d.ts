import { type WebSocketData } from './ws-data';
import { type PublishOptions } from './ws-topics';
/** The topic methods of a server-side `WebSocket`. */
export interface WebSocketTopics {
    /**
     * Joins `topic` (idempotent; messages published to it are written natively). Throws
     * `ERR_INVALID_STATE` on a client's connection or before the channel exists,
     * `ERR_CHANNEL_CLOSED` once closed.
     */
    subscribe(topic: string): void;
    /** Leaves `topic`; whether this connection was in it. */
    unsubscribe(topic: string): boolean;
    /** Whether this connection is in `topic` (false once closed: closing leaves every topic). */
    isSubscribed(topic: string): boolean;
    /** The topics this connection is in. */
    readonly subscriptions: string[];
    /**
     * Sends `data` to every subscriber of `topic` but this connection (as Bun's and
     * uWebSockets.js' `ws.publish`; `WebSocketServer.publish` reaches all). A string is text,
     * other data binary unless `options.binary` says otherwise. Returns the subscribers reached.
     */
    publish(topic: string, data: WebSocketData, options?: PublishOptions): number;
}
/** Defines the methods of `WebSocketTopics` on `proto`. */
export declare function defineTopicMethods(proto: object): void;
