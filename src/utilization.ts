/**
 * Event-loop utilization readings, as `performance.eventLoopUtilization()` gives them: what
 * `EventLoop.utilization()` and `EventLoopGroup.utilization()` return.
 */

/**
 * What `EventLoop.utilization()` reports, as `performance.eventLoopUtilization()`: ms the
 * loop's iterations took on its thread (`active`), ms of the rest (`idle`), and
 * `active / (idle + active)`.
 */
export interface LoopUtilization {
  idle: number
  active: number
  utilization: number
}

/** @internal The reading of `idle` and `active` ms (negative figures, off by clock skew, read as 0). */
export function reading(idle: number, active: number): LoopUtilization {
  const i = Math.max(0, idle)
  const a = Math.max(0, active)
  const total = i + a
  return { idle: i, active: a, utilization: total > 0 ? a / total : 0 }
}

/** @internal What happened between two readings (`earlier` omitted: since the start). */
export function since(later: { idle: number; active: number }, earlier?: LoopUtilization): LoopUtilization {
  return earlier === undefined ? reading(later.idle, later.active) : reading(later.idle - earlier.idle, later.active - earlier.active)
}
