/**
 * The translation between the TS pipeline's events (`PipelineEvent`, src/events.ts) and the
 * boundary's wire kinds (`WireKind`, the protocol module): the hub turns records into pipeline
 * events and pipeline events into op records through these two tables (decision 0011).
 */
import type { ChannelHandlerContext } from './context'
import { EVENT_COUNT, PipelineEvent } from './events'
import { HandlerTakes, WireKind } from './protocol'

/**
 * The wire kind of each pipeline event that leaves JS for the native pipeline as a plain
 * record (reads, user events and exceptions carry payloads and are encoded by `sendInbound`).
 */
export const WIRE_OF_EVENT: ReadonlyArray<WireKind> = [
  WireKind.Registered,
  WireKind.Unregistered,
  WireKind.Active,
  WireKind.Inactive,
  WireKind.ReadBytes,
  WireKind.ReadComplete,
  WireKind.UserEvent,
  WireKind.Exception,
  WireKind.WritabilityChanged,
  WireKind.WriteBytes,
  WireKind.Flush,
  WireKind.Read,
  WireKind.Close,
]

/** The pipeline event of each inbound or outbound wire kind JS receives (the rest: 0, unused). */
export const EVENT_OF_WIRE: Uint8Array = (() => {
  const t = new Uint8Array(WireKind.PromiseDone)
  WIRE_OF_EVENT.forEach((wire, ev) => (t[wire] = ev))
  t[WireKind.ReadValue] = t[WireKind.ReadResp] = t[WireKind.ReadHttp] = t[WireKind.ReadWs] = PipelineEvent.ChannelRead
  t[WireKind.WriteValue] = PipelineEvent.Write
  return t
})()

/**
 * Which directions a JS handler has methods for (`HandlerTakes` bits): its native stand-in
 * passes the other direction on natively, as JS skips the handler (adapter.rs), and
 * `channelReadComplete` while no JS handler of the channel has it (handlers.rs).
 */
export function takes(ctx: ChannelHandlerContext): number {
  const m = ctx._methods
  let bits = 0
  for (let k = 0; k < EVENT_COUNT; k++) if (m[k] !== undefined) bits |= k < PipelineEvent.Write ? HandlerTakes.Inbound : HandlerTakes.Outbound
  if (m[PipelineEvent.ChannelReadComplete] !== undefined) bits |= HandlerTakes.ReadComplete
  if (ctx.handler?.autoRelease === true) bits |= HandlerTakes.AutoRelease
  return bits
}
