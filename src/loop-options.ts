/**
 * What an `EventLoop` is made with and reports: its options (checked here), its states and
 * metrics, and the native loop's test hooks.
 */
import type * as Native from '../native'
import { checkFunction, checkInteger, fromNative, invalidArgType } from './errors'
import type { ChannelMetrics } from './hub'
import type { EventLoop } from './loop'

/** What `EventLoop.metrics()` reports. */
export interface LoopMetrics extends ChannelMetrics {
  /** Connections the loop's server channels closed at once (over `maxConnections`, or out of fds). */
  refusedConnections: number
}

/** Lifecycle of a loop, as in Netty. */
export type EventLoopState = 'not-started' | 'started' | 'shutting-down' | 'shutdown' | 'terminated'

export interface EventLoopOptions {
  /** Diagnostics name (default `netloop-js`). */
  name?: string
  /** Percentage of an iteration given to I/O, 1..100 (default 50); tasks get the rest. */
  ioRatio?: number
  /**
   * Most tasks that may wait to run (default: unbounded): `execute` beyond it throws
   * `ERR_REJECTED_EXECUTION`. Bounds this thread's task queue and, separately, the queue of
   * tasks posted from other threads.
   */
  maxPendingTasks?: number
  /**
   * Microseconds the loop keeps polling its sockets without blocking, when it runs out of
   * work, before it hands the thread back to libuv, 0..1000 (default 0: never). Only while
   * spinning pays: after a spin that found work or a wait shorter than this, so an idle or
   * lightly loaded loop does not spin. Bounded: no iteration starts after the window.
   */
  spinBeforeSleepMicros?: number
  /**
   * Receives what tasks and timers throw (or their promises reject with) and loop failures
   * (`ERR_LOOP_FAILED`). Default: printed to stderr. The loop goes on.
   */
  onTaskError?: (error: unknown, loop: EventLoop) => void
}

/** `options` checked (ERR_INVALID_ARG_TYPE, ERR_OUT_OF_RANGE). */
export function checkOptions(options: EventLoopOptions): EventLoopOptions {
  if (options === null || typeof options !== 'object') throw invalidArgType('options', 'object', options)
  const { name, ioRatio, maxPendingTasks, spinBeforeSleepMicros, onTaskError } = options
  if (name !== undefined && typeof name !== 'string') throw invalidArgType('options.name', 'string', name)
  if (ioRatio !== undefined) checkInteger('options.ioRatio', ioRatio, 1, 100)
  if (maxPendingTasks !== undefined) checkInteger('options.maxPendingTasks', maxPendingTasks, 1, Number.MAX_SAFE_INTEGER)
  if (spinBeforeSleepMicros !== undefined) checkInteger('options.spinBeforeSleepMicros', spinBeforeSleepMicros, 0, 1000)
  if (onTaskError !== undefined) checkFunction('options.onTaskError', onTaskError)
  return { name, ioRatio, maxPendingTasks, spinBeforeSleepMicros, onTaskError }
}

/** The test hooks of the native loop (only with NETLOOP_TEST_HOOKS=1; not in its typings). */
interface NativeTestHooks {
  testHook(op: string, a: number, b: number): number
}

export function defaultTaskError(error: unknown, loop: EventLoop): void {
  console.error(`netloop: a task on loop ${loop.name} threw; the loop goes on:`, error)
}

/** Runs test hook `op` of the native loop (only with NETLOOP_TEST_HOOKS=1). */
export function testHook(loop: Native.NativeEventLoop, op: string, a: number, b: number): number {
  try {
    return (loop as unknown as NativeTestHooks).testHook(op, a, b)
  } catch (error) {
    throw fromNative(error)
  }
}
