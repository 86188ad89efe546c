//! The messages of the codec: [`HttpRequest`] and [`HttpContent`] inbound, [`HttpResponse`]
//! and [`HttpContent`] outbound, with plain fields so a binding converts them field by field.
//!
//! Inbound bytes are zero-copy: a request's method, target and [`Headers`] are views of one
//! buffer holding its head, and an aggregated `Content-Length` body or a streamed piece is a
//! view of the bytes read (a chunked body delivered whole is the one copy, to join its chunks).

use bytes::Bytes;
use netloop_transport::FileRegion;

/// A list of header fields written by the application (response headers, trailers), or the
/// trailers of a request; names and values as given, in order.
pub type HeaderList = Vec<(Bytes, Bytes)>;

/// The HTTP version of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// HTTP/1.0.
    Http10,
    /// HTTP/1.1.
    Http11,
}

impl Version {
    /// `"HTTP/1.0"` or `"HTTP/1.1"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
        }
    }
}

/// The byte ranges of one header field in its head buffer: name start and end, value start
/// and end.
pub type HeaderSpan = [u32; 4];

/// Fields whose spans a message holds in itself (no allocation): the requests of load tools,
/// `curl` and health checks have one to four fields.
const INLINE_SPANS: usize = 4;

/// The spans of a head's fields: up to [`INLINE_SPANS`] in place, more in a vector.
#[derive(Clone)]
pub(crate) enum Spans {
    Inline(u8, [HeaderSpan; INLINE_SPANS]),
    Heap(Vec<HeaderSpan>),
}

impl Spans {
    fn as_slice(&self) -> &[HeaderSpan] {
        match self {
            Spans::Inline(n, spans) => &spans[..usize::from(*n)],
            Spans::Heap(spans) => spans,
        }
    }
}

impl Default for Spans {
    fn default() -> Self {
        Spans::Inline(0, [[0; 4]; INLINE_SPANS])
    }
}

impl PartialEq for Spans {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Spans {}

impl std::fmt::Debug for Spans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl FromIterator<HeaderSpan> for Spans {
    fn from_iter<I: IntoIterator<Item = HeaderSpan>>(iter: I) -> Self {
        let mut inline = [[0; 4]; INLINE_SPANS];
        let mut iter = iter.into_iter();
        for (n, slot) in inline.iter_mut().enumerate() {
            match iter.next() {
                Some(span) => *slot = span,
                None => return Spans::Inline(n as u8, inline),
            }
        }
        match iter.next() {
            None => Spans::Inline(INLINE_SPANS as u8, inline),
            Some(next) => {
                let mut heap = inline.to_vec();
                heap.push(next);
                heap.extend(iter);
                Spans::Heap(heap)
            }
        }
    }
}

/// The header fields of a request: one buffer (the whole head) and the byte ranges of each
/// name and value in it, in the order received. Values have their surrounding whitespace
/// removed; names keep their case.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers {
    buf: Bytes,
    spans: Spans,
}

impl Headers {
    pub(crate) fn new(buf: Bytes, spans: Spans) -> Self {
        Headers { buf, spans }
    }

    /// Fields whose names and values lie in `buf` at `spans` (a binding that receives a
    /// request's fields in a layout of its own builds them without a copy). `None` if a span
    /// ends before it starts or past `buf`. Names and values are taken as they are: nothing
    /// checks they are valid tokens or field values.
    pub fn from_spans(buf: Bytes, spans: Vec<HeaderSpan>) -> Option<Self> {
        let ok = |from: u32, to: u32| from <= to && to as usize <= buf.len();
        spans
            .iter()
            .all(|s| ok(s[0], s[1]) && ok(s[2], s[3]))
            .then_some(Headers {
                buf,
                spans: Spans::Heap(spans),
            })
    }

    /// The buffer the spans point into (a binding can hand it over whole, with the spans).
    pub fn buffer(&self) -> &Bytes {
        &self.buf
    }

    /// The byte ranges of every field (see [`HeaderSpan`]).
    pub fn spans(&self) -> &[HeaderSpan] {
        self.spans.as_slice()
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.spans.as_slice().len()
    }

    /// True when there is no field.
    pub fn is_empty(&self) -> bool {
        self.spans.as_slice().is_empty()
    }

    fn range(&self, from: u32, to: u32) -> &[u8] {
        &self.buf[from as usize..to as usize]
    }

    /// The name of field `i`. Panics if `i >= len()`.
    pub fn name(&self, i: usize) -> &[u8] {
        let s = self.spans.as_slice()[i];
        self.range(s[0], s[1])
    }

    /// The value of field `i`. Panics if `i >= len()`.
    pub fn value(&self, i: usize) -> &[u8] {
        let s = self.spans.as_slice()[i];
        self.range(s[2], s[3])
    }

    /// The name of field `i` as a view of the head buffer (no copy).
    pub fn name_bytes(&self, i: usize) -> Bytes {
        let s = self.spans.as_slice()[i];
        self.buf.slice(s[0] as usize..s[1] as usize)
    }

    /// The value of field `i` as a view of the head buffer (no copy).
    pub fn value_bytes(&self, i: usize) -> Bytes {
        let s = self.spans.as_slice()[i];
        self.buf.slice(s[2] as usize..s[3] as usize)
    }

    /// Every field, as (name, value), in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.spans
            .as_slice()
            .iter()
            .map(|s| (self.range(s[0], s[1]), self.range(s[2], s[3])))
    }

    /// The value of the first field named `name` (ASCII case-insensitive).
    pub fn get<'a>(&'a self, name: &'a str) -> Option<&'a [u8]> {
        self.get_all(name).next()
    }

    /// The values of every field named `name` (ASCII case-insensitive), in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v)
    }

    /// The fields as a list of (name, value) views.
    pub fn to_list(&self) -> HeaderList {
        (0..self.len())
            .map(|i| (self.name_bytes(i), self.value_bytes(i)))
            .collect()
    }
}

/// A request (Netty's `FullHttpRequest`, or its `HttpRequest` head when `streaming`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// The request's number on its connection, from 0; a response names it in
    /// [`HttpResponse::request_id`] to be written out of order.
    pub id: u64,
    /// The method token as received (`GET`, ...).
    pub method: Bytes,
    /// The request target as received (`/path?query`, `*`, an absolute URI, ...).
    pub target: Bytes,
    /// HTTP/1.0 or HTTP/1.1.
    pub version: Version,
    /// The header fields.
    pub headers: Headers,
    /// The whole body (empty when there is none, or when `streaming`).
    pub body: Bytes,
    /// The body is larger than the aggregation limit and follows as [`HttpContent`] messages
    /// with this `id`, the last one with `last` set.
    pub streaming: bool,
    /// The trailer fields of a chunked body delivered whole (empty otherwise).
    pub trailers: HeaderList,
    /// What the request asks for the connection: HTTP/1.1 without `Connection: close`, or
    /// HTTP/1.0 with `Connection: keep-alive`.
    pub keep_alive: bool,
    /// The request carried `Expect: 100-continue` (the codec answers 100 Continue itself).
    pub expect_continue: bool,
    /// The request asks to leave HTTP (node:http's `req.upgrade`): `Connection: upgrade`
    /// with an `Upgrade` field, or `CONNECT`. The codec reads nothing after it until its
    /// response says what follows: `101 Switching Protocols` (a 2xx for `CONNECT`) hands the
    /// connection over (the codec passes bytes through both ways from then on), any other
    /// final response declines and HTTP goes on.
    pub upgrade: bool,
}

impl HttpRequest {
    /// True for a `HEAD` request (its response is written without a body).
    pub fn is_head(&self) -> bool {
        &self.method[..] == b"HEAD"
    }

    /// True for a `CONNECT` request (a tunnel: a 2xx response hands the connection over).
    pub fn is_connect(&self) -> bool {
        &self.method[..] == b"CONNECT"
    }
}

/// A piece of a streamed body (Netty's `HttpContent`; with `last`, `LastHttpContent`).
///
/// Inbound, `request_id` names the request it belongs to. Outbound, it continues the
/// streamed response of `request_id` (`None`: the response being streamed now, the oldest).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpContent {
    /// The request this piece belongs to (inbound always set).
    pub request_id: Option<u64>,
    /// The bytes (may be empty, typically in the last piece).
    pub data: Bytes,
    /// This is the end of the body.
    pub last: bool,
    /// Trailer fields, in the last piece of a chunked body.
    pub trailers: HeaderList,
}

impl HttpContent {
    /// A piece of the current streamed response.
    pub fn new(data: impl Into<Bytes>) -> Self {
        HttpContent {
            data: data.into(),
            ..HttpContent::default()
        }
    }

    /// The last piece of the current streamed response.
    pub fn last(data: impl Into<Bytes>) -> Self {
        HttpContent {
            data: data.into(),
            last: true,
            ..HttpContent::default()
        }
    }
}

/// A response to write. The codec adds `Content-Length` (or `Transfer-Encoding: chunked`
/// when `streaming`), `Date`, and `Connection` when it closes or keeps an HTTP/1.0
/// connection alive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpResponse {
    /// The request this answers; `None`: the oldest request without a response yet (in-order
    /// writes). Responses are written in request order whatever order they come in.
    pub request_id: Option<u64>,
    /// Status code, 100..=999. 1xx are interim responses: the final one is still expected.
    pub status: u16,
    /// Reason phrase; `None`: the standard one for the status.
    pub reason: Option<Bytes>,
    /// Header fields, in order.
    pub headers: HeaderList,
    /// The body (not written for `HEAD` requests and 1xx, 204 and 304 responses).
    pub body: Bytes,
    /// A file region as the body instead of `body` (which must then be empty): sent after the
    /// head without a copy through user space (`sendfile`), framed by `Content-Length` (its
    /// remaining bytes). Not with `streaming`.
    pub file: Option<FileRegion>,
    /// The body follows as [`HttpContent`] writes, ended by one with `last` set: chunked for
    /// HTTP/1.1 unless a `Content-Length` header is given; for HTTP/1.0 the connection closes
    /// after it.
    pub streaming: bool,
}

impl HttpResponse {
    /// A response with `status` and no header or body yet.
    pub fn new(status: u16) -> Self {
        HttpResponse {
            status,
            ..HttpResponse::default()
        }
    }

    /// Sends `region` as the body (see [`file`](Self::file)).
    pub fn with_file(mut self, region: FileRegion) -> Self {
        self.file = Some(region);
        self
    }

    /// The body's length: the file region's remaining bytes, or the body's.
    pub fn body_len(&self) -> usize {
        self.file.as_ref().map_or(self.body.len(), |f| {
            usize::try_from(f.remaining()).unwrap_or(usize::MAX)
        })
    }

    /// Adds a header field.
    pub fn header(mut self, name: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// Names the request this answers.
    pub fn for_request(mut self, id: u64) -> Self {
        self.request_id = Some(id);
        self
    }

    /// Marks the body as streamed (see [`HttpResponse::streaming`]).
    pub fn streamed(mut self) -> Self {
        self.streaming = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lookups_are_case_insensitive_views_of_one_buffer() {
        let buf = Bytes::from_static(b"Host: a\r\nX-A: 1\r\nx-a: 2\r\n");
        let h = Headers::new(
            buf.clone(),
            [[0, 4, 6, 7], [9, 12, 14, 15], [17, 20, 22, 23]]
                .into_iter()
                .collect(),
        );
        assert_eq!(h.get("host"), Some(&b"a"[..]));
        assert_eq!(h.get_all("X-a").collect::<Vec<_>>(), [b"1", b"2"]);
        assert_eq!(h.get("missing"), None);
        let v = h.value_bytes(1);
        assert_eq!(&v[..], b"1");
        assert_eq!(v.as_ptr(), buf[14..].as_ptr(), "a view, not a copy");
    }

    #[test]
    fn fields_from_spans_are_views_and_spans_out_of_range_are_refused() {
        let buf = Bytes::from_static(b"X-A1");
        let h = Headers::from_spans(buf.clone(), vec![[0, 3, 3, 4]]).expect("in range");
        assert_eq!(h.get("x-a"), Some(&b"1"[..]));
        assert_eq!(
            h.value_bytes(0).as_ptr(),
            buf[3..].as_ptr(),
            "a view, not a copy"
        );
        assert!(
            Headers::from_spans(buf.clone(), vec![[0, 3, 3, 5]]).is_none(),
            "past the end"
        );
        assert!(
            Headers::from_spans(buf, vec![[2, 1, 3, 4]]).is_none(),
            "ends before it starts"
        );
    }
}

#[cfg(test)]
mod span_tests {
    use super::*;

    #[test]
    fn spans_up_to_four_stay_inline_and_more_go_to_a_vector_in_order() {
        for n in 0..10u32 {
            let want: Vec<HeaderSpan> = (0..n).map(|i| [i, i + 1, i + 2, i + 3]).collect();
            let spans: Spans = want.iter().copied().collect();
            assert_eq!(spans.as_slice(), &want[..]);
            assert_eq!(matches!(spans, Spans::Inline(..)), n <= 4, "{n} spans");
        }
    }
}
