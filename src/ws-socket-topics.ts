/**
 * Topics on the `ws`-compatible `WebSocket` (src/ws-socket.ts) with the names Bun and
 * uWebSockets.js users know, defined on its prototype: `subscribe`, `unsubscribe`,
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

/** The topic methods of a server-side `WebSocket`. */
export interface WebSocketTopics {
  /**
   * Joins `topic` (idempotent; messages published to it are written natively). Throws
   * `ERR_INVALID_STATE` on a client's connection or before the channel exists,
   * `ERR_CHANNEL_CLOSED` once closed.
   */
  subscribe(topic: string): void
  /** Leaves `topic`; whether this connection was in it. */
  unsubscribe(topic: string): boolean
  /** Whether this connection is in `topic` (false once closed: closing leaves every topic). */
  isSubscribed(topic: string): boolean
  /** The topics this connection is in. */
  readonly subscriptions: string[]
  /**
   * Sends `data` to every subscriber of `topic` but this connection (as Bun's and
   * uWebSockets.js' `ws.publish`; `WebSocketServer.publish` reaches all). A string is text,
   * other data binary unless `options.binary` says otherwise. Returns the subscribers reached.
   */
  publish(topic: string, data: WebSocketData, options?: PublishOptions): number
}

interface Socket {
  readonly channel: Channel | undefined
  readonly readyState: number
}

const CLOSED = 3
const joined = new WeakMap<Socket, Set<string>>()

function channelOf(ws: Socket): Channel {
  const ch = ws.channel
  if (ch === undefined) throw new NetloopError('ERR_INVALID_STATE', 'the WebSocket has no channel yet')
  return ch
}

function topicsOf(ws: Socket): Set<string> | undefined {
  return ws.readyState === CLOSED ? undefined : joined.get(ws)
}

/** Defines the methods of `WebSocketTopics` on `proto`. */
export function defineTopicMethods(proto: object): void {
  const methods: Omit<WebSocketTopics, 'subscriptions'> & ThisType<Socket> = {
    subscribe(topic) {
      subscribe(channelOf(this), topic)
      let mine = joined.get(this)
      if (!mine) joined.set(this, (mine = new Set()))
      mine.add(topic)
    },
    unsubscribe(topic) {
      joined.get(this)?.delete(topic)
      const ch = this.channel
      return ch !== undefined && unsubscribe(ch, topic)
    },
    isSubscribed(topic) {
      return topicsOf(this)?.has(topic) ?? false
    },
    publish(topic, data, options) {
      const message = typeof data === 'string' ? data : toBuffer(data)
      return publishFrom(channelOf(this), topic, message, options)
    },
  }
  for (const [name, fn] of Object.entries(methods)) {
    Object.defineProperty(proto, name, { configurable: true, writable: true, enumerable: false, value: fn })
  }
  Object.defineProperty(proto, 'subscriptions', {
    configurable: true,
    enumerable: false,
    get(this: Socket): string[] {
      return [...(topicsOf(this) ?? [])]
    },
  })
}
