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
 * The layouts both sides share are described in crates/wire/src/http_wire.rs. The messages
 * live in `http-request.ts` (and its writer `http-request-layout.ts`), `http-content.ts` and
 * `http-response.ts`; this module is their front door and the codec.
 */
import { NativeHandler } from './codecs'
import { NativeHandlerKind } from './protocol'
import { checkBoolean, checkInteger } from './errors'

export { HttpRequest } from './http-request'
export { HttpContent } from './http-content'
export { HttpResponse } from './http-response'

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
