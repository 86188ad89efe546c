//! [`HttpClientConfig`]: the limits and switches of one client connection's codec, a plain
//! struct so a binding can fill it from an options object.

use bytes::Bytes;

use crate::config::{check_max_head_size, refuse};
use crate::error::ConfigError;
use crate::fields::is_field_text;

/// Limits and switches of an [`HttpClientCodec`](crate::HttpClientCodec).
///
/// A response over a limit is an error: it reaches `exceptionCaught` and the connection
/// closes.
#[derive(Debug, Clone)]
pub struct HttpClientConfig {
    /// Largest response head (status line, header lines and the empty line), in bytes; above
    /// it: `HeadTooLarge`. Default 16 KiB (node's `maxHeaderSize`), at most
    /// [`MAX_HEAD_SIZE_LIMIT`](crate::MAX_HEAD_SIZE_LIMIT). Also bounds a chunked body's trailers.
    pub max_head_size: usize,
    /// Most header fields in one response head; above it: `TooManyHeaders`. Default 100.
    pub max_header_count: usize,
    /// Largest response body, in bytes; above it: `BodyTooLarge` (at once when
    /// `Content-Length` says so, else when the body passes it). Default `u64::MAX`, no limit:
    /// a client chooses what it downloads.
    pub max_body_size: u64,
    /// Bodies up to this size are delivered whole, in the `HttpClientResponse`; larger ones
    /// are streamed as `HttpContent` messages. Default 64 KiB; 0 streams every body.
    pub aggregate_limit: usize,
    /// When set: added as `Host` to requests that have none. Default `None`.
    pub host: Option<Bytes>,
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        HttpClientConfig {
            max_head_size: 16 * 1024,
            max_header_count: 100,
            max_body_size: u64::MAX,
            aggregate_limit: 64 * 1024,
            host: None,
        }
    }
}

impl HttpClientConfig {
    /// Checks the limits and the `host` value.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_max_head_size(self.max_head_size)?;
        if self.max_header_count == 0 {
            return refuse("max_header_count must be positive");
        }
        if let Some(host) = &self.host {
            if host.is_empty() || !host.iter().all(|&b| is_field_text(b) && b != b'\t') {
                return refuse("host must be a non-empty header value without control characters");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_a_host_with_crlf_is_not() {
        assert!(HttpClientConfig::default().validate().is_ok());
        let c = HttpClientConfig {
            host: Some(Bytes::from_static(b"a\r\nX: y")),
            ..HttpClientConfig::default()
        };
        assert!(c.validate().unwrap_err().to_string().contains("host"));
        let c = HttpClientConfig {
            max_head_size: 10,
            ..HttpClientConfig::default()
        };
        assert!(c.validate().is_err());
    }
}
