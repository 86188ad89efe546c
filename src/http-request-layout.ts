/**
 * An `HttpRequest` written back in the layout it was read in (crates/wire's `put_request`;
 * `HttpIn.Request` first), for a native handler after the JS handler that fires it on (read
 * there by `request_from_js`). A `method`, `url` or `headers` object a handler changed is
 * written as it is now; the rest is copied from the bytes the request was read from.
 */
import { HttpIn, HttpRequestAt, HttpRequestField, HttpRequestFlag } from './protocol'
import { bodySize, fieldsSize, putBody, putFields, putStr, type LendBig } from './http-wire'
import { HttpFields } from './http-fields'
import type { HttpRequest } from './http-request'

/** What `writeRequestLayout` writes: the changed header fields (undefined: as read) and where the trailers lie. */
interface Parts {
  headers: Array<[string, string]> | undefined
  fields: HttpFields
  trailersEnd: number
}

function partsOf(m: HttpRequest): Parts {
  const fields = m._headerFields()
  return { headers: fields.changed(), fields, trailersEnd: new HttpFields(m._arena, fields.end()).end() }
}

/** Where field `index` (`method`, `url` or `body`: `len:u32 data`) ends in the request's bytes. */
function fieldEnd(m: HttpRequest, index: HttpRequestField): number {
  const p = m._field(index)
  return p + 4 + m._arena.readUInt32LE(p)
}

/** Bytes `writeRequestLayout` takes (a body of `LEND_MIN` bytes or more is lent when `lend` is given). */
export function requestLayoutSize(m: HttpRequest, lend?: LendBig, parts = partsOf(m)): number {
  const string = (index: HttpRequestField, v: string | undefined) => (v !== undefined ? 4 + v.length : fieldEnd(m, index) - m._field(index))
  const { headers, fields, trailersEnd } = parts
  return (
    1 +
    HttpRequestAt.Fields +
    string(HttpRequestField.Method, m._setMethod) +
    string(HttpRequestField.Target, m._setUrl) +
    bodySize(m.body, lend) +
    (headers ? fieldsSize(headers) : fields.end() - fields.start()) +
    (trailersEnd - fields.end())
  )
}

/** Writes request `m` at `at` of `buf` (see the module docs); the end, or -1 if it does not fit. */
export function writeRequestLayout(m: HttpRequest, buf: Buffer, at: number, lend?: LendBig): number {
  const parts = partsOf(m)
  if (at + requestLayoutSize(m, lend, parts) > buf.length) return -1
  const a = m._arena
  const { headers, fields, trailersEnd } = parts
  buf[at] = HttpIn.Request
  const fixed = at + 1
  buf.writeDoubleLE(m.id, fixed + HttpRequestAt.Id)
  buf[fixed + HttpRequestAt.Flags] =
    (m.httpVersion === '1.1' ? HttpRequestFlag.Http11 : 0) |
    (m.keepAlive ? HttpRequestFlag.KeepAlive : 0) |
    (m.streaming ? HttpRequestFlag.Streaming : 0) |
    (m.expectContinue ? HttpRequestFlag.ExpectContinue : 0) |
    (m.upgrade ? HttpRequestFlag.Upgrade : 0)
  buf[fixed + HttpRequestAt.Version] = m.httpVersionMajor * 10 + m.httpVersionMinor
  let p = fixed + HttpRequestAt.Fields
  const method = m._setMethod
  const url = m._setUrl
  // In the fields' declared order (the reader's field walk counts on it).
  for (let i = HttpRequestField.Method; i <= HttpRequestField.Trailers; i++) {
    switch (i) {
      case HttpRequestField.Method:
        p = method !== undefined ? putStr(buf, method, p) : p + a.copy(buf, p, m._field(i), fieldEnd(m, i))
        break
      case HttpRequestField.Target:
        p = url !== undefined ? putStr(buf, url, p) : p + a.copy(buf, p, m._field(i), fieldEnd(m, i))
        break
      case HttpRequestField.Body:
        p = putBody(buf, m.body, p, lend)
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
