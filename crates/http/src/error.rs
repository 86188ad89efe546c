//! Typed errors of the HTTP codec, each with a stable code.
//!
//! Two types, for two moments:
//! - [`HttpError`] is met on a running connection: a request the codec refuses (it has then
//!   answered it natively with [`HttpError::status`] and closes after that answer), a
//!   connection that ended in the middle of a streamed request body, or a response that
//!   cannot be written (its write promise fails with it).
//!   On the client side ([`HttpClientCodec`](crate::HttpClientCodec)): a response that breaks
//!   the grammar or the framing rules ([`HttpError::BadResponse`]), response bytes no request
//!   waits for, a request that cannot be encoded (only its write fails), a connection that
//!   ended inside a response. None of these is answered ([`HttpError::status`] is `None`).
//! - [`ConfigError`] is raised by [`HttpServerConfig::validate`](crate::HttpServerConfig)
//!   (and [`HttpClientConfig::validate`](crate::HttpClientConfig)) for limits out of range;
//!   it never occurs on a running connection.
//!
//! Codes follow node:http's where node has one for the same failure: llhttp's `HPE_*` codes
//! for malformed requests (what node's `clientError` reports), `ERR_HTTP_HEADERS_SENT`,
//! `ERR_INVALID_CHAR` and `ERR_INVALID_HTTP_TOKEN` for bad responses. The rest are
//! `ERR_HTTP_*`. Errors reach a pipeline as `TransportError::Foreign` with the same code.

use std::fmt;
use std::sync::Arc;

use netloop_transport::TransportError;

/// What went wrong with a request or a response.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpError {
    /// The request breaks the HTTP/1.1 grammar or one of the smuggling rules (400).
    /// `code` is llhttp's name for the same failure (`HPE_INVALID_CHUNK_SIZE`, ...).
    BadRequest {
        /// Stable code.
        code: &'static str,
        /// What exactly was wrong.
        reason: &'static str,
    },
    /// The request head (request line and headers) is larger than the limit (431); on the
    /// client side, the response head (status line and headers) is (no answer).
    HeadTooLarge {
        /// The configured `max_head_size`.
        limit: usize,
    },
    /// The request has more header fields than the limit (431); on the client side, the
    /// response has (no answer).
    TooManyHeaders {
        /// The configured `max_header_count`.
        limit: usize,
    },
    /// The request target is longer than the limit (414).
    UriTooLong {
        /// The configured `max_uri_length`.
        limit: usize,
    },
    /// The request body is larger than the limit (413); on the client side, the response
    /// body is (no answer).
    BodyTooLarge {
        /// The configured `max_body_size`.
        limit: u64,
    },
    /// The request carries an `Expect` other than `100-continue` (417).
    ExpectationFailed,
    /// The request's `Transfer-Encoding` applies a coding this server does not decode (501).
    UnsupportedTransferCoding,
    /// A request head did not arrive whole within `header_timeout` (408). node:http reports
    /// the same case with this code.
    HeaderTimeout {
        /// The configured `header_timeout`.
        timeout: std::time::Duration,
    },
    /// A request (head and body) did not arrive whole within `request_timeout` (408), as
    /// node:http's `requestTimeout`, which reports it with the same code.
    RequestTimeout {
        /// The configured `request_timeout`.
        timeout: std::time::Duration,
    },
    /// The connection ended while a request body announced to the application was still
    /// being received (node's `aborted`); on the client side, inside a response whose end is
    /// framed (its head, or a `Content-Length` or chunked body). No answer is possible.
    Aborted,
    /// A response cannot be encoded (a bad header name or value, a `Content-Length` that does
    /// not match the body, ...). Only that write fails.
    InvalidResponse {
        /// Stable code (node's where it has one).
        code: &'static str,
        /// What exactly was wrong.
        reason: String,
    },
    /// A response was written for a request that already has its final response (or for no
    /// request at all); only that write fails.
    NoPendingRequest,
    /// A request cannot be encoded (a bad method token, a target with SP or a control
    /// character, a bad header name or value, a `Content-Length` that does not match the
    /// body, ...). Only that write fails.
    InvalidRequest {
        /// Stable code (node's where it has one: `ERR_INVALID_HTTP_TOKEN`, `ERR_INVALID_CHAR`,
        /// `ERR_UNESCAPED_CHARACTERS`, ...).
        code: &'static str,
        /// What exactly was wrong.
        reason: String,
    },
    /// A response breaks the HTTP/1.1 grammar or the framing rules; the client codec closes
    /// the connection. `code` is llhttp's name for the same failure (`HPE_INVALID_STATUS`,
    /// `HPE_INVALID_CONSTANT`, `HPE_UNEXPECTED_CONTENT_LENGTH`, ...).
    BadResponse {
        /// Stable code.
        code: &'static str,
        /// What exactly was wrong.
        reason: &'static str,
    },
    /// Response bytes arrived while no request waited for a response.
    UnexpectedResponse,
}

impl HttpError {
    /// The stable code exposed to JavaScript as `Error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            HttpError::BadRequest { code, .. } => code,
            HttpError::HeadTooLarge { .. } => "HPE_HEADER_OVERFLOW",
            HttpError::TooManyHeaders { .. } => "ERR_HTTP_TOO_MANY_HEADERS",
            HttpError::UriTooLong { .. } => "ERR_HTTP_URI_TOO_LONG",
            HttpError::BodyTooLarge { .. } => "ERR_HTTP_BODY_TOO_LARGE",
            HttpError::ExpectationFailed => "ERR_HTTP_EXPECTATION_FAILED",
            HttpError::UnsupportedTransferCoding => "ERR_HTTP_UNSUPPORTED_TRANSFER_CODING",
            HttpError::HeaderTimeout { .. } | HttpError::RequestTimeout { .. } => {
                "ERR_HTTP_REQUEST_TIMEOUT"
            }
            HttpError::Aborted => "ECONNRESET",
            HttpError::InvalidResponse { code, .. } => code,
            HttpError::NoPendingRequest => "ERR_HTTP_HEADERS_SENT",
            HttpError::InvalidRequest { code, .. } | HttpError::BadResponse { code, .. } => code,
            HttpError::UnexpectedResponse => "ERR_HTTP_UNEXPECTED_RESPONSE",
        }
    }

    /// The status the codec answers with (`None`: no answer is written).
    pub fn status(&self) -> Option<u16> {
        match self {
            HttpError::BadRequest { .. } => Some(400),
            HttpError::HeadTooLarge { .. } | HttpError::TooManyHeaders { .. } => Some(431),
            HttpError::UriTooLong { .. } => Some(414),
            HttpError::BodyTooLarge { .. } => Some(413),
            HttpError::ExpectationFailed => Some(417),
            HttpError::UnsupportedTransferCoding => Some(501),
            HttpError::HeaderTimeout { .. } | HttpError::RequestTimeout { .. } => Some(408),
            HttpError::Aborted
            | HttpError::InvalidResponse { .. }
            | HttpError::NoPendingRequest
            | HttpError::InvalidRequest { .. }
            | HttpError::BadResponse { .. }
            | HttpError::UnexpectedResponse => None,
        }
    }

    pub(crate) fn bad(code: &'static str, reason: &'static str) -> Self {
        HttpError::BadRequest { code, reason }
    }

    pub(crate) fn invalid_response(code: &'static str, reason: impl Into<String>) -> Self {
        HttpError::InvalidResponse {
            code,
            reason: reason.into(),
        }
    }

    pub(crate) fn invalid_request(code: &'static str, reason: impl Into<String>) -> Self {
        HttpError::InvalidRequest {
            code,
            reason: reason.into(),
        }
    }

    /// The same failure met on the client side: a grammar error of a response (found by the
    /// checks shared with the request decoder) is a `BadResponse`, an encoding error of a
    /// request an `InvalidRequest`; the rest is unchanged.
    pub(crate) fn for_client(self) -> Self {
        match self {
            HttpError::BadRequest { code, reason } => HttpError::BadResponse { code, reason },
            HttpError::InvalidResponse { code, reason } => {
                HttpError::InvalidRequest { code, reason }
            }
            other => other,
        }
    }

    /// This error as a pipeline error carrying the same code.
    pub fn into_transport(self) -> TransportError {
        TransportError::Foreign {
            code: self.code().into(),
            error: Arc::new(self),
        }
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpError::BadRequest { reason, .. } => write!(f, "bad request: {reason}"),
            HttpError::HeadTooLarge { limit } => {
                write!(f, "request head larger than {limit} bytes")
            }
            HttpError::TooManyHeaders { limit } => {
                write!(f, "request has more than {limit} header fields")
            }
            HttpError::UriTooLong { limit } => {
                write!(f, "request target longer than {limit} bytes")
            }
            HttpError::BodyTooLarge { limit } => {
                write!(f, "request body larger than {limit} bytes")
            }
            HttpError::ExpectationFailed => f.write_str("unsupported Expect header"),
            HttpError::UnsupportedTransferCoding => {
                f.write_str("unsupported transfer coding (only chunked is decoded)")
            }
            HttpError::HeaderTimeout { timeout } => {
                write!(f, "the request head did not arrive within {timeout:?}")
            }
            HttpError::RequestTimeout { timeout } => {
                write!(f, "the request did not arrive whole within {timeout:?}")
            }
            HttpError::Aborted => f.write_str("aborted: the connection ended during the body"),
            HttpError::InvalidResponse { reason, .. } => write!(f, "invalid response: {reason}"),
            HttpError::NoPendingRequest => {
                f.write_str("no request waits for this response (already answered?)")
            }
            HttpError::InvalidRequest { reason, .. } => write!(f, "invalid request: {reason}"),
            HttpError::BadResponse { reason, .. } => write!(f, "bad response: {reason}"),
            HttpError::UnexpectedResponse => {
                f.write_str("response bytes arrived while no request was waiting")
            }
        }
    }
}

impl std::error::Error for HttpError {}

impl From<HttpError> for TransportError {
    fn from(e: HttpError) -> Self {
        e.into_transport()
    }
}

/// A limit of [`HttpServerConfig`](crate::HttpServerConfig) or [`HttpClientConfig`](crate::HttpClientConfig) out
/// of range.
pub use netloop_transport::ConfigError;

/// A [`ConfigError`] of this crate (its message says "invalid HTTP codec configuration").
pub(crate) fn invalid_config(reason: impl Into<String>) -> ConfigError {
    ConfigError::new("HTTP codec", reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_has_its_status_and_a_stable_code() {
        let cases = [
            (HttpError::bad("HPE_X", "x"), Some(400), "HPE_X"),
            (
                HttpError::HeadTooLarge { limit: 1 },
                Some(431),
                "HPE_HEADER_OVERFLOW",
            ),
            (
                HttpError::UriTooLong { limit: 1 },
                Some(414),
                "ERR_HTTP_URI_TOO_LONG",
            ),
            (
                HttpError::BodyTooLarge { limit: 1 },
                Some(413),
                "ERR_HTTP_BODY_TOO_LARGE",
            ),
            (HttpError::Aborted, None, "ECONNRESET"),
            (
                HttpError::BadResponse {
                    code: "HPE_INVALID_STATUS",
                    reason: "x",
                },
                None,
                "HPE_INVALID_STATUS",
            ),
            (
                HttpError::UnexpectedResponse,
                None,
                "ERR_HTTP_UNEXPECTED_RESPONSE",
            ),
            (
                HttpError::invalid_request("ERR_INVALID_CHAR", "x"),
                None,
                "ERR_INVALID_CHAR",
            ),
        ];
        for (e, status, code) in cases {
            assert_eq!((e.status(), e.code()), (status, code), "{e}");
            assert_eq!(e.clone().into_transport().code(), code);
        }
    }
}
