//! The byte layouts of protocol messages crossing the boundary: the kind and flag bytes of
//! WebSocket frames, RESP values and HTTP messages (the layouts are in channel/*_wire.rs).

#[cfg(feature = "napi")]
use napi_derive::napi;

/// The kind byte that starts a WebSocket frame crossing the boundary (channel/ws_wire.rs).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsFrameKind {
    /// A whole text message (UTF-8).
    Text = 1,
    /// A whole binary message.
    Binary = 2,
    /// A ping.
    Ping = 3,
    /// A pong.
    Pong = 4,
    /// A close frame: code (u16, big-endian; absent for none), then the reason.
    Close = 5,
}

/// The tag byte of a RESP value in its tag form (channel/resp_wire.rs).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RespTag {
    /// Simple string.
    Simple = 1,
    /// Simple error.
    Error = 2,
    /// Integer.
    Integer = 3,
    /// Bulk string.
    Bulk = 4,
    /// Null bulk string (RESP2).
    NullBulk = 5,
    /// Array.
    Array = 6,
    /// Null array (RESP2).
    NullArray = 7,
    /// Null (RESP3).
    Null = 8,
    /// Boolean (RESP3).
    Boolean = 9,
    /// Double (RESP3).
    Double = 10,
    /// Big number (RESP3).
    BigNumber = 11,
    /// Bulk error (RESP3).
    BulkError = 12,
    /// Verbatim string (RESP3).
    Verbatim = 13,
    /// Map (RESP3).
    Map = 14,
    /// Set (RESP3).
    Set = 15,
    /// Attribute (RESP3).
    Attribute = 16,
    /// Push (RESP3).
    Push = 17,
}

/// The kind byte that starts an HTTP message the binding delivers (channel/http_wire.rs).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpIn {
    /// A request head (and its aggregated body).
    Request = 0,
    /// A body piece.
    Content = 1,
    /// A response head (and its aggregated body), read by an `HttpClientCodec`.
    Response = 2,
}

/// The kind byte that starts an HTTP message JS writes (channel/http_wire.rs).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpOut {
    /// A response head (and body).
    Response = 1,
    /// A body chunk.
    Content = 2,
    /// A frozen response, by its id (`httpFreeze`).
    Frozen = 3,
    /// A request head (and body), written through an `HttpClientCodec`.
    Request = 4,
}

/// Bits of the flags byte of a delivered HTTP request (channel/http_wire.rs).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpRequestFlag {
    /// HTTP/1.1 (else 1.0).
    Http11 = 1,
    /// The connection stays open after the response.
    KeepAlive = 2,
    /// The body comes as content pieces, not aggregated.
    Streaming = 4,
    /// The request sent `Expect: 100-continue`.
    ExpectContinue = 8,
    /// The request asks to leave HTTP (`Connection: upgrade` with `Upgrade`, or `CONNECT`).
    Upgrade = 16,
}

/// The HTTP request layout (http_wire.rs, read by `HttpRequest` in src/http-request.ts),
/// declared once for both sides: the byte offset of each fixed field after the kind byte, and
/// where the length-prefixed fields ([`HttpRequestField`]) start. Adding a fixed field is a
/// variant here (and `Fields` moved past it), its write in `put_request` and its read in
/// `HttpRequest`; __test__/wire-layouts-http.spec.ts checks the two agree.
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpRequestAt {
    /// The request's id on its connection: f64.
    Id = 0,
    /// [`HttpRequestFlag`] bits: u8.
    Flags = 8,
    /// The HTTP version as a number, major * 10 + minor (10, 11): u8.
    Version = 9,
    /// The first length-prefixed field (the fixed part's length).
    Fields = 10,
}

/// The length-prefixed fields of an HTTP request after its fixed part ([`HttpRequestAt`]), in
/// order: `bytes := len:u32 data`, `fields := n:u32 (name:bytes value:bytes)*n`.
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpRequestField {
    /// The method token: bytes.
    Method = 0,
    /// The request target: bytes.
    Target = 1,
    /// The whole body (empty when streamed): bytes.
    Body = 2,
    /// The header fields: fields.
    Headers = 3,
    /// The trailer fields of a whole chunked body: fields.
    Trailers = 4,
}

/// The flags byte of an HTTP content piece, either way (channel/http_wire.rs).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpContentFlag {
    /// The message's last piece.
    Last = 1,
    /// Trailer fields follow the data (a last piece of a chunked body).
    Trailers = 2,
}

/// The flags byte of an HTTP response JS writes (channel/http_wire.rs).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpResponseFlag {
    /// The body follows as content chunks.
    Streaming = 1,
    /// The body is a file region, whose layout (file_wire.rs) follows the flags byte.
    File = 2,
}

/// The flags byte of an HTTP request JS writes through an `HttpClientCodec`
/// (channel/http_client_wire.rs).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpClientRequestFlag {
    /// The body follows as content chunks.
    Streaming = 1,
    /// HTTP/1.0 (else 1.1).
    Http10 = 2,
    /// The body is a file region, whose layout (file_wire.rs) follows the flags byte.
    File = 4,
}

/// The flags byte of an HTTP response an `HttpClientCodec` read
/// (channel/http_client_wire.rs).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpClientResponseFlag {
    /// HTTP/1.1 (else 1.0).
    Http11 = 1,
    /// The connection can carry further requests after this response.
    KeepAlive = 2,
    /// The body comes as content pieces, not aggregated.
    Streaming = 4,
    /// The response switched protocols (101, or a 2xx to `CONNECT`).
    Upgraded = 8,
}

/// The slots of the array `wsTopicStats()` returns (netloop_ws::TopicStats; channel/topics.rs).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicStatSlot {
    /// Publish calls.
    Published = 0,
    /// Frames encoded (one per publish that found a subscriber).
    Encoded = 1,
    /// Frame writes to subscribers.
    Delivered = 2,
    /// Messages a slow (unwritable) subscriber did not get.
    Dropped = 3,
    /// The array's length.
    Length = 4,
}
