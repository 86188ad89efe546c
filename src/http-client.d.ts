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
 * The layouts both sides share are described in crates/node/src/channel/http_client_wire.rs.
 */
import { NativeHandler } from './codecs';
import { HttpHeaderView, type HeaderInit } from './http-fields';
import { FileRegion } from './file-region';
/** Limits of an `HttpClientCodec`, and the `Host` it adds. */
export interface HttpClientCodecOptions {
    /** Status line and headers of a response, in bytes (default 16384): `HPE_HEADER_OVERFLOW` beyond. */
    maxHeadSize?: number;
    /** Header fields of a response (default 100): `ERR_HTTP_TOO_MANY_HEADERS` beyond. */
    maxHeaderCount?: number;
    /** Body of a response, in bytes (default: no limit): `ERR_HTTP_BODY_TOO_LARGE` beyond. */
    maxBodySize?: number;
    /** Bodies up to this size come whole with their response; larger ones stream as `HttpContent` (default 65536; 0 streams every body). */
    aggregateLimit?: number;
    /** Added as `Host` to requests that have none (HTTP/1.1 requires one). */
    host?: string;
}
/** Frames requests and parses responses natively. One per connection, like Netty's. */
export declare class HttpClientCodec extends NativeHandler {
    constructor(o?: HttpClientCodecOptions);
}
/** A request to write through an `HttpClientCodec` (framed natively; see the module docs). */
export declare class HttpClientRequest {
    /** The method token (`GET`, `POST`, ...); checked when written (`ERR_INVALID_HTTP_TOKEN`). */
    readonly method: string;
    /** The request target as sent (`/path?query`, or `host:port` for `CONNECT`). */
    readonly url: string;
    readonly headers: Array<[string, string]>;
    readonly body: Buffer;
    /** The body as a file region (sent with `sendfile`, framed by `Content-Length`), or undefined. */
    readonly file: FileRegion | undefined;
    /** The body follows as `HttpContent` writes, the last with `last` set (chunked unless a `content-length` is given). */
    streaming: boolean;
    /** `'1.0'` sends an HTTP/1.0 request line (and a streamed body then needs a `content-length`). */
    httpVersion: '1.1' | '1.0';
    constructor(
    /** The method token (`GET`, `POST`, ...); checked when written (`ERR_INVALID_HTTP_TOKEN`). */
    method: string, 
    /** The request target as sent (`/path?query`, or `host:port` for `CONNECT`). */
    url: string, headers?: HeaderInit, body?: string | Uint8Array | FileRegion);
    /** Streams the body: `HttpContent` writes follow, the last with `last` set. */
    streamed(): this;
}
/** A response, as parsed natively. Strings and `body` are views of the bytes read, made on first use. */
export declare class HttpClientResponse extends HttpHeaderView {
    #private;
    /** The number (0, 1, ...) of the request written on this connection that this answers (a refused write takes a number too). */
    readonly id: number;
    readonly statusCode: number;
    readonly httpVersion: '1.0' | '1.1';
    /** The connection can carry further requests after this response. */
    readonly keepAlive: boolean;
    /** The body is larger than `aggregateLimit` and follows as `HttpContent` messages. */
    readonly streaming: boolean;
    /**
     * The response switched protocols (`101`, or a 2xx to `CONNECT`): the bytes that follow
     * reach the next handlers as Buffers, and Buffer writes go out as they are.
     */
    readonly upgraded: boolean;
    /** An interim response (1xx other than 101, e.g. `100 Continue`): the final one follows, with the same `id`. */
    get informational(): boolean;
    /** The reason phrase as sent (`OK`, ...). */
    get statusMessage(): string;
    /** The whole body (empty when there is none, or when `streaming`). */
    get body(): Buffer;
    /** The trailer fields of a whole chunked body, as node:http's `res.trailers` (a streamed body's come on its last `HttpContent`). */
    get trailers(): Record<string, string | string[]>;
}
