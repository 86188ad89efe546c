/**
 * `HttpRequest`: a request the native HTTP codec parsed, read lazily from the bytes of its
 * delivery (strings and `body` are views made on first use). The layout is
 * crates/wire/src/http_wire.rs's `put_request`, at the offsets and in the field order
 * `protocol/formats.rs` declares (`HttpRequestAt`, `HttpRequestField`); the writer of the same
 * layout, for a request a JS handler passes on to a native one, is `http-request-layout.ts`.
 */
import { HttpRequestAt, HttpRequestField, HttpRequestFlag } from './protocol'
import { invalidArgType } from './errors'
import { EMPTY, HttpFields, HttpHeaderView, latin1 } from './http-fields'

/** A request, as parsed natively. Strings and `body` are views of the bytes read, made on first use. */
export class HttpRequest extends HttpHeaderView {
  // One request per request read, so the constructor only keeps where the request lies: the
  // id, flags and version are read from the arena when asked (a handler reads two or three).
  #arena: Buffer
  /** Where the request's fixed part starts in the arena (`HttpRequestAt`). */
  #at: number
  #headerFields: HttpFields | undefined = undefined
  #method: string | undefined = undefined
  #url: string | undefined = undefined
  #body: Buffer | undefined = undefined
  /** Which of `method` and `url` a handler set (`Edited` bits). */
  #edited = 0

  /** @internal */
  constructor(arena: Buffer, at: number) {
    super()
    this.#arena = arena
    this.#at = at
  }

  #flag(bit: HttpRequestFlag): boolean {
    return (this.#arena[this.#at + HttpRequestAt.Flags] & bit) !== 0
  }

  /** The request's number on its connection (a response may name it to answer out of order). */
  get id(): number {
    return this.#arena.readDoubleLE(this.#at + HttpRequestAt.Id)
  }

  /** `'1.1'` or `'1.0'`. */
  get httpVersion(): '1.0' | '1.1' {
    return this.#flag(HttpRequestFlag.Http11) ? '1.1' : '1.0'
  }

  /** The version's major number (node:http's `httpVersionMajor`). */
  get httpVersionMajor(): number {
    return (this.#arena[this.#at + HttpRequestAt.Version] / 10) | 0
  }

  /** The version's minor number (node:http's `httpVersionMinor`). */
  get httpVersionMinor(): number {
    return this.#arena[this.#at + HttpRequestAt.Version] % 10
  }

  /** The connection stays open after the response (HTTP/1.1 without `Connection: close`, ...). */
  get keepAlive(): boolean {
    return this.#flag(HttpRequestFlag.KeepAlive)
  }

  /** The body is larger than `aggregateLimit` and follows as `HttpContent` messages. */
  get streaming(): boolean {
    return this.#flag(HttpRequestFlag.Streaming)
  }

  /** The request carried `Expect: 100-continue` (the codec answered 100 Continue). */
  get expectContinue(): boolean {
    return this.#flag(HttpRequestFlag.ExpectContinue)
  }

  /**
   * The request asks to leave HTTP (node:http's `req.upgrade`): `Connection: upgrade` with an
   * `Upgrade` field, or `CONNECT`. The codec reads nothing after it until you answer:
   * `101 Switching Protocols` (a 2xx to `CONNECT`) hands the connection over, and the bytes
   * that follow (those already read first) reach the next handlers as Buffers, while your
   * Buffer writes go out as they are; any other final response declines, and HTTP goes on.
   * Or remove the codec from the pipeline and write the 101 yourself (what `ws` does: see
   * the guide's "WebSocket over the native codec").
   */
  get upgrade(): boolean {
    return this.#flag(HttpRequestFlag.Upgrade)
  }

  /** The offset of a length-prefixed field (crates/wire/src/protocol/formats.rs). */
  #field(index: HttpRequestField): number {
    const a = this.#arena
    let p = this.#at + HttpRequestAt.Fields
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
  _headerFields(): HttpFields {
    this.#headerFields ??= new HttpFields(this.#arena, this.#field(HttpRequestField.Headers))
    return this.#headerFields
  }

  /** The trailer fields of a whole chunked body, as node:http's `req.trailers` (a streamed body's come on its last `HttpContent`). */
  get trailers(): Record<string, string | string[]> {
    return new HttpFields(this.#arena, this._headerFields().end()).record()
  }

  // ---- for the layout writer (http-request-layout.ts), which writes back what this reads ----

  /** @internal The bytes the request was read from. */
  get _arena(): Buffer {
    return this.#arena
  }

  /** @internal The offset of length-prefixed field `index` in `_arena`. */
  _field(index: HttpRequestField): number {
    return this.#field(index)
  }

  /** @internal The method a handler set (undefined: as read, in `_arena`). */
  get _setMethod(): string | undefined {
    return this.#edited & Edited.Method ? this.#method : undefined
  }

  /** @internal The target a handler set (undefined: as read, in `_arena`). */
  get _setUrl(): string | undefined {
    return this.#edited & Edited.Url ? this.#url : undefined
  }
}

/** The bits of `HttpRequest`'s record of what a handler set. */
const enum Edited {
  Method = 1,
  Url = 2,
}
