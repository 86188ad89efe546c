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
 * record (reads, user events and exceptions carry payloads and are encoded by `sendInbound`),
 * paired by name: tsc fails on an event without its kind (`Record<PipelineEvent, ...>`), and
 * __test__/wire-layouts-events.spec.ts checks each pair against the two enums' member names.
 */
const WIRE_BY_EVENT: Readonly<Record<PipelineEvent, WireKind>> = {
  [PipelineEvent.ChannelRegistered]: WireKind.Registered,
  [PipelineEvent.ChannelUnregistered]: WireKind.Unregistered,
  [PipelineEvent.ChannelActive]: WireKind.Active,
  [PipelineEvent.ChannelInactive]: WireKind.Inactive,
  [PipelineEvent.ChannelRead]: WireKind.ReadBytes,
  [PipelineEvent.ChannelReadComplete]: WireKind.ReadComplete,
  [PipelineEvent.UserEventTriggered]: WireKind.UserEvent,
  [PipelineEvent.ExceptionCaught]: WireKind.Exception,
  [PipelineEvent.ChannelWritabilityChanged]: WireKind.WritabilityChanged,
  [PipelineEvent.Write]: WireKind.WriteBytes,
  [PipelineEvent.Flush]: WireKind.Flush,
  [PipelineEvent.Read]: WireKind.Read,
  [PipelineEvent.Close]: WireKind.Close,
}

/** `WIRE_BY_EVENT` as an array indexed by `PipelineEvent` (what the hub reads per op). */
export const WIRE_OF_EVENT: ReadonlyArray<WireKind> = Array.from({ length: EVENT_COUNT }, (_, ev) => WIRE_BY_EVENT[ev as PipelineEvent])

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
