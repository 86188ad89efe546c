/**
 * What a `WebSocket` sends (src/ws-socket.ts): messages (whole, or fragments gathered until
 * the last), pings and pongs, the close handshake, and `terminate`. `ws`'s rules: sending
 * before the connection is open throws, sending once it is closing fails the callback.
 */
import { Buffer } from 'node:buffer'
import { NetloopError } from './errors'
import { BinaryWebSocketFrame, CloseWebSocketFrame, PingWebSocketFrame, PongWebSocketFrame, TextWebSocketFrame } from './ws'
import { type Callback, type SendOptions, type WebSocketData, isSendableCode, toBuffer } from './ws-data'
import { CLOSED, CLOSING, CONNECTING, OPEN, STATE_NAMES, fail } from './ws-socket-lifecycle'
import type { WebSocket } from './ws-socket'

/** `WebSocket.send` with its arguments sorted out. */
export function sendMessage(ws: WebSocket, data: WebSocketData, o: SendOptions, cb: Callback | undefined): void {
  if (ws._state === CONNECTING) throw new NetloopError('ERR_INVALID_STATE', 'WebSocket is not open: readyState 0 (CONNECTING)')
  const binary = o.binary ?? typeof data !== 'string'
  if (ws._state !== OPEN) return afterClose(ws, data, cb)
  if (o.fin === false || ws._fragments.length > 0) {
    if (ws._fragments.length === 0) ws._fragmentsBinary = binary
    ws._fragments.push(Buffer.from(toBuffer(data)))
    if (o.fin === false) {
      if (cb) process.nextTick(cb)
      return
    }
    const whole = Buffer.concat(ws._fragments)
    ws._fragments = []
    return write(ws, ws._fragmentsBinary ? new BinaryWebSocketFrame(whole) : new TextWebSocketFrame(whole.toString()), cb)
  }
  const frame = binary ? new BinaryWebSocketFrame(toBuffer(data)) : new TextWebSocketFrame(typeof data === 'string' ? data : toBuffer(data).toString())
  write(ws, frame, cb)
}

/** A ping or a pong (at most 125 bytes), made by `make`. */
export function sendControl(ws: WebSocket, data: WebSocketData | undefined, cb: Callback | undefined, make: (b: Buffer) => PingWebSocketFrame | PongWebSocketFrame): void {
  if (ws._state === CONNECTING) throw new NetloopError('ERR_INVALID_STATE', 'WebSocket is not open: readyState 0 (CONNECTING)')
  const b = data === undefined ? Buffer.alloc(0) : toBuffer(data)
  if (b.length > 125) throw new NetloopError('ERR_OUT_OF_RANGE', 'the data size must not be greater than 125 bytes')
  if (ws._state !== OPEN) return afterClose(ws, b, cb)
  write(ws, make(b), cb)
}

/** `WebSocket.close`: the close handshake, or aborting a connection still being made. */
export function startClose(ws: WebSocket, code: number | undefined, reason: string | Buffer | undefined): void {
  if (ws._state === CLOSED) return
  if (ws._state === CONNECTING) {
    abortConnecting(ws, 'WebSocket was closed before the connection was established')
    return
  }
  if (code !== undefined && (typeof code !== 'number' || !isSendableCode(code))) {
    throw new NetloopError('ERR_OUT_OF_RANGE', `invalid close code: ${String(code)}`)
  }
  const why = reason === undefined ? '' : Buffer.isBuffer(reason) ? reason.toString() : String(reason)
  if (Buffer.byteLength(why) > 123) throw new NetloopError('ERR_OUT_OF_RANGE', 'the close reason must not exceed 123 bytes')
  if (ws._state === CLOSING) return
  ws._state = CLOSING
  ws._ch?.writeAndFlush(new CloseWebSocketFrame(code, code === undefined ? '' : why))
}

/** `WebSocket.terminate`: the end at once, without a close frame. */
export function terminateSocket(ws: WebSocket): void {
  if (ws._state === CLOSED) return
  if (ws._state === CONNECTING) {
    abortConnecting(ws, 'WebSocket was closed before the connection was established')
    return
  }
  ws._state = CLOSING
  const ch = ws._ch
  if (ch === undefined) return
  // The native WebSocket handler would send a close frame: take it out first.
  try {
    ch.pipeline.removeIfExists(ws._wsName)
  } catch {
    // already gone with the channel
  }
  void ch.close()
}

function write(ws: WebSocket, frame: TextWebSocketFrame | BinaryWebSocketFrame | PingWebSocketFrame | PongWebSocketFrame, cb: Callback | undefined): void {
  const ch = ws._ch!
  if (cb === undefined) {
    ch.writeAndFlush(frame)
    return
  }
  ch.writeAndFlush(frame, ch.newPromise()).addListener((e) => cb(e ?? undefined))
}

/** `ws`'s rule: data sent once closing fails the callback, nothing is thrown. */
function afterClose(ws: WebSocket, _data: unknown, cb: Callback | undefined): void {
  if (cb) {
    const e = new NetloopError('ERR_INVALID_STATE', `WebSocket is not open: readyState ${ws._state} (${STATE_NAMES[ws._state]})`)
    process.nextTick(cb, e)
  }
}

function abortConnecting(ws: WebSocket, message: string): void {
  const e = new NetloopError('ERR_WS_HANDSHAKE_ABORTED', message)
  const abort = ws._abort
  ws._abort = undefined
  if (abort) abort(e)
  else fail(ws, e)
}
