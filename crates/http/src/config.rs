//! [`HttpServerConfig`]: the limits and switches of one server's codec, a plain struct so a
//! binding can fill it from an options object.

use std::time::{Duration, SystemTime};

use crate::error::{invalid_config, ConfigError};

/// Limits and switches of an [`HttpServerCodec`](crate::HttpServerCodec).
///
/// Every limit is answered natively with its status code, then the connection closes.
#[derive(Debug, Clone)]
pub struct HttpServerConfig {
    /// Largest request head (request line, header lines and the empty line), in bytes; above
    /// it: 431. Default 16 KiB (node's `maxHeaderSize`). Also bounds a chunked body's trailers.
    pub max_head_size: usize,
    /// Longest request target, in bytes; above it: 414. Default 8 KiB. A request line longer
    /// than this plus 64 bytes is refused before it is complete.
    pub max_uri_length: usize,
    /// Most header fields in one head; above it: 431. Default 100.
    pub max_header_count: usize,
    /// Largest request body, in bytes; above it: 413 (at once when `Content-Length` says so,
    /// else when the chunked body passes it). Default 16 MiB; `u64::MAX` for none.
    pub max_body_size: u64,
    /// Bodies up to this size are delivered whole, in the `HttpRequest` (one message per
    /// request); larger ones are streamed: the request comes with `streaming` set and the body
    /// follows as `HttpContent` messages. Default 64 KiB. 0 streams every body.
    pub aggregate_limit: usize,
    /// Refuse (400) an HTTP/1.1 request without a `Host` header (node's `requireHostHeader`).
    /// Several `Host` headers are refused whatever this says. Default true.
    pub require_host: bool,
    /// Add a `Date` header to responses that have none. Default true.
    pub date_header: bool,
    /// The wall clock the `Date` header shows (tests replace it). Default
    /// [`crate::coarse_wall_clock`] (the kernel's coarse realtime clock). It is read
    /// once per burst of a connection's work (crate::date::BurstDate), and the text is
    /// formatted once per second of it per thread.
    pub wall_clock: fn() -> SystemTime,
    /// How long a request head may take to arrive whole (node:http's `headersTimeout`, the
    /// slowloris defence); when it runs out the codec answers `408 Request Timeout` and
    /// closes. The clock starts when the connection becomes active (for the first request)
    /// and at the first byte of each later head: the quiet time between two requests on a
    /// kept-alive connection is an idle timeout's business, not this one's. Default 10 s;
    /// `None`: no limit. Needs the channel's event loop (in an `EmbeddedChannel`, loop time
    /// moves with `advance_time`).
    pub header_timeout: Option<Duration>,
    /// Most requests read whose response is not completely written yet (pipelining). While
    /// that many wait, the codec decodes no further request (the bytes stay buffered) and
    /// stops reading from the socket (it turns the channel's `auto_read` off, or holds back
    /// `read()` calls when the application turned it off); it goes on once a response
    /// completes. Backpressure, not an error (nginx and Netty servers bound pipelines the same
    /// way). Default `None`: no limit.
    pub max_pipelined_requests: Option<usize>,
    /// How long a whole request (head and body) may take to arrive (node:http's
    /// `requestTimeout`, whose default this is too: 300 s); when it runs out the codec answers
    /// `408 Request Timeout` (after the responses owed to earlier requests) and closes. The
    /// clock starts as `header_timeout`'s does and stops when the body's last byte is read (a
    /// request complete in one read never starts it). `None`: no limit.
    pub request_timeout: Option<Duration>,
    /// When the codec closes a connection whose client may still be sending (a refused
    /// request, a closing response before its request's body came), it half-closes and reads
    /// and drops input for at most this long, closing as soon as the client does, instead of
    /// closing at once: a close with unread input sends a RST, which fails the client's
    /// writes, and node's http client then reports that error instead of the response
    /// (linger.rs; nginx's `lingering_close`). Default 5 s;
    /// `None`: close at once (Netty's behaviour).
    pub linger_timeout: Option<Duration>,
}

impl Default for HttpServerConfig {
    fn default() -> Self {
        HttpServerConfig {
            max_head_size: 16 * 1024,
            max_uri_length: 8 * 1024,
            max_header_count: 100,
            max_body_size: 16 * 1024 * 1024,
            aggregate_limit: 64 * 1024,
            require_host: true,
            date_header: true,
            wall_clock: crate::coarse_wall_clock,
            header_timeout: Some(Duration::from_secs(10)),
            max_pipelined_requests: None,
            request_timeout: Some(Duration::from_secs(300)),
            linger_timeout: Some(Duration::from_secs(5)),
        }
    }
}

/// Largest `max_head_size` (offsets into a head are `u32`).
pub const MAX_HEAD_SIZE_LIMIT: usize = 1 << 30;

impl HttpServerConfig {
    /// Checks the limits.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_max_head_size(self.max_head_size)?;
        if self.max_uri_length == 0 {
            return refuse("max_uri_length must be positive");
        }
        if self.max_header_count == 0 {
            return refuse("max_header_count must be positive");
        }
        if self.max_pipelined_requests == Some(0) {
            return refuse("max_pipelined_requests must be positive (None turns it off)");
        }
        if self.request_timeout == Some(Duration::ZERO) {
            return refuse("request_timeout must be positive (None turns it off)");
        }
        if self.header_timeout == Some(Duration::ZERO) {
            return refuse("header_timeout must be positive (None turns it off)");
        }
        if self.linger_timeout == Some(Duration::ZERO) {
            return refuse("linger_timeout must be positive (None turns it off)");
        }
        Ok(())
    }

    /// The longest request line accepted before its end is seen.
    pub(crate) fn max_request_line(&self) -> usize {
        self.max_uri_length.saturating_add(64)
    }
}

/// A refusal of the field `reason` names.
pub(crate) fn refuse(reason: &str) -> Result<(), ConfigError> {
    Err(invalid_config(reason))
}

/// The check of `max_head_size` both sides' configurations make.
pub(crate) fn check_max_head_size(max_head_size: usize) -> Result<(), ConfigError> {
    if !(64..=MAX_HEAD_SIZE_LIMIT).contains(&max_head_size) {
        return refuse("max_head_size must be between 64 bytes and 1 GiB");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_tiny_heads_are_not() {
        assert!(HttpServerConfig::default().validate().is_ok());
        let c = HttpServerConfig {
            max_head_size: 10,
            ..HttpServerConfig::default()
        };
        let e = c.validate().unwrap_err();
        assert_eq!(e.code(), "ERR_INVALID_ARG_VALUE");
        assert!(e.to_string().contains("max_head_size"));
    }
}
