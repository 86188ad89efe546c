/**
 * A `WebSocket`'s side facing the pipeline: the bridge handler (last in the connection's
 * pipeline) and what it and the connectors report — the connect's outcome, the handshake, the
 * frames, errors, the channel's end — turned into the socket's state and events. The ground
 * rules are `WebSocket`'s (src/ws-socket.ts): one JS thread; `close` once, when the channel is
 * inactive; the state only moves forward; no listener's exception escapes into the pipeline.
 */
import { Buffer } from 'node:buffer'
import type { Channel } from './channel'
import type { ChannelHandler } from './handlers'
import type { ChannelHandlerContext } from './context'
import { NetloopError } from './errors'
import { BinaryWebSocketFrame, CloseWebSocketFrame, PingWebSocketFrame, PongWebSocketFrame, TextWebSocketFrame } from './ws'
import { WebSocketHandshakeEvent } from './ws-client'
import { describe, toArrayBuffer } from './ws-data'
import type { WebSocket } from './ws-socket'

/** `readyState` values. */
export const CONNECTING = 0
export const OPEN = 1
export const CLOSING = 2
export const CLOSED = 3
export const STATE_NAMES = ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']

/** The last handler of a connection's pipeline: native events become the socket's. */
export function bridge(ws: WebSocket, emitOpen: boolean): ChannelHandler {
  return {
    userEventTriggered(_ctx: ChannelHandlerContext, ev: unknown) {
      if (ev instanceof WebSocketHandshakeEvent) opened(ws, ev, emitOpen)
    },
    channelRead(_ctx: ChannelHandlerContext, msg: unknown) {
      frameRead(ws, msg)
    },
    exceptionCaught(_ctx: ChannelHandlerContext, e: unknown) {
      errorCaught(ws, e)
    },
    channelInactive() {
      inactive(ws)
    },
  }
}

/** A client's TCP (and TLS) connect is under way: failures wait for its outcome. */
export function tcpPending(ws: WebSocket): void {
  ws._tcpPending = true
}

/**
 * The connect's outcome: its error wins over what the channel's end reported meanwhile (an
 * `ERR_WS_HANDSHAKE_ABORTED` for a refused connection says less).
 */
export function tcpDone(ws: WebSocket, e?: Error): void {
  if (!ws._tcpPending) return
  ws._tcpPending = false
  const failure = e ?? ws._deferred
  ws._deferred = undefined
  if (failure) fail(ws, failure)
}

/** A client connection that failed before it opened: `error`, then `close` 1006. */
export function fail(ws: WebSocket, e: Error): void {
  if (ws._state === CLOSED) return
  if (ws._tcpPending) {
    ws._deferred ??= e
    return
  }
  ws._state = CLOSED
  emitSafe(ws, 'error', e)
  emitClose(ws)
}

/** The channel (client: once connected; server: at the handshake). */
export function attach(ws: WebSocket, ch: Channel): void {
  ws._ch = ch
  if (ws._unref) ch.unref()
}

/** The handshake completed. */
export function opened(ws: WebSocket, ev: WebSocketHandshakeEvent, emit: boolean): void {
  if (ws._state !== CONNECTING) return
  ws._protocol = ev.protocol
  if (ws.url !== '') ws._extensions = ev.headers['sec-websocket-extensions'] ?? ''
  ws._state = OPEN
  if (emit) {
    emitSafe(ws, 'upgrade', ev)
    emitSafe(ws, 'open')
  }
}

/** A frame the native handler passed on. */
function frameRead(ws: WebSocket, msg: unknown): void {
  if (msg instanceof TextWebSocketFrame) emitSafe(ws, 'message', Buffer.from(msg.text), false)
  else if (msg instanceof BinaryWebSocketFrame) emitSafe(ws, 'message', ws.binaryType === 'arraybuffer' ? toArrayBuffer(msg.binary) : msg.binary, true)
  else if (msg instanceof PingWebSocketFrame) emitSafe(ws, 'ping', msg.ping)
  else if (msg instanceof PongWebSocketFrame) emitSafe(ws, 'pong', msg.pong)
  else if (msg instanceof CloseWebSocketFrame) {
    // The native side answers it and closes the channel: `close` comes with channelInactive.
    ws._closeCode = msg.code ?? 1005
    ws._closeReason = Buffer.from(msg.reason)
    if (ws._state === OPEN) ws._state = CLOSING
  }
}

/** An error in the pipeline (a protocol violation, a refused handshake, I/O). */
function errorCaught(ws: WebSocket, e: unknown): void {
  if (ws._state === CLOSED) return
  const err = e instanceof Error ? e : new NetloopError('ERR_WS_ERROR', String(e))
  if (ws._state === CONNECTING) {
    fail(ws, err)
    return
  }
  emitSafe(ws, 'error', err)
}

/** The channel went inactive. */
function inactive(ws: WebSocket): void {
  if (ws._state === CONNECTING) {
    fail(ws, new NetloopError('ERR_WS_HANDSHAKE_ABORTED', 'the connection ended before the handshake completed'))
    return
  }
  ws._state = CLOSED
  emitClose(ws)
}

function emitClose(ws: WebSocket): void {
  if (ws._closeEmitted) return
  ws._closeEmitted = true
  ws._state = CLOSED
  emitSafe(ws, 'close', ws._closeCode ?? 1006, ws._closeReason)
}

/**
 * Emits without letting a listener's exception escape into the pipeline: it becomes an
 * `error` event. An `error` with no listener, or thrown by one, is a process warning (`ws`
 * would throw it, uncaught; netloop never lets a JS exception end the process from a
 * connection).
 */
function emitSafe(ws: WebSocket, event: string, ...args: unknown[]): void {
  if (event === 'error' && ws.listenerCount('error') === 0) {
    process.emitWarning(`unhandled WebSocket error: ${describe(args[0])}`, 'NetloopWarning')
    return
  }
  try {
    ws.emit(event, ...args)
  } catch (e) {
    if (event !== 'error') emitSafe(ws, 'error', e)
    else process.emitWarning(`a WebSocket 'error' listener threw: ${describe(e)}`, 'NetloopWarning')
  }
}
