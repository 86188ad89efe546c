import { constants as osConstants } from 'node:os'

/**
 * Errors: every error the package throws or rejects with is a `NetloopError` with a stable,
 * Node-style `code` and, for argument errors, Node's message style.
 */
/**
 * An error with a stable `code`:
 * - `ERR_INVALID_ARG_TYPE`: an argument of the wrong type;
 * - `ERR_OUT_OF_RANGE`: a number out of its range (non-finite delays, periods under 1 µs,
 *   a quiet period longer than the shutdown timeout, a loop count over 4096);
 * - `ERR_INVALID_ARG_VALUE`: any other bad argument;
 * - `ERR_REJECTED_EXECUTION`: a task or timer submitted to a loop that is shutting down (timers)
 *   or shut down (tasks), or beyond `maxPendingTasks`;
 * - `ERR_LOOP_FAILED`: the loop failed and terminated (reported through `onTaskError`).
 */
export class NetloopError extends Error {
  readonly code: string
  /** For a system error: Node's (negative) error number, e.g. -111 for `ECONNREFUSED`. */
  errno?: number
  /** For a socket or DNS error: the failed call (`connect`, `bind`, `getaddrinfo`). */
  syscall?: string
  /** For a connect or bind error: the address and port, as in node:net's errors. */
  address?: string
  port?: number
  /** For a DNS error: the host name that did not resolve. */
  hostname?: string
  /** For an error of a channel: its id. */
  channelId?: number
  constructor(code: string, message: string) {
    super(message)
    this.name = 'NetloopError'
    this.code = code
  }
}

/** Node's error number of a system error code (negative, as libuv's), if it is one. */
function errnoOf(code: string): number | undefined {
  const n = (osConstants.errno as Record<string, number | undefined>)[code]
  return n === undefined ? undefined : -n
}

/**
 * A failed `connect` or `bind` as node:net reports it: `connect ECONNREFUSED 127.0.0.1:7000`,
 * with `errno`, `syscall`, `address` and `port`.
 */
export function socketError(error: unknown, syscall: 'connect' | 'bind', address: string, port: number): NetloopError {
  const e = fromNative(error)
  if (e.syscall !== undefined) return e
  e.syscall = syscall
  e.address = address
  e.port = port
  e.errno ??= errnoOf(e.code)
  if (e.errno !== undefined) e.message = `${syscall} ${e.code} ${address}:${port}`
  return e
}

/** A DNS failure (node:dns's error: `ENOTFOUND`, ...) as a `NetloopError` with the same fields. */
export function dnsError(error: unknown, hostname: string): NetloopError {
  const d = error as { code?: unknown; errno?: unknown; syscall?: unknown; message?: unknown }
  const code = typeof d?.code === 'string' ? d.code : 'ENOTFOUND'
  const e = new NetloopError(code, typeof d?.message === 'string' ? d.message : `getaddrinfo ${code} ${hostname}`)
  if (typeof d?.errno === 'number') e.errno = d.errno
  e.syscall = typeof d?.syscall === 'string' ? d.syscall : 'getaddrinfo'
  e.hostname = hostname
  return e
}

/** How Node describes a received value in its argument errors. */
function received(value: unknown): string {
  if (value === null || value === undefined) return `Received ${value}`
  if (typeof value === 'function') return `Received function ${value.name || '<anonymous>'}`
  if (typeof value === 'object') {
    const name = (value as object).constructor?.name
    return name ? `Received an instance of ${name}` : 'Received [object]'
  }
  let shown = typeof value === 'string' ? `'${value}'` : String(value)
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`
  return typeof value === 'number' || typeof value === 'bigint' ? `Received ${shown}` : `Received type ${typeof value} (${shown})`
}

export function invalidArg(message: string): NetloopError {
  return new NetloopError('ERR_INVALID_ARG_VALUE', message)
}

export function invalidArgType(name: string, expected: string, value: unknown): NetloopError {
  return new NetloopError('ERR_INVALID_ARG_TYPE', `The "${name}" argument must be of type ${expected}. ${received(value)}`)
}

export function outOfRange(name: string, rule: string, value: unknown): NetloopError {
  return new NetloopError('ERR_OUT_OF_RANGE', `The value of "${name}" is out of range. It must be ${rule}. ${received(value)}`)
}

export function rejected(message: string): NetloopError {
  return new NetloopError('ERR_REJECTED_EXECUTION', message)
}

/** A native error (which carries a `code`) as a `NetloopError`. */
export function fromNative(error: unknown): NetloopError {
  if (error instanceof NetloopError) return error
  const e = error as { code?: unknown; message?: unknown }
  const code = typeof e?.code === 'string' && /^E[A-Z_]+$/.test(e.code) ? e.code : 'ERR_INVALID_ARG_VALUE'
  const out = new NetloopError(code, String(e?.message ?? error))
  const errno = errnoOf(code)
  if (errno !== undefined) out.errno = errno
  return out
}

export function checkFunction(name: string, fn: unknown): asserts fn is (...args: never[]) => unknown {
  if (typeof fn !== 'function') throw invalidArgType(name, 'function', fn)
}

export function checkNumber(name: string, v: unknown): asserts v is number {
  if (typeof v !== 'number') throw invalidArgType(name, 'number', v)
}

/** A delay in ms: a finite number; negatives are due now. */
export function checkDelay(name: string, v: unknown): number {
  checkNumber(name, v)
  if (!Number.isFinite(v)) throw outOfRange(name, 'a finite number', v)
  return v
}

/** A duration in ms that must not be negative (shutdown quiet period and timeout). */
export function checkDuration(name: string, v: unknown): number {
  checkNumber(name, v)
  if (!Number.isFinite(v) || v < 0) throw outOfRange(name, 'a finite number >= 0', v)
  return v
}

/** Shortest period of a periodic task: 1 µs. */
export const MIN_PERIOD_MS = 0.001

/** A period in ms: finite and at least 1 µs. */
export function checkPeriod(name: string, v: unknown): number {
  checkNumber(name, v)
  if (!Number.isFinite(v) || v < MIN_PERIOD_MS) throw outOfRange(name, `a finite number >= ${MIN_PERIOD_MS}`, v)
  return v
}

/** A boolean. */
export function checkBoolean(name: string, v: unknown): asserts v is boolean {
  if (typeof v !== 'boolean') throw invalidArgType(name, 'boolean', v)
}

/** An integer in `min..max`. */
export function checkInteger(name: string, v: unknown, min: number, max: number): number {
  checkNumber(name, v)
  if (!Number.isInteger(v) || v < min || v > max) throw outOfRange(name, `an integer >= ${min} and <= ${max}`, v)
  return v
}
