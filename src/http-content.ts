/** `HttpContent`: a piece of a streamed HTTP body, read or written (see http.ts). */
import { fieldRecord, headerList, type HeaderInit } from './http-fields'

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
