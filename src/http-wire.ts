/**
 * The HTTP codec's messages on the boundary: `HttpResponse`/`HttpContent` written by JS
 * encoded into the op arena (`writeHttp`; a frozen response is its 13-byte reference), and
 * the requests and body pieces of a delivery read back (`readHttp`). The layouts both sides
 * share are described in crates/wire/src/http_wire.rs.
 */
import { Buffer } from 'node:buffer' // the module's binding, not the global's getter on every use (arena-view.ts)
import { HttpRequest } from './http-request'
import { requestLayoutSize, writeRequestLayout } from './http-request-layout'
import { HttpContent } from './http-content'
import type { HttpResponse } from './http-response'
import { HttpClientRequest, HttpClientResponse } from './http-client'
import { HttpFields } from './http-fields'
import { REGION_BYTES, writeRegion } from './file-region'
import { HttpClientRequestFlag, HttpContentFlag, HttpIn, HttpOut, HttpResponseFlag } from './protocol'

/** What JS writes through either HTTP codec. */
export type HttpOutbound = HttpResponse | HttpContent | HttpClientRequest

const latin1Write = (b: Buffer, s: string, at: number): number => (b as unknown as { latin1Write(s: string, at: number): number }).latin1Write(s, at)

/** The DataView of the last buffer a frozen response was written into (the op arena: one per stream). */
let lastBuf: Buffer | undefined
let lastView: DataView | undefined
function viewOf(buf: Buffer): DataView {
  if (buf !== lastBuf || lastView === undefined) {
    lastBuf = buf
    lastView = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  }
  return lastView
}

/** @internal Writes `s` (latin1) as `len:u32 data` at `at`; the end. */
export function putStr(buf: Buffer, s: string, at: number): number {
  const n = s.length === 0 ? 0 : latin1Write(buf, s, at + 4)
  buf.writeUInt32LE(n, at)
  return at + 4 + n
}

/** Writes `b` as `len:u32 data` at `at`; the end. */
function putBin(buf: Buffer, b: Uint8Array, at: number): number {
  buf.writeUInt32LE(b.length, at)
  if (b.length > 0) buf.set(b, at + 4)
  return at + 4 + b.length
}

/**
 * Lends a Buffer to the op batch (`OpStream.big`) and returns its index: a body of
 * `LEND_MIN` bytes or more travels that way, not copied into the layout (the native side takes
 * it without a copy, as a large write's Buffer).
 */
export type LendBig = (b: Buffer) => number

/** Bodies from this size on are lent rather than copied (the op stream's large-write size). */
export const LEND_MIN = 8 * 1024

/** @internal Bytes a body takes in the layout: its bytes, or 8 when it is lent. */
export const bodySize = (b: Uint8Array, lend: LendBig | undefined) => (lend && b.length >= LEND_MIN ? 8 : 4 + b.length)

/** @internal Writes body `b` at `at` (lent when big enough and `lend` is given); the end. */
export function putBody(buf: Buffer, b: Uint8Array, at: number, lend: LendBig | undefined): number {
  if (!lend || b.length < LEND_MIN) return putBin(buf, b, at)
  buf.writeUInt32LE(0xffffffff, at)
  buf.writeUInt32LE(lend(Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)), at + 4)
  return at + 8
}

/** @internal Writes the fields `[name, value]*` as `n:u32 (name value)*n` at `at`; the end. */
export function putFields(buf: Buffer, fields: Array<[string, string]>, at: number): number {
  buf.writeUInt32LE(fields.length, at)
  at += 4
  for (let i = 0; i < fields.length; i++) {
    const h = fields[i]
    at = putStr(buf, h[0], at)
    at = putStr(buf, h[1], at)
  }
  return at
}

/** @internal Bytes `fields` take in the layout. */
export function fieldsSize(fields: Array<[string, string]>): number {
  let n = 4
  for (let i = 0; i < fields.length; i++) n += 8 + fields[i][0].length + fields[i][1].length
  return n
}

/** The trailers a written piece carries, as pairs (undefined: none; only a last piece has them). */
function contentTrailers(m: HttpContent): Array<[string, string]> | undefined {
  if (!m.last) return undefined
  let pairs: Array<[string, string]> | undefined
  for (const k in m.trailers) {
    const v = m.trailers[k]
    pairs ??= []
    if (Array.isArray(v)) for (const x of v) pairs.push([k, x])
    else pairs.push([k, v])
  }
  return pairs
}

/**
 * Writes body piece `m` after kind byte `kind` (the layout is the same both ways: written,
 * `HttpOut.Content`; passed on inbound, `HttpIn.Content`); the end, or -1 if it does not fit.
 */
function writeContent(m: HttpContent, kind: HttpOut.Content | HttpIn.Content, buf: Buffer, at: number, lend: LendBig | undefined): number {
  const trailers = contentTrailers(m)
  if (at + 10 + bodySize(m.data, lend) + (trailers ? fieldsSize(trailers) : 0) > buf.length) return -1
  buf[at] = kind
  buf.writeDoubleLE(m.requestId, at + 1)
  buf[at + 9] = (m.last ? HttpContentFlag.Last : 0) | (trailers ? HttpContentFlag.Trailers : 0)
  at = putBody(buf, m.data, at + 10, lend)
  return trailers ? putFields(buf, trailers, at) : at
}

/** Bytes the layout of request `m` takes. */
function requestSize(m: HttpClientRequest, lend?: LendBig): number {
  return 2 + (m.file ? REGION_BYTES : 0) + 4 + m.method.length + 4 + m.url.length + fieldsSize(m.headers) + bodySize(m.body, lend)
}

/**
 * @internal Writes `m` into `buf` at `at`; returns the end, or -1 if it does not fit. With
 * `lend`, bodies of `LEND_MIN` bytes or more are lent to the batch instead of copied.
 */
export function writeHttp(m: HttpOutbound, buf: Buffer, at: number, lend?: LendBig): number {
  // A frozen response first (the common write of a server that has them): one own-property
  // load, no `instanceof` walk (`_frozen` is undefined on the other messages).
  const frozen = (m as HttpResponse)._frozen
  if (frozen >= 0) {
    // The native copy by id: 13 bytes, nothing encoded or checked again.
    if (at + 13 > buf.length) return -1
    buf[at] = HttpOut.Frozen
    // A frozen response answers the oldest unanswered request: its id is always -1. Two
    // DataView stores (inlined by the optimizing compiler; a Buffer method load per field
    // cost more than the write, and 12 byte stores about as much).
    const view = viewOf(buf)
    view.setFloat64(at + 1, -1, true)
    view.setUint32(at + 9, frozen, true)
    return at + 13
  }
  if (m instanceof HttpClientRequest) {
    if (at + requestSize(m, lend) > buf.length) return -1
    buf[at] = HttpOut.Request
    buf[at + 1] = (m.streaming ? HttpClientRequestFlag.Streaming : 0) | (m.httpVersion === '1.0' ? HttpClientRequestFlag.Http10 : 0) | (m.file ? HttpClientRequestFlag.File : 0)
    // The file region right after the flags (its descriptor handed over here, once the size fits).
    at = m.file ? writeRegion(m.file, buf, at + 2) : at + 2
    at = putStr(buf, m.method, at)
    at = putStr(buf, m.url, at)
    at = putFields(buf, m.headers, at)
    return putBody(buf, m.body, at, lend)
  }
  if (m instanceof HttpContent) return writeContent(m, HttpOut.Content, buf, at, lend)
  // Latin1: one byte per character, so the size is known without encoding.
  const headers = m.headers
  let size = 1 + 8 + 2 + 1 + (m.file ? REGION_BYTES : 0) + 4 + m.reason.length + 4 + bodySize(m.body, lend)
  for (let i = 0; i < headers.length; i++) size += 8 + headers[i][0].length + headers[i][1].length
  if (at + size > buf.length) return -1
  buf[at] = HttpOut.Response
  buf.writeDoubleLE(m.requestId, at + 1)
  buf.writeUInt16LE(m.status, at + 9)
  buf[at + 11] = (m.streaming ? HttpResponseFlag.Streaming : 0) | (m.file ? HttpResponseFlag.File : 0)
  // The file region right after the flags (its descriptor is handed over here: last, once
  // the size was checked).
  at = m.file ? writeRegion(m.file, buf, at + 12) : at + 12
  at = putStr(buf, m.reason, at)
  at = putFields(buf, headers, at)
  return putBody(buf, m.body, at, lend)
}

/** @internal Bytes the layout of `m` takes at most. */
function size(m: HttpOutbound, lend?: LendBig): number {
  if (m instanceof HttpContent) {
    const trailers = contentTrailers(m)
    return 10 + bodySize(m.data, lend) + (trailers ? fieldsSize(trailers) : 0)
  }
  if (m instanceof HttpClientRequest) return requestSize(m, lend)
  return Math.max(1 + 8 + 2 + 1 + (m.file ? REGION_BYTES : 0) + 4 + m.reason.length + fieldsSize(m.headers) + bodySize(m.body, lend), 13)
}

/** @internal The layout of `m` in a Buffer of its own (bodies lent to `lend` if given). */
export function httpBytes(m: HttpOutbound, lend?: LendBig): Buffer {
  const b = Buffer.allocUnsafe(size(m, lend))
  return b.subarray(0, writeHttp(m, b, 0, lend))
}

/** @internal The request or body piece at `at` of `arena` (an `HttpIn` kind byte first). */
export function readHttp(arena: Buffer, at: number): HttpRequest | HttpContent | HttpClientResponse {
  const kind = arena[at++]
  if (kind === HttpIn.Request) return new HttpRequest(arena, at)
  if (kind === HttpIn.Response) return new HttpClientResponse(arena, at)
  const id = arena.readDoubleLE(at)
  const flags = arena[at + 8]
  const len = arena.readUInt32LE(at + 9)
  const data = arena.subarray(at + 13, at + 13 + len)
  const last = (flags & HttpContentFlag.Last) !== 0
  if (flags & HttpContentFlag.Trailers) return new HttpContent(data, last, id, new HttpFields(arena, at + 13 + len).record())
  return new HttpContent(data, last, id)
}

/** What a JS handler may pass on inbound to a native handler in the layouts `readHttp` reads. */
export type HttpInbound = HttpRequest | HttpContent

/**
 * @internal Writes `m`, a request or body piece a JS handler fires on, in the layout it was
 * read in (`readHttp`'s, the native side's `put_request`/`put_content`), for the native
 * handler after it (`WireKind.ReadHttp` from JS; read natively by `request_from_js`,
 * `content_from_js`); the end, or -1 if it does not fit. What the handler changed in it (a
 * request's `url`, `method`, `headers` object) is what is written.
 */
export function writeHttpInbound(m: HttpInbound, buf: Buffer, at: number, lend?: LendBig): number {
  return m instanceof HttpRequest ? writeRequestLayout(m, buf, at, lend) : writeContent(m, HttpIn.Content, buf, at, lend)
}

/** @internal `writeHttpInbound`'s layout of `m` in a Buffer of its own. */
export function httpInboundBytes(m: HttpInbound, lend?: LendBig): Buffer {
  const b = Buffer.allocUnsafe(m instanceof HttpRequest ? requestLayoutSize(m, lend) : size(m, lend))
  return b.subarray(0, writeHttpInbound(m, b, 0, lend))
}
