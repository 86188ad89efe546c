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
import type { EventEmitter } from 'node:events'

/** A WHATWG-style listener (a function, or an object with `handleEvent`). */
export type WhatwgListener = ((ev: WhatwgEvent) => unknown) | { handleEvent(ev: WhatwgEvent): unknown }

/** The event a WHATWG-style listener gets. */
export interface WhatwgEvent {
  readonly type: string
  readonly target: unknown
  readonly data?: unknown
  readonly code?: number
  readonly reason?: string
  readonly wasClean?: boolean
  readonly error?: unknown
  readonly message?: string
}

type Wrapper = (...args: unknown[]) => void

const wrappers = new WeakMap<object, Map<string, Map<WhatwgListener, Wrapper>>>()

function eventOf(target: { binaryType?: string }, type: string, args: unknown[]): WhatwgEvent {
  switch (type) {
    case 'message': {
      const [data, isBinary] = args as [Buffer | ArrayBuffer, boolean]
      return { type, target, data: isBinary ? data : (data as Buffer).toString() }
    }
    case 'close': {
      const [code, reason] = args as [number, Buffer]
      return { type, target, code, reason: reason.toString(), wasClean: code !== 1006 }
    }
    case 'error': {
      const error = args[0]
      return { type, target, error, message: error instanceof Error ? error.message : String(error) }
    }
    default:
      return { type, target }
  }
}

/** Adds `listener` for `type` (`open`, `message`, `close`, `error`); others are ignored, as in `ws`. */
export function addWhatwgListener(target: EventEmitter, type: string, listener: WhatwgListener, once: boolean): void {
  if (!['open', 'message', 'close', 'error'].includes(type)) return
  if (typeof listener !== 'function' && typeof (listener as { handleEvent?: unknown })?.handleEvent !== 'function') return
  let byType = wrappers.get(target)
  if (!byType) wrappers.set(target, (byType = new Map()))
  let byListener = byType.get(type)
  if (!byListener) byType.set(type, (byListener = new Map()))
  if (byListener.has(listener)) return
  const wrapper: Wrapper = (...args) => {
    if (once) removeWhatwgListener(target, type, listener)
    const ev = eventOf(target as { binaryType?: string }, type, args)
    if (typeof listener === 'function') listener.call(target, ev)
    else listener.handleEvent(ev)
  }
  byListener.set(listener, wrapper)
  target.on(type, wrapper)
}

/** Removes what `addWhatwgListener` added. */
export function removeWhatwgListener(target: EventEmitter, type: string, listener: WhatwgListener): void {
  const byListener = wrappers.get(target)?.get(type)
  const wrapper = byListener?.get(listener)
  if (!wrapper) return
  byListener!.delete(listener)
  target.off(type, wrapper)
}

/** The state of `onopen`-style properties: the listener each one set, per socket. */
const properties = new WeakMap<object, Map<string, WhatwgListener>>()

/** The listener `on<type>` holds (`onopen`, `onmessage`, `onclose`, `onerror`), or null. */
export function handlerProperty(target: EventEmitter, type: string): WhatwgListener | null {
  return properties.get(target)?.get(type) ?? null
}

/** Sets `on<type>`: replaces the listener it set before; a non-function clears it. */
export function setHandlerProperty(target: EventEmitter, type: string, fn: WhatwgListener | null): void {
  let mine = properties.get(target)
  if (!mine) properties.set(target, (mine = new Map()))
  const old = mine.get(type)
  if (old) removeWhatwgListener(target, type, old)
  mine.delete(type)
  if (typeof fn === 'function') {
    mine.set(type, fn)
    addWhatwgListener(target, type, fn, false)
  }
}
