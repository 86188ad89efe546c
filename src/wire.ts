/**
 * The record layout shared with the native channel hub (crates/node/src/channel/wire.rs).
 * Checked against the native constants when the first hub is made.
 */
import { native } from './binding'

const channelWire = native.channelWire

export const enum W {
  RECORD = 6,
  REGISTERED = 1,
  UNREGISTERED = 2,
  ACTIVE = 3,
  INACTIVE = 4,
  READ_BYTES = 5,
  READ_VALUE = 6,
  READ_COMPLETE = 7,
  USER_EVENT = 8,
  EXCEPTION = 9,
  WRITABILITY = 10,
  READ_BIG = 11,
  READ_RESP = 12,
  READ_HTTP = 13,
  WRITE_BYTES = 20,
  WRITE_VALUE = 21,
  FLUSH = 22,
  READ = 23,
  CLOSE = 24,
  WRITE_BIG = 25,
  WRITE_RESP = 26,
  WRITE_HTTP = 27,
  PROMISE_DONE = 30,
  NEW_CHANNEL = 31,
  CLOSED = 32,
  RELEASE = 33,
  FORGET = 34,
  UNHANDLED = 35,
  TLS_HANDSHAKE = 36,
  COMPLETE_PROMISE = 40,
  REGISTER = 41,
}

const EXPECTED: Record<string, number> = {
  RECORD: W.RECORD,
  REGISTERED: W.REGISTERED,
  UNREGISTERED: W.UNREGISTERED,
  ACTIVE: W.ACTIVE,
  INACTIVE: W.INACTIVE,
  READ_BYTES: W.READ_BYTES,
  READ_VALUE: W.READ_VALUE,
  READ_COMPLETE: W.READ_COMPLETE,
  USER_EVENT: W.USER_EVENT,
  EXCEPTION: W.EXCEPTION,
  WRITABILITY: W.WRITABILITY,
  READ_BIG: W.READ_BIG,
  READ_RESP: W.READ_RESP,
  READ_HTTP: W.READ_HTTP,
  WRITE_BYTES: W.WRITE_BYTES,
  WRITE_VALUE: W.WRITE_VALUE,
  FLUSH: W.FLUSH,
  READ: W.READ,
  CLOSE: W.CLOSE,
  WRITE_BIG: W.WRITE_BIG,
  WRITE_RESP: W.WRITE_RESP,
  WRITE_HTTP: W.WRITE_HTTP,
  PROMISE_DONE: W.PROMISE_DONE,
  NEW_CHANNEL: W.NEW_CHANNEL,
  CLOSED: W.CLOSED,
  RELEASE: W.RELEASE,
  FORGET: W.FORGET,
  UNHANDLED: W.UNHANDLED,
  TLS_HANDSHAKE: W.TLS_HANDSHAKE,
  COMPLETE_PROMISE: W.COMPLETE_PROMISE,
  REGISTER: W.REGISTER,
}

let checked = false

/** Throws if the native addon speaks another version of the wire. */
export function checkWire(): void {
  if (checked) return
  const native = channelWire()
  const diff = Object.keys(EXPECTED).filter((k) => native[k] !== EXPECTED[k])
  if (diff.length > 0 || Object.keys(native).length !== Object.keys(EXPECTED).length) {
    throw new Error(`netloop: the native addon does not match this TypeScript build (wire constants differ: ${diff.join(', ')})`)
  }
  checked = true
}

/**
 * Promise ids on the wire: 0 is the silent void promise (a write made without a promise),
 * `VOID_FIRING` the channel's `voidPromise()` (a failure goes to `exceptionCaught`), ids > 0
 * are JS promises and ids below `VOID_FIRING` native promises lent to JS.
 */
export const VOID_FIRING = -1

/** Event records per delivery call, op records per buffer, write-arena bytes. */
export const EVENT_CAPACITY = 4096
export const OP_CAPACITY = 4096
export const ARENA_BYTES = 1 << 20
/** Writes larger than this travel as their own Buffer instead of through the arena. */
export const ARENA_MAX_WRITE = 64 * 1024
