/**
 * HTTP/1.1 served natively (Netty's `HttpServerCodec` + `HttpObjectAggregator` +
 * `HttpServerKeepAliveHandler` in one native handler, crates/http): requests are parsed in
 * Rust (httparse plus llhttp-grade strictness) and reach JS once each as an `HttpRequest`;
 * `HttpResponse`s written by JS are framed natively (Content-Length or chunked, `Date`,
 * `Connection`), in request order, with HTTP/1.0 and 1.1 keep-alive rules, HEAD and
 * `Expect: 100-continue` handled. Malformed or oversized requests are answered natively
 * (400, 413, 414, 417, 431, 501), a request head that takes longer than `headerTimeout` or a
 * request longer than `requestTimeout` with 408, and the connection closes.
 *
 * ```ts
 * ch.pipeline.addLast('http', new HttpServerCodec()).addLast('app', {
 *   channelRead: (ctx, req: HttpRequest) => ctx.write(new HttpResponse(200, { 'content-type': 'text/plain' }, 'hi')),
 *   channelReadComplete: (ctx) => ctx.flush(),
 * })
 * ```
 *
 * The layouts both sides share are described in crates/node/src/channel/http_wire.rs.
 */
import { NativeHandler } from './codecs'
import { HttpContentFlag, HttpIn, HttpOut, HttpRequestFlag, HttpResponseFlag, NativeHandlerKind } from './protocol'
import { checkBoolean, checkInteger, invalidArgType, outOfRange } from './errors'

/** Limits of an `HttpServerCodec` (what a refused request is answered with in brackets). */
export interface HttpServerCodecOptions {
  /** Request line and headers, in bytes (default 16384) [431]. */
  maxHeadSize?: number
  /** Request target, in bytes (default 8192) [414]. */
  maxUriLength?: number
  /** Header fields (default 100) [431]. */
  maxHeaderCount?: number
  /** Body, in bytes (default 16 MiB) [413]. */
  maxBodySize?: number
  /** Bodies up to this size come whole with their request; larger ones stream as `HttpContent` (default 65536). */
  aggregateLimit?: number
  /** HTTP/1.1 requests without `Host` are refused (default true) [400]. */
  requireHost?: boolean
  /**
   * Milliseconds a request head may take to arrive whole (node:http's `headersTimeout`, the
   * slowloris defence; default 10000, 0: no limit) [408]. The clock starts when the connection
   * becomes active for the first request, and at the first byte of each later head (the quiet
   * time between requests on a kept-alive connection is left to an idle timeout).
   */
  headerTimeout?: number
  /**
   * Milliseconds a whole request, head and body, may take to arrive (node:http's
   * `requestTimeout`, same default 300000; 0: no limit) [408]. The clock starts as
   * `headerTimeout`'s does and stops at the body's last byte.
   */
  requestTimeout?: number
  /**
   * Most requests read and not yet answered (their response not completely written). At the
   * limit the codec decodes no further request and stops reading from the socket (it turns
   * `autoRead` off meanwhile, or holds back `read()` calls if you turned it off), and goes on
   * as responses complete: backpressure on a client that pipelines faster than you answer,
   * not an error. Default: no limit.
   */
  maxPipelinedRequests?: number
}

/** Node's fast latin1 decoding (`buffer.latin1Slice`), typed. */
const latin1 = (b: Buffer, start: number, end: number): string => (b as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(start, end)

/** Parses requests and frames responses natively. One per connection, like Netty's. */
export class HttpServerCodec extends NativeHandler {
  constructor(o: HttpServerCodecOptions = {}) {
    const n = (name: keyof HttpServerCodecOptions, v: unknown, d: number, min: number, max = 0x7fffffff) => (v === undefined ? d : checkInteger(name, v, min, max))
    if (o.requireHost !== undefined) checkBoolean('requireHost', o.requireHost)
    super(NativeHandlerKind.Http, [
      n('maxHeadSize', o.maxHeadSize, 16 * 1024, 64),
      n('maxUriLength', o.maxUriLength, 8 * 1024, 1),
      n('maxHeaderCount', o.maxHeaderCount, 100, 1, 100_000),
      n('maxBodySize', o.maxBodySize, 16 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
      n('aggregateLimit', o.aggregateLimit, 64 * 1024, 0),
      o.requireHost === false ? 0 : 1,
      n('headerTimeout', o.headerTimeout, 10_000, 0),
      n('maxPipelinedRequests', o.maxPipelinedRequests, 0, 1),
      n('requestTimeout', o.requestTimeout, 300_000, 0),
    ])
  }
}

/** A request, as parsed natively. Strings and `body` are views of the bytes read. */
export class HttpRequest {
  #arena: Buffer
  #spans: number[]
  #headers: Record<string, string | string[]> | undefined
  /** The request's number on its connection (a response may name it to answer out of order). */
  readonly id: number
  readonly method: string
  /** The request target as sent (`/path?query`), like node:http's `req.url`. */
  readonly url: string
  readonly httpVersion: '1.0' | '1.1'
  /** The connection stays open after the response (HTTP/1.1 without `Connection: close`, ...). */
  readonly keepAlive: boolean
  /** The body is larger than `aggregateLimit` and follows as `HttpContent` messages. */
  readonly streaming: boolean
  /** The request carried `Expect: 100-continue` (the codec answered 100 Continue). */
  readonly expectContinue: boolean
  /** The whole body (empty when there is none, or when `streaming`). */
  readonly body: Buffer

  /** @internal */
  constructor(arena: Buffer, at: number) {
    this.#arena = arena
    this.id = arena.readDoubleLE(at)
    const flags = arena[at + 8]
    this.httpVersion = flags & HttpRequestFlag.Http11 ? '1.1' : '1.0'
    this.keepAlive = (flags & HttpRequestFlag.KeepAlive) !== 0
    this.streaming = (flags & HttpRequestFlag.Streaming) !== 0
    this.expectContinue = (flags & HttpRequestFlag.ExpectContinue) !== 0
    let p = at + 9
    let len = arena.readUInt32LE(p)
    this.method = latin1(arena, p + 4, p + 4 + len)
    p += 4 + len
    len = arena.readUInt32LE(p)
    this.url = latin1(arena, p + 4, p + 4 + len)
    p += 4 + len
    const n = arena.readUInt32LE(p)
    p += 4
    const spans = new Array<number>(n * 4)
    for (let i = 0; i < 2 * n; i++) {
      len = arena.readUInt32LE(p)
      spans[2 * i] = p + 4
      spans[2 * i + 1] = p + 4 + len
      p += 4 + len
    }
    this.#spans = spans
    len = arena.readUInt32LE(p)
    this.body = arena.subarray(p + 4, p + 4 + len)
  }

  /** The value of header `name` (case-insensitive), duplicates joined with `, `; no object is made. */
  header(name: string): string | undefined {
    const want = name.toLowerCase()
    let out: string | undefined
    const s = this.#spans
    for (let i = 0; i < s.length; i += 4) {
      if (s[i + 1] - s[i] !== want.length) continue
      if (latin1(this.#arena, s[i], s[i + 1]).toLowerCase() !== want) continue
      const v = latin1(this.#arena, s[i + 2], s[i + 3])
      out = out === undefined ? v : `${out}, ${v}`
    }
    return out
  }

  /** The headers as node:http's `req.headers` (lower-case names; `set-cookie` an array). Made on first use. */
  get headers(): Record<string, string | string[]> {
    if (this.#headers) return this.#headers
    const h: Record<string, string | string[]> = Object.create(null)
    const s = this.#spans
    for (let i = 0; i < s.length; i += 4) {
      const k = latin1(this.#arena, s[i], s[i + 1]).toLowerCase()
      const v = latin1(this.#arena, s[i + 2], s[i + 3])
      const old = h[k]
      if (k === 'set-cookie') h[k] = old === undefined ? [v] : [...(old as string[]), v]
      else h[k] = old === undefined ? v : `${old}, ${v}`
    }
    this.#headers = h
    return h
  }

  /** Names and values in wire order, as node:http's `req.rawHeaders`. */
  get rawHeaders(): string[] {
    const s = this.#spans
    const out: string[] = []
    for (let i = 0; i < s.length; i += 2) out.push(latin1(this.#arena, s[i], s[i + 1]))
    return out
  }
}

/** A piece of a streamed body: read (after a `streaming` request) or written (after a `streaming` response). */
export class HttpContent {
  constructor(
    readonly data: Buffer,
    /** The last piece of its body. */
    readonly last = false,
    /** The request it belongs to (written: the response's request; -1: the oldest unanswered). */
    readonly requestId = -1,
  ) {}
}

type HeaderInit = Record<string, string | number | string[]> | Array<[string, string]>

/** A response to write; framed natively (see the module docs). */
export class HttpResponse {
  readonly headers: Array<[string, string]>
  readonly body: Buffer
  /** The request this answers (-1: the oldest unanswered one: write responses in order). */
  requestId = -1
  /** The body follows as `HttpContent` writes (chunked unless a `content-length` is given). */
  streaming = false

  constructor(
    readonly status: number,
    headers: HeaderInit = [],
    body: string | Uint8Array = EMPTY,
    readonly reason = '',
  ) {
    if (!Number.isInteger(status) || status < 100 || status > 999) throw outOfRange('status', '>= 100 and <= 999', status)
    if (typeof body !== 'string' && !(body instanceof Uint8Array)) throw invalidArgType('body', 'string, Buffer or Uint8Array', body)
    this.headers = Array.isArray(headers)
      ? headers
      : Object.entries(headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x] as [string, string]) : [[k, String(v)] as [string, string]]))
    this.body = typeof body === 'string' ? Buffer.from(body) : Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  }

  /** Answers `req` (for responses written out of order). */
  forRequest(req: HttpRequest): this {
    this.requestId = req.id
    return this
  }

  /** Streams the body: `HttpContent` writes follow, the last with `last` set. */
  streamed(): this {
    this.streaming = true
    return this
  }
}
const EMPTY = Buffer.alloc(0)

/** @internal Bytes the layout of `m` takes. */
function size(m: HttpResponse | HttpContent): number {
  if (m instanceof HttpContent) return 1 + 8 + 1 + 4 + m.data.length
  let n = 1 + 8 + 2 + 1 + 4 + Buffer.byteLength(m.reason, 'latin1') + 4 + 4 + m.body.length
  for (const [k, v] of m.headers) n += 8 + k.length + Buffer.byteLength(v, 'latin1')
  return n
}

/** @internal Writes `m` into `buf` at `at`; returns the end, or -1 if it does not fit. */
export function writeHttp(m: HttpResponse | HttpContent, buf: Buffer, at: number): number {
  if (at + size(m) > buf.length) return -1
  const str = (s: string) => {
    const n = buf.write(s, at + 4, 'latin1')
    buf.writeUInt32LE(n, at)
    at += 4 + n
  }
  const bin = (b: Buffer) => {
    buf.writeUInt32LE(b.length, at)
    b.copy(buf, at + 4)
    at += 4 + b.length
  }
  if (m instanceof HttpContent) {
    buf[at] = HttpOut.Content
    buf.writeDoubleLE(m.requestId, at + 1)
    buf[at + 9] = m.last ? HttpContentFlag.Last : 0
    at += 10
    bin(m.data)
    return at
  }
  buf[at] = HttpOut.Response
  buf.writeDoubleLE(m.requestId, at + 1)
  buf.writeUInt16LE(m.status, at + 9)
  buf[at + 11] = m.streaming ? HttpResponseFlag.Streaming : 0
  at += 12
  str(m.reason)
  buf.writeUInt32LE(m.headers.length, at)
  at += 4
  for (const [k, v] of m.headers) {
    str(k)
    str(v)
  }
  bin(m.body)
  return at
}

/** @internal The layout of `m` in a Buffer of its own. */
export function httpBytes(m: HttpResponse | HttpContent): Buffer {
  const b = Buffer.allocUnsafe(size(m))
  return b.subarray(0, writeHttp(m, b, 0))
}

/** @internal The request or body piece at `at` of `arena` (an `HttpIn` kind byte first). */
export function readHttp(arena: Buffer, at: number): HttpRequest | HttpContent {
  const kind = arena[at++]
  if (kind === HttpIn.Request) return new HttpRequest(arena, at)
  const id = arena.readDoubleLE(at)
  const last = (arena[at + 8] & HttpContentFlag.Last) !== 0
  const len = arena.readUInt32LE(at + 9)
  return new HttpContent(arena.subarray(at + 13, at + 13 + len), last, id)
}
