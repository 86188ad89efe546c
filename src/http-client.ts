/**
 * The client side of HTTP/1.1, natively (Netty's `HttpClientCodec` + `HttpObjectAggregator`
 * in one native handler, crates/http): `HttpClientRequest`s written by JS are framed in Rust
 * (`Content-Length`, or chunked for a streamed body; `Host` from the options), responses are
 * parsed there as strictly as the server codec parses requests and reach JS once each as an
 * `HttpClientResponse`, in request order (pipelining allowed), with the framing rules of
 * RFC 9112 (HEAD, 1xx, 204, 304, chunked, `Content-Length`, until close). A malformed
 * response reaches `exceptionCaught` with llhttp's code (`HPE_*`) and closes the connection.
 *
 * ```ts
 * ch.pipeline.addLast('http', new HttpClientCodec({ host: 'example.test' })).addLast('app', {
 *   channelActive: (ctx) => ctx.writeAndFlush(new HttpClientRequest('GET', '/')),
 *   channelRead: (ctx, res: HttpClientResponse) => console.log(res.statusCode, res.body.toString()),
 * })
 * ```
 *
 * The layouts both sides share are described in crates/wire/src/http_client_wire.rs.
 */
import { NativeHandler } from './codecs'
import { HttpClientResponseFlag as F, NativeHandlerKind } from './protocol'
import { NetloopError, checkInteger, invalidArgType } from './errors'
import { EMPTY, HttpFields, HttpHeaderView, bodyBuffer, headerList, latin1, type HeaderInit } from './http-fields'
import { FileRegion } from './file-region'

/** Limits of an `HttpClientCodec`, and the `Host` it adds. */
export interface HttpClientCodecOptions {
  /** Status line and headers of a response, in bytes (default 16384): `HPE_HEADER_OVERFLOW` beyond. */
  maxHeadSize?: number
  /** Header fields of a response (default 100): `ERR_HTTP_TOO_MANY_HEADERS` beyond. */
  maxHeaderCount?: number
  /** Body of a response, in bytes (default: no limit): `ERR_HTTP_BODY_TOO_LARGE` beyond. */
  maxBodySize?: number
  /** Bodies up to this size come whole with their response; larger ones stream as `HttpContent` (default 65536; 0 streams every body). */
  aggregateLimit?: number
  /** Added as `Host` to requests that have none (HTTP/1.1 requires one). */
  host?: string
}

/** Frames requests and parses responses natively. One per connection, like Netty's. */
export class HttpClientCodec extends NativeHandler {
  constructor(o: HttpClientCodecOptions = {}) {
    if (o === null || typeof o !== 'object') throw invalidArgType('options', 'object', o)
    const n = (name: keyof HttpClientCodecOptions, v: unknown, d: number, min: number, max = 0x7fffffff) => (v === undefined ? d : checkInteger(name, v, min, max))
    if (o.host !== undefined && (typeof o.host !== 'string' || o.host.length === 0)) throw invalidArgType('host', 'non-empty string', o.host)
    super(
      NativeHandlerKind.HttpClient,
      [
        n('maxHeadSize', o.maxHeadSize, 16 * 1024, 64),
        n('maxHeaderCount', o.maxHeaderCount, 100, 1, 100_000),
        n('maxBodySize', o.maxBodySize, -1, 0, Number.MAX_SAFE_INTEGER),
        n('aggregateLimit', o.aggregateLimit, 64 * 1024, 0),
      ],
      o.host === undefined ? undefined : [Buffer.from(o.host, 'latin1')],
    )
  }
}

/** A request to write through an `HttpClientCodec` (framed natively; see the module docs). */
export class HttpClientRequest {
  readonly headers: Array<[string, string]>
  readonly body: Buffer
  /** The body as a file region (sent with `sendfile`, framed by `Content-Length`), or undefined. */
  readonly file: FileRegion | undefined
  /** The body follows as `HttpContent` writes, the last with `last` set (chunked unless a `content-length` is given). */
  streaming = false
  /** `'1.0'` sends an HTTP/1.0 request line (and a streamed body then needs a `content-length`). */
  httpVersion: '1.1' | '1.0' = '1.1'

  constructor(
    /** The method token (`GET`, `POST`, ...); checked when written (`ERR_INVALID_HTTP_TOKEN`). */
    readonly method: string,
    /** The request target as sent (`/path?query`, or `host:port` for `CONNECT`). */
    readonly url: string,
    headers: HeaderInit = [],
    body: string | Uint8Array | FileRegion = EMPTY,
  ) {
    if (typeof method !== 'string') throw invalidArgType('method', 'string', method)
    if (typeof url !== 'string') throw invalidArgType('url', 'string', url)
    // node:http's rule: a target is sent as it is given, so it must be escaped already.
    // eslint-disable-next-line no-control-regex
    if (url.length === 0 || /[^\x21-\x7e]/.test(url)) throw new NetloopError('ERR_UNESCAPED_CHARACTERS', 'Request path contains unescaped characters')
    this.headers = headerList(headers)
    if (body instanceof FileRegion) {
      this.body = EMPTY
      this.file = body
    } else {
      this.body = bodyBuffer(body)
    }
  }

  /** Streams the body: `HttpContent` writes follow, the last with `last` set. */
  streamed(): this {
    if (this.file) throw new NetloopError('ERR_HTTP_FILE_BODY', 'A request whose body is a FileRegion is not streamed')
    this.streaming = true
    return this
  }
}

/** A response, as parsed natively. Strings and `body` are views of the bytes read, made on first use. */
export class HttpClientResponse extends HttpHeaderView {
  #arena: Buffer
  /** Offset of the reason's length field. */
  #at: number
  #statusMessage: string | undefined
  #body: Buffer | undefined
  #headerFields: HttpFields | undefined
  #trailerFields: HttpFields | undefined
  /** The number (0, 1, ...) of the request written on this connection that this answers (a refused write takes a number too). */
  readonly id: number
  readonly statusCode: number
  readonly httpVersion: '1.0' | '1.1'
  /** The connection can carry further requests after this response. */
  readonly keepAlive: boolean
  /** The body is larger than `aggregateLimit` and follows as `HttpContent` messages. */
  readonly streaming: boolean
  /**
   * The response switched protocols (`101`, or a 2xx to `CONNECT`): the bytes that follow
   * reach the next handlers as Buffers, and Buffer writes go out as they are.
   */
  readonly upgraded: boolean

  /** @internal */
  constructor(arena: Buffer, at: number) {
    super()
    this.#arena = arena
    this.id = arena.readDoubleLE(at)
    const flags = arena[at + 8]
    this.statusCode = arena.readUInt16LE(at + 9)
    this.#at = at + 11
    this.httpVersion = flags & F.Http11 ? '1.1' : '1.0'
    this.keepAlive = (flags & F.KeepAlive) !== 0
    this.streaming = (flags & F.Streaming) !== 0
    this.upgraded = (flags & F.Upgraded) !== 0
  }

  /** An interim response (1xx other than 101, e.g. `100 Continue`): the final one follows, with the same `id`. */
  get informational(): boolean {
    return this.statusCode < 200 && this.statusCode !== 101
  }

  /** The reason phrase as sent (`OK`, ...). */
  get statusMessage(): string {
    if (this.#statusMessage === undefined) {
      const len = this.#arena.readUInt32LE(this.#at)
      this.#statusMessage = latin1(this.#arena, this.#at + 4, this.#at + 4 + len)
    }
    return this.#statusMessage
  }

  /** Offset of the body's length field. */
  #bodyAt(): number {
    return this.#at + 4 + this.#arena.readUInt32LE(this.#at)
  }

  /** The whole body (empty when there is none, or when `streaming`). */
  get body(): Buffer {
    if (this.#body === undefined) {
      const p = this.#bodyAt()
      const len = this.#arena.readUInt32LE(p)
      this.#body = len === 0 ? EMPTY : this.#arena.subarray(p + 4, p + 4 + len)
    }
    return this.#body
  }

  /** @internal The header fields, found on first use. */
  protected _headerFields(): HttpFields {
    if (this.#headerFields === undefined) {
      const p = this.#bodyAt()
      this.#headerFields = new HttpFields(this.#arena, p + 4 + this.#arena.readUInt32LE(p))
    }
    return this.#headerFields
  }

  /** The trailer fields of a whole chunked body, as node:http's `res.trailers` (a streamed body's come on its last `HttpContent`). */
  get trailers(): Record<string, string | string[]> {
    this.#trailerFields ??= new HttpFields(this.#arena, this._headerFields().end())
    return this.#trailerFields.record()
  }
}
