/**
 * The WHATWG form of a `WebSocket`'s events (as `ws` and browsers give them):
 * `addEventListener('message', (ev) => ev.data)` and the `onmessage`-style properties, made
 * of the EventEmitter events. Text messages come as strings, binary ones as Buffers or
 * ArrayBuffers by `binaryType`; `close` as `{ code, reason (string), wasClean }`; `error` as
 * `{ error, message }`.
 *
 * Ground rules: one wrapper per (type, listener) pair, found again by `removeEventListener`;
 * the wrappers live in a WeakMap keyed by the socket.
 */
import type { EventEmitter } from 'node:events';
/** A WHATWG-style listener (a function, or an object with `handleEvent`). */
export type WhatwgListener = ((ev: WhatwgEvent) => unknown) | {
    handleEvent(ev: WhatwgEvent): unknown;
};
/** The event a WHATWG-style listener gets. */
export interface WhatwgEvent {
    readonly type: string;
    readonly target: unknown;
    readonly data?: unknown;
    readonly code?: number;
    readonly reason?: string;
    readonly wasClean?: boolean;
    readonly error?: unknown;
    readonly message?: string;
}
/** Adds `listener` for `type` (`open`, `message`, `close`, `error`); others are ignored, as in `ws`. */
export declare function addWhatwgListener(target: EventEmitter, type: string, listener: WhatwgListener, once: boolean): void;
/** Removes what `addWhatwgListener` added. */
export declare function removeWhatwgListener(target: EventEmitter, type: string, listener: WhatwgListener): void;
/** Defines `onopen`, `onmessage`, `onclose`, `onerror` on `proto` (a setter replaces the listener it set before). */
export declare function defineHandlerProperties(proto: EventEmitter): void;
