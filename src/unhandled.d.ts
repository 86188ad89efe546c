/**
 * Exceptions that reached the tail of a pipeline: reported to the server channel's pipeline
 * when one of its handlers takes them, else to the unhandled-exception handler of this JS
 * thread (`ChannelPipeline.setUnhandledExceptionHandler`).
 */
import type { Channel } from './channel';
/** Receives exceptions that reached the tail of a pipeline. Default: printed to stderr. */
export type UnhandledExceptionHandler = (error: unknown, channel: Channel) => void;
/** Replaces the handler of exceptions that reach a pipeline's tail (see `unhandled`). */
export declare function setUnhandled(handler: UnhandledExceptionHandler): void;
/**
 * An exception nobody handled on channel `ch`. One of an accepted channel that is closed (its
 * handlers are gone) goes to its server channel's pipeline when a handler there takes
 * exceptions (`ServerBootstrap.handler`).
 */
export declare function reportUnhandled(ch: Channel, arg: unknown): void;
