/**
 * WebSocket (RFC 6455) framed natively (Netty's websocketx): `WebSocketServerProtocolHandler`
 * goes after `HttpServerCodec` in `childHandler`; it answers the handshake of an upgrade
 * request for its path and from then on decodes frames, answers pings and runs the close
 * handshake natively. Each message reaches the next handler once, as a `TextWebSocketFrame`
 * (`{ text }`) or a `BinaryWebSocketFrame` (`{ binary }`, a view of the bytes read);
 * writing one of the frame classes, a string (a text message) or a Buffer (a binary message)
 * sends it. A protocol violation closes the connection with its close code (1002, 1007,
 * 1009) and reaches `exceptionCaught` as a `NetloopError` (`ERR_WS_*`). With
 * `perMessageDeflate`, a client's permessage-deflate offer (RFC 7692) is accepted and
 * messages are compressed and inflated natively, the inflated size bounded by
 * `maxMessageSize` (a deflate bomb closes with 1009).
 *
 * ```ts
 * childHandler: (ch) => ch.pipeline
 *   .addLast('http', new HttpServerCodec())
 *   .addLast('ws', new WebSocketServerProtocolHandler('/chat'))
 *   .addLast('app', { channelRead: (ctx, msg: TextWebSocketFrame) => ctx.writeAndFlush(msg) })
 * ```
 *
 * The layout both sides share is described in crates/wire/src/ws_wire.rs.
 */
// Imported, not the global: in Node the global `Buffer` is a getter, called on each use.
import { Buffer } from 'node:buffer'
import type { Channel } from './channel'
import { NativeHandler } from './codecs'
import { NativeHandlerKind, WsFrameKind } from './protocol'
import { checkBoolean, checkInteger, invalidArgType } from './errors'
import { viewsOf } from './arena-view'

/** Options of a `WebSocketServerProtocolHandler`. */
export interface WebSocketServerProtocolOptions {
  /** Subprotocols the server speaks; the first the client offers is chosen (default none). */
  subprotocols?: string[]
  /** Upgrade every path that starts with the handler's path (default false: exactly it). */
  checkStartsWith?: boolean
  /** Longest frame payload accepted, in bytes (default 16 MiB; 1009 beyond). */
  maxFrameSize?: number
  /** Longest message accepted, all its fragments together (default 64 MiB; 1009 beyond). */
  maxMessageSize?: number
  /** How long to wait for the peer's close frame after sending ours, in ms (default 10000). */
  closeTimeout?: number
  /** Answer pings with pongs natively (default true). */
  autoPong?: boolean
  /**
   * Accept permessage-deflate (RFC 7692) when a client offers it: `true` for the defaults,
   * or its options. Default off, as the `ws` package's server: compression costs CPU, and
   * a connection holds up to ~420 KiB of compressor and decompressor state once it has
   * compressed messages both ways (none before; none between messages on a side without
   * context takeover, which borrows the loop thread's spare state for each message). See docs/guide.md, "WebSocket".
   */
  perMessageDeflate?: boolean | PerMessageDeflateOptions
  /** Also pass pings and pongs on to the next handler as `PingWebSocketFrame`/`PongWebSocketFrame` (default false). */
  forwardControlFrames?: boolean
}

/** Options of permessage-deflate (the `ws` package's names). */
export interface PerMessageDeflateOptions {
  /** Messages shorter than this many bytes go uncompressed (default 1024). */
  threshold?: number
  /** The server starts each message with an empty window; it holds no compressor between messages: each borrows the loop thread's spare (default false). */
  serverNoContextTakeover?: boolean
  /** Ask the client to start each message with an empty window; we then hold no decompressor between messages (default false). */
  clientNoContextTakeover?: boolean
  /** The server's window, log2 9..15 (default 15); below 15 it uses less memory and compresses less. */
  serverMaxWindowBits?: number
  /** The client's window, log2 9..15 (default 15); below 15, offers that do not let the server set it are declined. */
  clientMaxWindowBits?: number
}

/** @internal The parameters of `perMessageDeflate` as they cross: on, threshold, the two flags, the two window sizes. */
export function deflateParams(o: boolean | PerMessageDeflateOptions | undefined): readonly number[] {
  if (o === undefined || o === false) return DEFLATE_OFF
  if (o === true) return DEFLATE_ON
  if (typeof o !== 'object' || o === null) throw invalidArgType('perMessageDeflate', 'a boolean or an object', o)
  for (const k of ['serverNoContextTakeover', 'clientNoContextTakeover'] as const) if (o[k] !== undefined) checkBoolean(k, o[k])
  const bits = (name: 'serverMaxWindowBits' | 'clientMaxWindowBits') => (o[name] === undefined ? 15 : checkInteger(name, o[name], 9, 15))
  const threshold = o.threshold === undefined ? 1024 : checkInteger('threshold', o.threshold, 0, Number.MAX_SAFE_INTEGER)
  return [1, threshold, o.serverNoContextTakeover ? 1 : 0, o.clientNoContextTakeover ? 1 : 0, bits('serverMaxWindowBits'), bits('clientMaxWindowBits')]
}
const DEFLATE_OFF: readonly number[] = Object.freeze([0, 1024, 0, 0, 15, 15])
const DEFLATE_ON: readonly number[] = Object.freeze([1, 1024, 0, 0, 15, 15])

/** A non-negative integer option, `d` when undefined. */
function intOption(name: string, v: unknown, d: number, min: number): number {
  return v === undefined ? d : checkInteger(name, v, min, Number.MAX_SAFE_INTEGER)
}

/**
 * The UTF-8 bytes of a path or subprotocol, shared by the descriptions that name the same one
 * (a `childHandler` makes a handler for each connection). Read only, as every description's
 * byte strings are; bounded.
 */
const textBytes = new Map<string, Buffer>()
function bytesOf(text: string): Buffer {
  let b = textBytes.get(text)
  if (b === undefined) {
    if (textBytes.size >= 64) textBytes.clear()
    textBytes.set(text, (b = Buffer.from(text)))
  }
  return b
}

/** Channels whose pipeline has a WebSocket handler: strings written to them are text messages. */
/** Whether strings written to `ch` are WebSocket text messages. */
export function isWebSocketChannel(ch: object): boolean {
  return (ch as Partial<Channel>).pipeline?._webSocket === true
}

/**
 * @internal Marks `ch`: its pipeline has a WebSocket handler (a client's, src/ws-client.ts).
 * A flag of its pipeline (a set of channels cost each connection an entry).
 */
export function markWebSocketChannel(ch: unknown): void {
  const pipeline = (ch as Partial<Channel> | null)?.pipeline
  if (pipeline !== undefined) pipeline._webSocket = true
}

/** The server handshake on `HttpServerCodec`'s upgrade, then WebSocket frames (native). */
export class WebSocketServerProtocolHandler extends NativeHandler {
  constructor(path = '/', o: WebSocketServerProtocolOptions = {}) {
    if (typeof path !== 'string' || !path.startsWith('/')) throw invalidArgType('path', 'a string starting with /', path)
    const protocols = o.subprotocols ?? []
    if (!Array.isArray(protocols)) throw invalidArgType('subprotocols', 'an array of non-empty strings', protocols)
    const texts = [bytesOf(path)]
    for (const p of protocols) {
      if (typeof p !== 'string' || p === '') throw invalidArgType('subprotocols', 'an array of non-empty strings', protocols)
      texts.push(bytesOf(p))
    }
    if (o.checkStartsWith !== undefined) checkBoolean('checkStartsWith', o.checkStartsWith)
    if (o.autoPong !== undefined) checkBoolean('autoPong', o.autoPong)
    if (o.forwardControlFrames !== undefined) checkBoolean('forwardControlFrames', o.forwardControlFrames)
    const maxFrameSize = intOption('maxFrameSize', o.maxFrameSize, 16 << 20, 125)
    const d = deflateParams(o.perMessageDeflate)
    // (no spread: a handler is made for each connection, and this allocates only the two arrays)
    super(
      NativeHandlerKind.WebSocket,
      [
        maxFrameSize,
        intOption('maxMessageSize', o.maxMessageSize, Math.max(64 << 20, maxFrameSize), maxFrameSize),
        intOption('closeTimeout', o.closeTimeout, 10_000, 1),
        o.autoPong === false ? 0 : 1,
        o.checkStartsWith ? 1 : 0,
        d[0], d[1], d[2], d[3], d[4], d[5],
        o.forwardControlFrames ? 1 : 0,
      ],
      texts,
    )
  }

  /**
   * @internal The native handshake takes `HttpServerCodec` out of the pipeline at the switch
   * (as Netty's handshaker does): the JS mirror of the pipeline follows (src/pipeline.ts).
   */
  override _attach(ch: Channel): void {
    markWebSocketChannel(ch)
    ch.pipeline._nativeEdits = true
  }
}

/** Sends every message back natively (no JS); put it after a `WebSocketServerProtocolHandler`. */
export class WebSocketEchoHandler extends NativeHandler {
  constructor() {
    super(NativeHandlerKind.WebSocketEcho, [])
  }
}

/** A whole text message. */
export class TextWebSocketFrame {
  constructor(readonly text: string) {}
}

/** A whole binary message. */
export class BinaryWebSocketFrame {
  constructor(readonly binary: Buffer) {}
}

/** A ping (at most 125 bytes; the native side answers the peer's pings itself). */
export class PingWebSocketFrame {
  constructor(readonly ping: Buffer = Buffer.alloc(0)) {}
}

/** A pong. */
export class PongWebSocketFrame {
  constructor(readonly pong: Buffer = Buffer.alloc(0)) {}
}

/**
 * A close frame: written, it starts the close handshake (the connection closes when the
 * peer answers, or after `closeTimeout`); `code` undefined sends an empty close frame.
 */
export class CloseWebSocketFrame {
  constructor(
    readonly code?: number,
    readonly reason = '',
  ) {
    if (code !== undefined) checkInteger('code', code, 1000, 4999)
  }
}

/** What a WebSocket handler reads and writes. */
export type WebSocketFrame = TextWebSocketFrame | BinaryWebSocketFrame | PingWebSocketFrame | PongWebSocketFrame | CloseWebSocketFrame

/** Whether `m` is one of the frame classes. */
export function isWebSocketFrame(m: unknown): m is WebSocketFrame {
  return m instanceof TextWebSocketFrame || m instanceof BinaryWebSocketFrame || m instanceof PingWebSocketFrame || m instanceof PongWebSocketFrame || m instanceof CloseWebSocketFrame
}

/** @internal A frame the native side delivered: `len` bytes at `at` of `arena`. */
export function readWs(arena: Buffer, at: number, len: number): WebSocketFrame {
  const kind = arena[at]
  const view = viewsOf(arena)
  switch (kind) {
    case WsFrameKind.Text:
      return new TextWebSocketFrame(arena.toString('utf8', at + 1, at + len))
    case WsFrameKind.Binary:
      return new BinaryWebSocketFrame(view(at + 1, len - 1))
    case WsFrameKind.Ping:
      return new PingWebSocketFrame(view(at + 1, len - 1))
    case WsFrameKind.Pong:
      return new PongWebSocketFrame(view(at + 1, len - 1))
    default:
      return len >= 3 ? new CloseWebSocketFrame(arena.readUInt16BE(at + 1), arena.toString('utf8', at + 3, at + len)) : new CloseWebSocketFrame()
  }
}

function parts(m: WebSocketFrame): [WsFrameKind, Uint8Array | string] {
  if (m instanceof TextWebSocketFrame) return [WsFrameKind.Text, m.text]
  if (m instanceof BinaryWebSocketFrame) return [WsFrameKind.Binary, m.binary]
  if (m instanceof PingWebSocketFrame) return [WsFrameKind.Ping, m.ping]
  if (m instanceof PongWebSocketFrame) return [WsFrameKind.Pong, m.pong]
  if (m.code === undefined) return [WsFrameKind.Close, '']
  const reason = Buffer.from(m.reason)
  const payload = Buffer.allocUnsafe(2 + reason.length)
  payload.writeUInt16BE(m.code, 0)
  reason.copy(payload, 2)
  return [WsFrameKind.Close, payload]
}

/** @internal Writes `m` in the layout at `at`; the end offset, or -1 if it does not fit. */
export function writeWs(m: WebSocketFrame, buf: Buffer, at: number): number {
  const [kind, payload] = parts(m)
  const room = buf.length - at - 1
  if (typeof payload === 'string') {
    if (payload.length * 3 > room && Buffer.byteLength(payload) > room) return -1
    buf[at] = kind
    return at + 1 + buf.write(payload, at + 1, 'utf8')
  }
  if (payload.length > room) return -1
  buf[at] = kind
  buf.set(payload, at + 1)
  return at + 1 + payload.length
}

/** @internal `m` in the layout, in a Buffer of its own. */
export function wsBytes(m: WebSocketFrame): Buffer {
  const [kind, payload] = parts(m)
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload
  const out = Buffer.allocUnsafe(1 + body.length)
  out[0] = kind
  out.set(body, 1)
  return out
}
