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
 * The layouts both sides share are described in crates/wire/src/http_wire.rs.
 */
import { NativeHandler } from './codecs'
import { HttpIn, HttpRequestAt, HttpRequestField, HttpRequestFlag, NativeHandlerKind } from './protocol'
import { native } from './binding'
import { bodySize, fieldsSize, httpBytes, putBody, putFields, putStr, type LendBig } from './http-wire'
import { FileRegion } from './file-region'
import { NetloopError, checkBoolean, checkInteger, fromNative, invalidArgType, outOfRange } from './errors'
import { EMPTY, HttpFields, HttpHeaderView, bodyBuffer, fieldRecord, headerList, latin1, type HeaderInit } from './http-fields'

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
  /**
   * Milliseconds the codec lingers when it closes a connection whose client may still be
   * sending (a refused request, a closing response sent before its request's body came):
   * it half-closes (the FIN follows the response; close_notify first under TLS), reads and
   * drops input, and closes when the client does or this runs out (nginx's
   * `lingering_close`; default 5000; 0: close at once, as Netty does). Closing at once with
   * input unread sends a reset, and a client still writing its upload (node's http client)
   * then reports `ECONNRESET` or `EPIPE` instead of your 413.
   */
  lingerTimeout?: number
}


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
      n('lingerTimeout', o.lingerTimeout, 5000, 0),
    ])
  }
}

/** A request, as parsed natively. Strings and `body` are views of the bytes read, made on first use. */
export class HttpRequest extends HttpHeaderView {
  #arena: Buffer
  /** Offsets in the arena: method, target, body (start, end each), then the header count's. */
  #at: number
  #headerFields: HttpFields | undefined
  #method: string | undefined
  #url: string | undefined
  #body: Buffer | undefined
  /** Which of `method` and `url` a handler set (`Edited` bits). */
  #edited = 0
  /** The request's number on its connection (a response may name it to answer out of order). */
  readonly id: number
  readonly httpVersion: '1.0' | '1.1'
  /** The version's major number (node:http's `httpVersionMajor`). */
  readonly httpVersionMajor: number
  /** The version's minor number (node:http's `httpVersionMinor`). */
  readonly httpVersionMinor: number
  /** The connection stays open after the response (HTTP/1.1 without `Connection: close`, ...). */
  readonly keepAlive: boolean
  /** The body is larger than `aggregateLimit` and follows as `HttpContent` messages. */
  readonly streaming: boolean
  /** The request carried `Expect: 100-continue` (the codec answered 100 Continue). */
  readonly expectContinue: boolean
  /**
   * The request asks to leave HTTP (node:http's `req.upgrade`): `Connection: upgrade` with an
   * `Upgrade` field, or `CONNECT`. The codec reads nothing after it until you answer:
   * `101 Switching Protocols` (a 2xx to `CONNECT`) hands the connection over, and the bytes
   * that follow (those already read first) reach the next handlers as Buffers, while your
   * Buffer writes go out as they are; any other final response declines, and HTTP goes on.
   * Or remove the codec from the pipeline and write the 101 yourself (what `ws` does: see
   * the guide's "WebSocket over the native codec").
   */
  readonly upgrade: boolean

  /** @internal */
  constructor(arena: Buffer, at: number) {
    super()
    this.#arena = arena
    this.#at = at + HttpRequestAt.Fields
    this.id = arena.readDoubleLE(at + HttpRequestAt.Id)
    const flags = arena[at + HttpRequestAt.Flags]
    const version = arena[at + HttpRequestAt.Version]
    this.httpVersionMajor = (version / 10) | 0
    this.httpVersionMinor = version % 10
    this.httpVersion = flags & HttpRequestFlag.Http11 ? '1.1' : '1.0'
    this.keepAlive = (flags & HttpRequestFlag.KeepAlive) !== 0
    this.streaming = (flags & HttpRequestFlag.Streaming) !== 0
    this.expectContinue = (flags & HttpRequestFlag.ExpectContinue) !== 0
    this.upgrade = (flags & HttpRequestFlag.Upgrade) !== 0
  }

  /** The offset of a length-prefixed field (crates/wire/src/protocol/formats.rs). */
  #field(index: HttpRequestField): number {
    const a = this.#arena
    let p = this.#at
    for (let i = 0; i < index; i++) p += 4 + a.readUInt32LE(p)
    return p
  }

  /**
   * The method token as sent (`GET`, ...). Settable, as node:http's: a handler that passes the
   * request on to a native one after it (`WebSocketServerProtocolHandler`, ...) passes it
   * changed, as it does a changed `url` or `headers` object.
   */
  get method(): string {
    if (this.#method !== undefined) return this.#method
    const a = this.#arena
    const p = this.#field(HttpRequestField.Method)
    const len = a.readUInt32LE(p)
    // The common methods without a string made per request.
    if (len === 3 && a[p + 4] === 0x47 && a[p + 5] === 0x45 && a[p + 6] === 0x54) this.#method = 'GET'
    else if (len === 4 && a[p + 4] === 0x50 && a[p + 5] === 0x4f && a[p + 6] === 0x53 && a[p + 7] === 0x54) this.#method = 'POST'
    else this.#method = latin1(a, p + 4, p + 4 + len)
    return this.#method
  }

  set method(v: string) {
    if (typeof v !== 'string') throw invalidArgType('method', 'string', v)
    this.#method = v
    this.#edited |= Edited.Method
  }

  /** The request target as sent (`/path?query`), like node:http's `req.url` (settable as `method`). */
  get url(): string {
    if (this.#url !== undefined) return this.#url
    const p = this.#field(HttpRequestField.Target)
    const len = this.#arena.readUInt32LE(p)
    this.#url = len === 1 && this.#arena[p + 4] === 0x2f ? '/' : latin1(this.#arena, p + 4, p + 4 + len)
    return this.#url
  }

  set url(v: string) {
    if (typeof v !== 'string') throw invalidArgType('url', 'string', v)
    this.#url = v
    this.#edited |= Edited.Url
  }

  /** The whole body (empty when there is none, or when `streaming`). */
  get body(): Buffer {
    if (this.#body !== undefined) return this.#body
    const p = this.#field(HttpRequestField.Body)
    const len = this.#arena.readUInt32LE(p)
    this.#body = len === 0 ? EMPTY : this.#arena.subarray(p + 4, p + 4 + len)
    return this.#body
  }

  /** @internal The header fields, found on first use. */
  protected _headerFields(): HttpFields {
    this.#headerFields ??= new HttpFields(this.#arena, this.#field(HttpRequestField.Headers))
    return this.#headerFields
  }

  /** The trailer fields of a whole chunked body, as node:http's `req.trailers` (a streamed body's come on its last `HttpContent`). */
  get trailers(): Record<string, string | string[]> {
    return new HttpFields(this.#arena, this._headerFields().end()).record()
  }

  // ---- the layout again, for a native handler after a JS one (the writer of what the constructor reads) ----

  /** Where field `index` (`method`, `url` or `body`: `len:u32 data`) ends in the arena. */
  #fieldEnd(index: HttpRequestField): number {
    const p = this.#field(index)
    return p + 4 + this.#arena.readUInt32LE(p)
  }

  /** What `_write` writes: the changed header fields (undefined: as read) and where the trailers lie. */
  #parts(): { headers: Array<[string, string]> | undefined; fields: HttpFields; trailersEnd: number } {
    const fields = this._headerFields()
    return { headers: fields.changed(), fields, trailersEnd: new HttpFields(this.#arena, fields.end()).end() }
  }

  /** @internal Bytes `_write` takes (a body of `LEND_MIN` bytes or more is lent when `lend` is given). */
  _size(lend?: LendBig, parts = this.#parts()): number {
    const string = (edit: Edited, index: HttpRequestField, v: string | undefined) => (this.#edited & edit ? 4 + v!.length : this.#fieldEnd(index) - this.#field(index))
    const { headers, fields, trailersEnd } = parts
    return (
      1 +
      HttpRequestAt.Fields +
      string(Edited.Method, HttpRequestField.Method, this.#method) +
      string(Edited.Url, HttpRequestField.Target, this.#url) +
      bodySize(this.body, lend) +
      (headers ? fieldsSize(headers) : fields.end() - fields.start()) +
      (trailersEnd - fields.end())
    )
  }

  /**
   * @internal Writes this request in the layout the constructor reads (crates/wire's
   * `put_request`; `HttpIn.Request` first) at `at` of `buf`, for a native handler after the
   * JS one that fires it on (read there by `request_from_js`); the end, or -1 if it does not
   * fit. A `method`, `url` or `headers` object a handler changed is written as it is now; the
   * rest is copied as read.
   */
  _write(buf: Buffer, at: number, lend?: LendBig): number {
    const parts = this.#parts()
    if (at + this._size(lend, parts) > buf.length) return -1
    const a = this.#arena
    const { headers, fields, trailersEnd } = parts
    buf[at] = HttpIn.Request
    const fixed = at + 1
    buf.writeDoubleLE(this.id, fixed + HttpRequestAt.Id)
    buf[fixed + HttpRequestAt.Flags] =
      (this.httpVersion === '1.1' ? HttpRequestFlag.Http11 : 0) |
      (this.keepAlive ? HttpRequestFlag.KeepAlive : 0) |
      (this.streaming ? HttpRequestFlag.Streaming : 0) |
      (this.expectContinue ? HttpRequestFlag.ExpectContinue : 0) |
      (this.upgrade ? HttpRequestFlag.Upgrade : 0)
    buf[fixed + HttpRequestAt.Version] = this.httpVersionMajor * 10 + this.httpVersionMinor
    let p = fixed + HttpRequestAt.Fields
    // In the fields' declared order (the reader's #field counts on it).
    for (let i = HttpRequestField.Method; i <= HttpRequestField.Trailers; i++) {
      switch (i) {
        case HttpRequestField.Method:
          p = this.#edited & Edited.Method ? putStr(buf, this.#method!, p) : p + a.copy(buf, p, this.#field(i), this.#fieldEnd(i))
          break
        case HttpRequestField.Target:
          p = this.#edited & Edited.Url ? putStr(buf, this.#url!, p) : p + a.copy(buf, p, this.#field(i), this.#fieldEnd(i))
          break
        case HttpRequestField.Body:
          p = putBody(buf, this.body, p, lend)
          break
        case HttpRequestField.Headers:
          p = headers ? putFields(buf, headers, p) : p + a.copy(buf, p, fields.start(), fields.end())
          break
        case HttpRequestField.Trailers:
          p += a.copy(buf, p, fields.end(), trailersEnd)
          break
      }
    }
    return p
  }
}

/** The bits of `HttpRequest`'s record of what a handler set. */
const enum Edited {
  Method = 1,
  Url = 2,
}

/** A piece of a streamed body: read (after a `streaming` request) or written (after a `streaming` response). */
export class HttpContent {
  /**
   * Trailer fields of a chunked body, on its last piece (node:http's `trailers`: lower-case
   * names, duplicates joined with `, `). Read: what the peer sent; written: sent after the last
   * chunk (a body framed by `content-length` cannot carry them).
   */
  readonly trailers: Record<string, string | string[]>

  constructor(
    readonly data: Buffer,
    /** The last piece of its body. */
    readonly last = false,
    /** The request it belongs to (written: the response's request; -1: the oldest unanswered). */
    readonly requestId = -1,
    trailers: HeaderInit | Record<string, string | string[]> = NO_TRAILERS,
  ) {
    this.trailers = trailers === NO_TRAILERS ? NO_TRAILERS : fieldRecord(headerList(trailers as HeaderInit))
  }
}

/** The trailers of a piece that has none (shared, frozen). */
const NO_TRAILERS: Record<string, string | string[]> = Object.freeze(Object.create(null))


/** Frees the native copy of a frozen response once its object is collected. */
const frozenIds = new FinalizationRegistry<number>((id) => native.httpRelease(id))

/** A response to write; framed natively (see the module docs). */
export class HttpResponse {
  readonly headers: Array<[string, string]>
  readonly body: Buffer
  /** The body as a file region (sent with `sendfile`, framed by `Content-Length`), or undefined. */
  readonly file: FileRegion | undefined
  /** The request this answers (-1: the oldest unanswered one: write responses in order). */
  requestId = -1
  /** The body follows as `HttpContent` writes (chunked unless a `content-length` is given). */
  streaming = false
  /** @internal The id of the native copy when frozen (-1: not frozen). */
  _frozen = -1

  constructor(
    readonly status: number,
    headers: HeaderInit = [],
    body: string | Uint8Array | FileRegion = EMPTY,
    readonly reason = '',
  ) {
    if (!Number.isInteger(status) || status < 100 || status > 999) throw outOfRange('status', '>= 100 and <= 999', status)
    this.headers = headerList(headers)
    if (body instanceof FileRegion) {
      this.body = EMPTY
      this.file = body
    } else {
      this.body = bodyBuffer(body)
    }
  }

  /** Answers `req` (for responses written out of order). Not for a frozen response. */
  forRequest(req: HttpRequest): this {
    if (this._frozen >= 0) throw frozenError('forRequest()')
    this.requestId = req.id
    return this
  }

  /** Streams the body: `HttpContent` writes follow, the last with `last` set. Not for a frozen response. */
  streamed(): this {
    if (this._frozen >= 0) throw frozenError('streamed()')
    if (this.file) throw new NetloopError('ERR_HTTP_FILE_BODY', 'A response whose body is a FileRegion is not streamed')
    this.streaming = true
    return this
  }

  /**
   * Checks this response and encodes it natively once, for writing many times (a hello, a
   * static page, a canned error): each write then costs a reference, not an encoding. The
   * codec still adds `Date`, `Content-Length` and `Connection` as each request needs. The
   * response and its header list become read-only; its body is copied now (later changes to
   * the Buffer are not sent). A frozen response answers the oldest unanswered request (write
   * in order); it cannot be streamed. Throws what a write of it would fail with
   * (`ERR_INVALID_HTTP_TOKEN`, `ERR_INVALID_CHAR`, ...). Returns `this`.
   */
  freeze(): this {
    if (this._frozen >= 0) return this
    if (this.streaming) throw new NetloopError('ERR_HTTP_FROZEN_STREAMING', 'A streamed response cannot be frozen')
    if (this.file) throw new NetloopError('ERR_HTTP_FROZEN_FILE', 'A response whose body is a FileRegion cannot be frozen (a region is sent once)')
    if (this.requestId !== -1) throw new NetloopError('ERR_HTTP_FROZEN_REQUEST', 'A frozen response answers the oldest unanswered request: freeze it before forRequest()')
    let id: number
    try {
      id = native.httpFreeze(httpBytes(this))
    } catch (e) {
      throw fromNative(e)
    }
    this._frozen = id
    frozenIds.register(this, id)
    for (const h of this.headers) Object.freeze(h)
    Object.freeze(this.headers)
    Object.freeze(this)
    return this
  }

  /** True once `freeze()` was called. */
  get frozen(): boolean {
    return this._frozen >= 0
  }
}

function frozenError(what: string): NetloopError {
  return new NetloopError('ERR_HTTP_FROZEN', `${what} cannot change a frozen response`)
}
