/**
 * The HTTP codec's messages on the boundary: `HttpResponse`/`HttpContent` written by JS
 * encoded into the op arena (`writeHttp`; a frozen response is its 13-byte reference), and
 * the requests and body pieces of a delivery read back (`readHttp`). The layouts both sides
 * share are described in crates/node/src/channel/http_wire.rs.
 */
import { HttpContent, HttpResponse } from './http';
import { HttpClientRequest } from './http-client';
/** What JS writes through either HTTP codec. */
export type HttpOutbound = HttpResponse | HttpContent | HttpClientRequest;
/**
 * Lends a Buffer to the op batch (`OpStream.big`) and returns its index: a body of
 * `LEND_MIN` bytes or more travels that way, not copied into the layout (the native side takes
 * it without a copy, as a large write's Buffer).
 */
export type LendBig = (b: Buffer) => number;
/** Bodies from this size on are lent rather than copied (the op stream's large-write size). */
export declare const LEND_MIN: number;
