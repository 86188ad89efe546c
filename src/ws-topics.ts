/**
 * WebSocket topics (publish/subscribe, as Bun's `ws.subscribe`/`server.publish` and
 * uWebSockets.js'): a WebSocket channel subscribes to named topics; `publish` encodes the
 * message into a frame once, natively, and writes that same frame to every subscriber on
 * every loop of the process — the loops of every worker thread of a worker group included.
 * Messages never pass through JS per subscriber.
 *
 * ```ts
 * channelRead(ctx, msg: TextWebSocketFrame) {
 *   subscribe(ctx.channel, 'lobby')      // idempotent
 *   publish('lobby', msg.text)           // every subscriber, on every worker
 * }
 * ```
 *
 * Ground rules:
 * - One namespace per process (the native registry is process-wide, shared by every
 *   thread): prefix topic names to keep applications apart.
 * - A closed channel leaves every topic by itself.
 * - A subscriber whose channel is not writable (past its high water mark) does not get the
 *   message: it is dropped for that subscriber and counted (`topicStats().dropped`), so a
 *   slow reader holds at most its high water mark plus one message.
 * - Order: what JS wrote before a `publish` (buffered until the handler returns) is applied
 *   first for the subscribers of this thread, so a channel sees its own writes and published
 *   messages in the order JS made them. Subscribers on other loops get the message through
 *   one task per loop, in publish order per publishing thread.
 *
 * The native side: crates/ws/src/topics.rs (the registry), crates/node/src/channel/topics.rs.
 */
// Imported, not the global: in Node the global `Buffer` is a getter, called on each use.
import { Buffer } from 'node:buffer'
import { native } from './binding'
import { Channel } from './channel'
import type { ChannelHub } from './hub'
import { fromNative, invalidArgType } from './errors'
import { TopicStatSlot, WsFrameKind } from './protocol'

const nativePublish = native.wsPublish
const nativePublishText = native.wsPublishText
const nativeCount = native.wsSubscriberCount

/** Options of `publish`. */
export interface PublishOptions {
  /** Send as a binary message (default: false for a string, true for bytes). */
  binary?: boolean
}

/** The process-wide topic counters (see `topicStats`). */
export interface TopicStats {
  /** `publish` calls (any thread). */
  published: number
  /** Frames encoded: one per publish that found a subscriber, however many it reached. */
  encoded: number
  /** Frames written to subscribers. */
  delivered: number
  /** Messages a subscriber did not get because it was not writable (a slow reader). */
  dropped: number
}

/** Hubs of this thread with subscribed channels: their buffered ops go before a publish. */
const hubs = new Set<ChannelHub>()

function syncHubs(): void {
  for (const hub of hubs) {
    if (hub.loop.state === 'terminated') hubs.delete(hub)
    else hub.sync()
  }
}

function checkChannel(channel: unknown): asserts channel is Channel {
  if (!(channel instanceof Channel)) throw invalidArgType('channel', 'a Channel', channel)
}

function checkTopic(topic: unknown): asserts topic is string {
  if (typeof topic !== 'string') throw invalidArgType('topic', 'string', topic)
}

/**
 * Subscribes `channel` to `topic` (nothing happens if it is already). The channel must be a
 * WebSocket connection: its pipeline has a `WebSocketServerProtocolHandler` (before or after
 * the handshake; messages reach it once upgraded). Otherwise throws a `NetloopError` with
 * code `ERR_INVALID_STATE`; a closed channel throws `ERR_CHANNEL_CLOSED`.
 */
export function subscribe(channel: Channel, topic: string): void {
  checkChannel(channel)
  checkTopic(topic)
  const hub = channel._hub
  hub.sync()
  try {
    hub.native.wsSubscribe(channel.id, topic)
  } catch (e) {
    throw fromNative(e)
  }
  hubs.add(hub)
}

/** Takes `channel` out of `topic`; whether it was subscribed. */
export function unsubscribe(channel: Channel, topic: string): boolean {
  checkChannel(channel)
  checkTopic(topic)
  const hub = channel._hub
  hub.sync()
  return hub.native.wsUnsubscribe(channel.id, topic)
}

/**
 * Sends `message` to every subscriber of `topic` on every loop of the process, from any
 * thread (a worker's, or one without a loop). A string is a text message and bytes a binary
 * one, unless `options.binary` says otherwise (text given as bytes must be UTF-8).
 *
 * Returns the subscribers the message went to: those written now on this thread's loops
 * (slow ones that dropped it not counted) plus the subscribers of other loops as counted at
 * the call (each of those loops gets one task that writes it; a slow subscriber there drops
 * it too). 0 when the topic has no subscriber.
 */
export function publish(topic: string, message: string | Uint8Array, options?: PublishOptions): number {
  checkTopic(topic)
  const binary = options?.binary
  if (binary !== undefined && typeof binary !== 'boolean') throw invalidArgType('options.binary', 'boolean', binary)
  syncHubs()
  if (typeof message === 'string') {
    if (binary !== true) return nativePublishText(topic, message)
    return nativePublish(topic, Buffer.from(message), WsFrameKind.Binary)
  }
  if (!(message instanceof Uint8Array)) throw invalidArgType('message', 'a string, a Buffer or a Uint8Array', message)
  const buf = Buffer.isBuffer(message) ? message : Buffer.from(message.buffer, message.byteOffset, message.byteLength)
  try {
    return nativePublish(topic, buf, binary === false ? WsFrameKind.Text : WsFrameKind.Binary)
  } catch (e) {
    throw fromNative(e)
  }
}

/**
 * @internal `publish` from `channel`: every subscriber but `channel` gets the message (the
 * `ws` surface's `ws.publish`, as Bun's and uWebSockets.js').
 */
export function publishFrom(channel: Channel, topic: string, message: string | Uint8Array, options?: PublishOptions): number {
  checkTopic(topic)
  const binary = options?.binary
  if (binary !== undefined && typeof binary !== 'boolean') throw invalidArgType('options.binary', 'boolean', binary)
  if (typeof message !== 'string' && !(message instanceof Uint8Array)) throw invalidArgType('message', 'a string, a Buffer or a Uint8Array', message)
  syncHubs()
  const kind = (binary ?? typeof message !== 'string') ? WsFrameKind.Binary : WsFrameKind.Text
  const buf = typeof message === 'string' ? Buffer.from(message) : Buffer.isBuffer(message) ? message : Buffer.from(message.buffer, message.byteOffset, message.byteLength)
  try {
    return channel._hub.native.wsPublishFrom(channel.id, topic, buf, kind)
  } catch (e) {
    throw fromNative(e)
  }
}

/** Subscribers of `topic` on every loop of the process. */
export function subscriberCount(topic: string): number {
  checkTopic(topic)
  return nativeCount(topic)
}

/** The process-wide topic counters (every thread's publishes). */
export function topicStats(): TopicStats {
  const s = native.wsTopicStats()
  return {
    published: s[TopicStatSlot.Published],
    encoded: s[TopicStatSlot.Encoded],
    delivered: s[TopicStatSlot.Delivered],
    dropped: s[TopicStatSlot.Dropped],
  }
}
