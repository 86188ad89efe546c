//! The messages of the client codec: [`HttpClientRequest`] (and [`HttpContent`](crate::HttpContent)
//! for a streamed body) outbound, [`HttpClientResponse`] (and `HttpContent` for a streamed
//! body) inbound, with plain fields so a binding converts them field by field.
//!
//! Inbound bytes are zero-copy as on the server side: a response's reason and [`Headers`] are
//! views of one buffer holding its head, a `Content-Length` or close-delimited body delivered
//! whole is a view of the bytes read (a chunked body delivered whole is joined: one copy).

use bytes::Bytes;

use netloop_transport::FileRegion;

use crate::message::{HeaderList, Headers, Version};

/// A request to write (Netty's `FullHttpRequest`, or its `HttpRequest` head when
/// `streaming`). The codec adds `Content-Length` or `Transfer-Encoding: chunked` when the
/// request has neither, and `Host` from the configuration when it has none.
#[derive(Debug, Clone)]
pub struct HttpClientRequest {
    /// The method token (`GET`, ...).
    pub method: Bytes,
    /// The request target (`/path?query`, an absolute URI, `host:port` for `CONNECT`...).
    pub target: Bytes,
    /// HTTP/1.0 or HTTP/1.1 (the default).
    pub version: Version,
    /// Header fields, in order, written as given.
    pub headers: HeaderList,
    /// The whole body (ignored when `streaming`).
    pub body: Bytes,
    /// A file region as the body instead of `body` (which must then be empty): sent after the
    /// head with `sendfile`, framed by `Content-Length`. Not with `streaming` or chunked.
    pub file: Option<FileRegion>,
    /// The body follows as [`HttpContent`](crate::HttpContent) writes, the one with `last`
    /// ends it (trailers allowed there): chunked unless a `Content-Length` header is given.
    pub streaming: bool,
}

impl HttpClientRequest {
    /// An HTTP/1.1 request with no header and no body yet.
    pub fn new(method: impl Into<Bytes>, target: impl Into<Bytes>) -> Self {
        HttpClientRequest {
            method: method.into(),
            target: target.into(),
            version: Version::Http11,
            headers: Vec::new(),
            body: Bytes::new(),
            file: None,
            streaming: false,
        }
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

    /// Marks the body as streamed (see [`HttpClientRequest::streaming`]).
    pub fn streamed(mut self) -> Self {
        self.streaming = true;
        self
    }

    /// Sets the version.
    pub fn version(mut self, version: Version) -> Self {
        self.version = version;
        self
    }
}

/// A response read (Netty's `FullHttpResponse`, or its `HttpResponse` head when `streaming`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpClientResponse {
    /// The number (0, 1, 2, ...) of the request on this channel it answers: every
    /// `HttpClientRequest` written to the codec gets the next one, in write order.
    pub id: u64,
    /// Status code, 100..=999.
    pub status: u16,
    /// Reason phrase as received (may be empty).
    pub reason: Bytes,
    /// HTTP/1.0 or HTTP/1.1.
    pub version: Version,
    /// The header fields, views of the bytes read.
    pub headers: Headers,
    /// The whole body (empty when there is none, or when `streaming`).
    pub body: Bytes,
    /// The body is larger than the aggregation limit and follows as
    /// [`HttpContent`](crate::HttpContent) messages with `request_id: Some(id)`, the last
    /// with `last` set (and the trailers of a chunked body).
    pub streaming: bool,
    /// The trailer fields of a chunked body delivered whole (empty otherwise).
    pub trailers: HeaderList,
    /// The connection can carry further requests after this response: HTTP/1.1 without a
    /// `close` token in `Connection`, HTTP/1.0 with a `keep-alive` one, and a body whose end
    /// is framed (not delimited by the connection closing).
    pub keep_alive: bool,
    /// This response switched protocols (`101` to a request with `Upgrade`, or a 2xx to
    /// `CONNECT`): later bytes pass through both ways as `Message::Bytes`.
    pub upgraded: bool,
}

impl HttpClientResponse {
    /// True for an interim response (1xx other than 101): the final one is still to come,
    /// for the same `id`.
    pub fn is_informational(&self) -> bool {
        (100..200).contains(&self.status) && self.status != 101
    }
}
