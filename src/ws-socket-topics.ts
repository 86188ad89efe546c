/**
 * Topics on the `ws`-compatible `WebSocket` (src/ws-socket.ts) with the names Bun and
 * uWebSockets.js users know, which `WebSocket` declares and delegates here: `subscribe`, `unsubscribe`,
 * `isSubscribed`, `subscriptions` and `publish` (to every subscriber but this connection).
 * They delegate to src/ws-topics.ts (the native registry); the topics a socket joined are
 * also kept here, so `isSubscribed` needs no crossing. Closing leaves every topic natively,
 * and a closed socket reports none.
 *
 * Ground rules: the socket's JS thread, as every `WebSocket` method.
 */
import type { Channel } from './channel'
import { NetloopError } from './errors'
import { toBuffer, type WebSocketData } from './ws-data'
import { publishFrom, subscribe, unsubscribe, type PublishOptions } from './ws-topics'
import { CLOSED } from './ws-socket-lifecycle'

interface Socket {
  readonly channel: Channel | undefined
  readonly readyState: number
  /** The topics this connection joined, kept so `isSubscribed` needs no crossing. */
  _topics: Set<string> | undefined
}

function channelOf(ws: Socket): Channel {
  const ch = ws.channel
  if (ch === undefined) throw new NetloopError('ERR_INVALID_STATE', 'the WebSocket has no channel yet')
  return ch
}

function topicsOf(ws: Socket): Set<string> | undefined {
  return ws.readyState === CLOSED ? undefined : ws._topics
}

/** `ws.subscribe(topic)`. */
export function joinTopic(ws: Socket, topic: string): void {
  subscribe(channelOf(ws), topic)
  ;(ws._topics ??= new Set()).add(topic)
}

/** `ws.unsubscribe(topic)`. */
export function leaveTopic(ws: Socket, topic: string): boolean {
  ws._topics?.delete(topic)
  const ch = ws.channel
  return ch !== undefined && unsubscribe(ch, topic)
}

/** `ws.isSubscribed(topic)`. */
export function isInTopic(ws: Socket, topic: string): boolean {
  return topicsOf(ws)?.has(topic) ?? false
}

/** `ws.subscriptions`. */
export function topicsJoined(ws: Socket): string[] {
  return [...(topicsOf(ws) ?? [])]
}

/** `ws.publish(topic, data, options)`. */
export function publishToOthers(ws: Socket, topic: string, data: WebSocketData, options?: PublishOptions): number {
  const message = typeof data === 'string' ? data : toBuffer(data)
  return publishFrom(channelOf(ws), topic, message, options)
}
