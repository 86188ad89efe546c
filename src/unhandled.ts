/**
 * Exceptions that reached the tail of a pipeline: reported to the server channel's pipeline
 * when one of its handlers takes them, else to the unhandled-exception handler of this JS
 * thread (`ChannelPipeline.setUnhandledExceptionHandler`).
 */
import { debuglog } from 'node:util'
import type { Channel } from './channel'
import { PipelineEvent } from './events'

/** Receives exceptions that reached the tail of a pipeline. Default: printed to stderr. */
export type UnhandledExceptionHandler = (error: unknown, channel: Channel) => void

/**
 * The handler of exceptions that reach a pipeline's tail, for every channel of this JS thread,
 * as Netty logs them for every channel. The one intended process-wide setting of the JS side
 * (module state, so per thread: each worker thread has its own), kept as module state on
 * purpose: `ChannelPipeline.setUnhandledExceptionHandler` is public API and applies to every
 * loop, including loops made after it was called. Every other piece of state lives in an
 * object whose lifetime it mirrors (a loop, its hub, a channel).
 */
let unhandled: UnhandledExceptionHandler = defaultUnhandled

/**
 * Codes of a peer that went away (it reset the connection, or closed it under a write), as
 * error or as cause: routine for a server, which node:http does not print either.
 */
const PEER_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED'])

/** True if `error` (or its cause) says the peer went away (see `PEER_GONE`). */
export function isPeerGone(error: unknown): boolean {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null
  if (typeof e !== 'object' || e === null) return false
  return PEER_GONE.has(e.code as string) || (e.code === 'ERR_CHANNEL_CLOSED' && PEER_GONE.has(e.cause?.code as string))
}

const debug = debuglog('netloop')

/**
 * The default: a peer that went away is one line of `NODE_DEBUG=netloop`; anything else is
 * printed to stderr with its stack.
 */
function defaultUnhandled(error: unknown, channel: Channel): void {
  if (isPeerGone(error)) {
    debug('channel %d: the peer went away (%s)', channel.id, (error as { code?: string }).code)
    return
  }
  console.error(`netloop: an exception reached the tail of the pipeline of channel ${channel.id} (add an exceptionCaught handler):`, error)
}

/** Replaces the handler of exceptions that reach a pipeline's tail (see `unhandled`); `undefined` puts the default back. */
export function setUnhandled(handler: UnhandledExceptionHandler | undefined): void {
  unhandled = handler ?? defaultUnhandled
}

/** True if a JS handler of `ch`'s pipeline has `exceptionCaught`. */
function takesExceptions(ch: Channel): boolean {
  const p = ch.pipeline
  for (let c = p._head._next; c && c !== p._tail; c = c._next) if (c._methods[PipelineEvent.ExceptionCaught] !== undefined) return true
  return false
}

/**
 * An exception nobody handled on channel `ch`. One of an accepted channel that is closed (its
 * handlers are gone) goes to its server channel's pipeline when a handler there takes
 * exceptions (`ServerBootstrap.handler`).
 */
export function reportUnhandled(ch: Channel, arg: unknown): void {
  const parent = ch.parent
  if (parent !== undefined && parent._known && takesExceptions(parent) && (!ch._known || !ch.isOpen)) {
    if (typeof arg === 'object' && arg !== null && Object.isExtensible(arg) && (arg as { channelId?: unknown }).channelId === undefined) {
      ;(arg as { channelId?: number }).channelId = ch.id
    }
    parent.pipeline.fireExceptionCaught(arg)
    return
  }
  try {
    unhandled(arg, ch)
  } catch (e) {
    console.error('netloop: the unhandled-exception handler threw:', e)
  }
}
