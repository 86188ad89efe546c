//! HTTP/1.1 codecs for netloop pipelines, in pure Rust. The server side: Netty's
//! `HttpServerCodec`, `HttpObjectAggregator` and `HttpServerKeepAliveHandler` as one native
//! handler, [`HttpServerCodec`]. The client side: Netty's `HttpClientCodec` and
//! `HttpObjectAggregator` as one, [`HttpClientCodec`].
//!
//! ```
//! use netloop_http::{HttpServerCodec, HttpServerConfig, HttpRequest, HttpResponse};
//! use netloop_transport::{ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message};
//! use std::rc::Rc;
//!
//! struct Hello;
//! impl ChannelHandler for Hello {
//!     fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
//!         if let Ok(req) = msg.downcast::<HttpRequest>() {
//!             let res = HttpResponse::new(200).header("Content-Type", "text/plain").body("hi");
//!             ctx.write_and_flush(Message::user(res.for_request(req.id)));
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let codec = HttpServerCodec::new(HttpServerConfig::default()).unwrap();
//! let ch = EmbeddedChannel::new(vec![("http", Rc::new(codec)), ("app", Rc::new(Hello))]);
//! ch.write_inbound(&b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..]);
//! let out = ch.read_outbound().unwrap();
//! let text = String::from_utf8_lossy(out.as_bytes().unwrap()).into_owned();
//! assert!(text.starts_with("HTTP/1.1 200 OK\r\n") && text.ends_with("\r\n\r\nhi"));
//! ```
//!
//! Inbound, each request is one [`HttpRequest`] message holding its whole body, up to
//! [`HttpServerConfig::aggregate_limit`]; a larger body is streamed: the request comes with
//! `streaming` set, then [`HttpContent`] messages, the last with `last` set. Outbound, write
//! an [`HttpResponse`] (whole, or `streaming` followed by `HttpContent` writes); the codec adds
//! `Content-Length` or chunked framing, `Date` and `Connection`, writes responses in request
//! order (pipelining: a response names its request in `request_id`, or answers the oldest
//! one), sends `100 Continue`, and keeps the connection alive or closes it by the rules of
//! HTTP/1.0 and 1.1.
//!
//! Requests it refuses (malformed, smuggling attempts, over a limit) are answered natively
//! with 400, 413, 414, 417, 431 or 501, then the connection closes; a request head that does
//! not arrive within [`HttpServerConfig::header_timeout`] is answered with 408 and closes too; the [`HttpError`] (with a
//! stable code, llhttp's `HPE_*` where node has one) reaches `exceptionCaught`.
//!
//! The client codec writes [`HttpClientRequest`]s (whole, or `streaming` followed by
//! `HttpContent` writes; it adds `Content-Length` or chunked framing and, if configured,
//! `Host`), pipelined as the application likes, and reads [`HttpClientResponse`]s, each naming
//! the request it answers in `id`: whole up to [`HttpClientConfig::aggregate_limit`], else
//! streamed like request bodies; interim (1xx) responses come before the final one; after a
//! `101` or a 2xx to `CONNECT` bytes pass through both ways. A response that breaks the
//! grammar or the framing rules is an [`HttpError`] in `exceptionCaught` (llhttp's `HPE_*`
//! code) and the connection closes.
//!
//! Layers: [`RequestDecoder`] parses requests from bytes without a pipeline (the fuzz target
//! and the benchmark use it); [`HttpServerCodec`] adds the response side and the pipeline.
//! Likewise [`ResponseDecoder`] parses responses, told what each request sent asked
//! ([`SentRequest`]), and [`HttpClientCodec`] adds the request side.
//!
//! Ground rules shared by every module:
//! - Single-threaded values: a codec belongs to one channel and runs on its loop thread.
//! - No input panics: bad requests are refused, bad responses fail their write's promise
//!   (client side: bad responses close the connection, bad requests fail their write).
//! - Heads (requests and responses) are parsed by httparse; what httparse tolerates and
//!   llhttp does not (bare LF or CR, obs-fold, control characters) is checked byte by byte
//!   before it runs.
//! - Zero copy: heads, headers and bodies are views of the bytes read (a chunked body
//!   delivered whole is joined, its one copy).
//!
//! Why these choices: docs/decisions/0009-http-codec.md.

#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod batch;
mod body;
mod chunked;
mod client;
mod client_config;
mod client_message;
mod config;
mod date;
mod decoder;
mod encoder;
mod error;
mod fields;
mod frozen;
mod handler;
mod head;
mod head_timer;
mod input;
mod message;
mod plain_head;
mod queue;
mod request_encoder;
mod response_decoder;
mod response_head;
mod scan;
mod spare;
mod status;

/// The `bytes` crate this API is written against.
pub use bytes;

pub use chunked::MAX_CHUNK_LINE;
pub use client::HttpClientCodec;
pub use client_config::HttpClientConfig;
pub use client_message::{HttpClientRequest, HttpClientResponse};
pub use config::{HttpServerConfig, MAX_HEAD_SIZE_LIMIT};
pub use date::{coarse_wall_clock, format_date, DateValue, DATE_LEN};
pub use decoder::{Decoded, RequestDecoder, RequestStart};
pub use error::{ConfigError, HttpError};
pub use frozen::FrozenResponse;
pub use handler::HttpServerCodec;
pub use input::Input;
pub use message::{
    HeaderList, HeaderSpan, Headers, HttpContent, HttpRequest, HttpResponse, Version,
};
pub use response_decoder::{DecodedResponse, ResponseDecoder};
pub use response_head::SentRequest;
pub use spare::{boxed_frozen, boxed_request, recycle_request};
pub use status::reason_phrase;
