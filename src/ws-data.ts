/**
 * What a `WebSocket` (src/ws-socket.ts) sends and checks: the data `send` takes, its options,
 * close codes an application may send, and the conversions between them.
 */
import { Buffer } from 'node:buffer'
import { NetloopError } from './errors'

/** What `send` takes (as `ws`: numbers are sent as text). */
export type WebSocketData = string | Buffer | ArrayBuffer | ArrayBufferView | number

/** Options of `send` (`ws`'s; `compress` and `mask` are accepted and ignored). */
export interface SendOptions {
  /** Send as binary (default: true for binary data, false for strings). */
  binary?: boolean
  /** The last piece of a message (default true); pieces are joined in JS and sent whole. */
  fin?: boolean
  compress?: boolean
  mask?: boolean
}

export type Callback = (err?: Error) => void

export function toBuffer(data: WebSocketData): Buffer {
  if (Buffer.isBuffer(data)) return data
  if (typeof data === 'string') return Buffer.from(data)
  if (typeof data === 'number') return Buffer.from(String(data))
  if (data instanceof ArrayBuffer) return Buffer.from(data)
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  throw new NetloopError('ERR_INVALID_ARG_TYPE', 'The "data" argument must be a string, Buffer, ArrayBuffer or ArrayBufferView')
}

/** A close code the application may send (RFC 6455 §7.4, as `ws` checks). */
export function isSendableCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999)
}

export function describe(e: unknown): string {
  const code = (e as { code?: unknown } | undefined)?.code
  return `${typeof code === 'string' ? `${code}: ` : ''}${e instanceof Error ? e.message : String(e)}`
}

export function toArrayBuffer(b: Buffer): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer
}
