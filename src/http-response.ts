/**
 * `HttpResponse`: a response JS writes, framed natively by the codec (see http.ts), and its
 * frozen form (`freeze()`: encoded natively once, written as a reference).
 */
import { native } from './binding'
import { httpBytes } from './http-wire'
import { FileRegion } from './file-region'
import { NetloopError, fromNative, outOfRange } from './errors'
import { EMPTY, bodyBuffer, headerList, type HeaderInit } from './http-fields'
import type { HttpRequest } from './http-request'

/** Frees the native copy of a frozen response once its object is collected. */
const frozenIds = new FinalizationRegistry<number>((id) => native.httpRelease(id))

/** A response to write; framed natively (see http.ts). */
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
