/**
 * Errors: every error the package throws or rejects with is a `NetloopError` with a stable,
 * Node-style `code`.
 */
/** An error with a stable `code` (`ERR_REJECTED_EXECUTION`, `ERR_INVALID_ARG_VALUE`, ...). */
export class NetloopError extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.name = 'NetloopError'
    this.code = code
  }
}

export function invalidArg(message: string): NetloopError {
  return new NetloopError('ERR_INVALID_ARG_VALUE', message)
}

export function checkFunction(name: string, fn: unknown): asserts fn is () => void {
  if (typeof fn !== 'function') {
    throw new NetloopError('ERR_INVALID_ARG_TYPE', `${name} must be a function, got ${typeof fn}`)
  }
}

export function checkMillis(name: string, ms: unknown): number {
  if (typeof ms !== 'number' || Number.isNaN(ms)) {
    throw invalidArg(`${name} must be a number of milliseconds, got ${String(ms)}`)
  }
  return ms
}

export function checkPeriod(name: string, ms: unknown): number {
  const v = checkMillis(name, ms)
  if (v <= 0) throw invalidArg(`${name} must be a positive number of milliseconds, got ${v}`)
  return v
}

