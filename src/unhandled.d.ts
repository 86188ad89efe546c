import type { Channel } from './channel';
/** Receives exceptions that reached the tail of a pipeline. Default: printed to stderr. */
export type UnhandledExceptionHandler = (error: unknown, channel: Channel) => void;
/** True if `error` (or its cause) says the peer went away (see `PEER_GONE`). */
export declare function isPeerGone(error: unknown): boolean;
/** Replaces the handler of exceptions that reach a pipeline's tail (see `unhandled`); `undefined` puts the default back. */
export declare function setUnhandled(handler: UnhandledExceptionHandler | undefined): void;
/**
 * An exception nobody handled on channel `ch`. One of an accepted channel that is closed (its
 * handlers are gone) goes to its server channel's pipeline when a handler there takes
 * exceptions (`ServerBootstrap.handler`).
 */
export declare function reportUnhandled(ch: Channel, arg: unknown): void;
