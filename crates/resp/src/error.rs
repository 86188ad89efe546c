//! Typed errors of the RESP crate.
//!
//! - [`RespError`] is a protocol error met while decoding: a limit was passed or the bytes are
//!   not RESP. RESP cannot be resynchronised (nothing marks where the next value starts), so
//!   the decoder stops at the first one; the application answers (optionally) and closes the
//!   connection, as redis-server does. [`RespError::reply_text`] is Redis's wording for that
//!   answer.
//! - [`ConfigError`] is an invalid [`RespConfig`](crate::RespConfig) (Netty's
//!   `IllegalArgumentException`); it never occurs on a running stream.
//!
//! Each has a stable string `code()` that the Node binding exposes as `Error.code`; in a
//! pipeline both travel as `TransportError::Foreign` with that code, and the typed error is
//! recovered with `error.foreign_source()?.downcast_ref::<RespError>()`.

use std::fmt;

use netloop_transport::TransportError;

/// A protocol error: the peer sent something this decoder does not accept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RespError {
    /// A bulk string (or bulk error, verbatim string) declares more bytes than
    /// `max_bulk_length` (Redis's `proto-max-bulk-len`).
    BulkTooLong {
        /// The declared length.
        length: u64,
        /// The configured maximum.
        max: usize,
    },
    /// An aggregate declares more entries than `max_array_length` (the count on the wire:
    /// pairs for maps and attributes).
    ArrayTooLong {
        /// The declared count.
        length: u64,
        /// The configured maximum.
        max: usize,
    },
    /// Aggregates are nested deeper than `max_nesting_depth`.
    TooDeep {
        /// The configured maximum.
        max: usize,
    },
    /// An inline command's line is longer than `max_inline_length`.
    InlineTooLong {
        /// The configured maximum.
        max: usize,
    },
    /// A type line (`+...`, `:...`, `$...`, ...) is longer than `max_inline_length`.
    LineTooLong {
        /// The configured maximum.
        max: usize,
    },
    /// A value starts with a byte that is not a type this decoder accepts.
    BadType {
        /// The offending byte.
        byte: u8,
    },
    /// A length or count is not a decimal number in range (or `-1` where a null is allowed).
    BadLength {
        /// The type whose length it is (`"bulk string"`, `"array"`, ...).
        of: &'static str,
    },
    /// A line's content is not valid for its type (an integer out of range, a boolean other
    /// than `t`/`f`, a verbatim string without `xxx:`, ...).
    BadValue {
        /// The type whose value it is (`"integer"`, `"double"`, ...).
        of: &'static str,
    },
    /// A line or a bulk payload does not end with `\r\n` (a bare `\r` or `\n`, or payload
    /// bytes past the declared length).
    MissingCrlf,
    /// An inline command has unbalanced quotes, or a closing quote not followed by a space.
    BadInline,
}

impl RespError {
    /// Stable code exposed to JavaScript as `Error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            RespError::BulkTooLong { .. } => "ERR_RESP_BULK_TOO_LONG",
            RespError::ArrayTooLong { .. } => "ERR_RESP_ARRAY_TOO_LONG",
            RespError::TooDeep { .. } => "ERR_RESP_TOO_DEEP",
            RespError::InlineTooLong { .. } => "ERR_RESP_INLINE_TOO_LONG",
            RespError::LineTooLong { .. } => "ERR_RESP_LINE_TOO_LONG",
            RespError::BadType { .. } => "ERR_RESP_BAD_TYPE",
            RespError::BadLength { .. } => "ERR_RESP_BAD_LENGTH",
            RespError::BadValue { .. } => "ERR_RESP_BAD_VALUE",
            RespError::MissingCrlf => "ERR_RESP_MISSING_CRLF",
            RespError::BadInline => "ERR_RESP_BAD_INLINE",
        }
    }

    /// The error reply redis-server sends before closing on this error, without the leading
    /// `-` (`ERR Protocol error: invalid bulk length`): write it with
    /// [`write_error`](crate::encode::write_error), flush, then close.
    pub fn reply_text(&self) -> String {
        let what = match self {
            RespError::BulkTooLong { .. } => "invalid bulk length".to_string(),
            RespError::BadLength { of } if *of == "bulk string" => {
                "invalid bulk length".to_string()
            }
            RespError::ArrayTooLong { .. } | RespError::BadLength { .. } => {
                "invalid multibulk length".to_string()
            }
            RespError::TooDeep { .. } => "nesting too deep".to_string(),
            RespError::InlineTooLong { .. } => "too big inline request".to_string(),
            RespError::LineTooLong { .. } => "too big line".to_string(),
            RespError::BadType { byte } => format!("unexpected type byte '{}'", printable(*byte)),
            RespError::BadValue { of } => format!("invalid {of}"),
            RespError::MissingCrlf => "expected CRLF".to_string(),
            RespError::BadInline => "unbalanced quotes in request".to_string(),
        };
        format!("ERR Protocol error: {what}")
    }
}

/// A byte as text for a message: itself when printable, `\xNN` otherwise.
fn printable(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        (byte as char).to_string()
    } else {
        format!("\\x{byte:02x}")
    }
}

impl fmt::Display for RespError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RespError::BulkTooLong { length, max } => {
                write!(f, "bulk length ({length}) exceeds the maximum ({max})")
            }
            RespError::ArrayTooLong { length, max } => {
                write!(f, "aggregate length ({length}) exceeds the maximum ({max})")
            }
            RespError::TooDeep { max } => {
                write!(f, "aggregates nested deeper than the maximum ({max})")
            }
            RespError::InlineTooLong { max } => {
                write!(f, "inline command longer than the maximum ({max} bytes)")
            }
            RespError::LineTooLong { max } => {
                write!(f, "RESP line longer than the maximum ({max} bytes)")
            }
            RespError::BadType { byte } => {
                write!(f, "unexpected RESP type byte '{}'", printable(*byte))
            }
            RespError::BadLength { of } => write!(f, "invalid {of} length"),
            RespError::BadValue { of } => write!(f, "invalid {of} value"),
            RespError::MissingCrlf => f.write_str("expected CRLF"),
            RespError::BadInline => f.write_str("unbalanced quotes in inline command"),
        }
    }
}

impl std::error::Error for RespError {}

/// An invalid decoder configuration.
pub use netloop_transport::ConfigError;

/// A [`ConfigError`] of this crate (its message says "invalid RESP configuration").
pub(crate) fn invalid_config(reason: impl Into<String>) -> ConfigError {
    ConfigError::new("RESP", reason)
}

impl From<RespError> for TransportError {
    fn from(error: RespError) -> Self {
        TransportError::foreign(error.code(), error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_per_variant() {
        let cases = [
            (
                RespError::BulkTooLong { length: 2, max: 1 },
                "ERR_RESP_BULK_TOO_LONG",
            ),
            (
                RespError::ArrayTooLong { length: 2, max: 1 },
                "ERR_RESP_ARRAY_TOO_LONG",
            ),
            (RespError::TooDeep { max: 1 }, "ERR_RESP_TOO_DEEP"),
            (
                RespError::InlineTooLong { max: 1 },
                "ERR_RESP_INLINE_TOO_LONG",
            ),
            (RespError::LineTooLong { max: 1 }, "ERR_RESP_LINE_TOO_LONG"),
            (RespError::BadType { byte: b'x' }, "ERR_RESP_BAD_TYPE"),
            (RespError::BadLength { of: "array" }, "ERR_RESP_BAD_LENGTH"),
            (RespError::BadValue { of: "integer" }, "ERR_RESP_BAD_VALUE"),
            (RespError::MissingCrlf, "ERR_RESP_MISSING_CRLF"),
            (RespError::BadInline, "ERR_RESP_BAD_INLINE"),
        ];
        for (error, code) in cases {
            assert_eq!(error.code(), code);
            let transport: TransportError = error.clone().into();
            assert_eq!(transport.code(), code);
            let inner = transport.foreign_source().and_then(|e| e.downcast_ref());
            assert_eq!(inner, Some(&error));
        }
        assert_eq!(invalid_config("x").code(), "ERR_INVALID_ARG_VALUE");
    }

    #[test]
    fn reply_text_uses_redis_wording() {
        assert_eq!(
            RespError::BulkTooLong { length: 9, max: 8 }.reply_text(),
            "ERR Protocol error: invalid bulk length"
        );
        assert_eq!(
            RespError::InlineTooLong { max: 8 }.reply_text(),
            "ERR Protocol error: too big inline request"
        );
        assert_eq!(
            RespError::BadInline.reply_text(),
            "ERR Protocol error: unbalanced quotes in request"
        );
        assert_eq!(
            RespError::BadType { byte: 0 }.reply_text(),
            "ERR Protocol error: unexpected type byte '\\x00'"
        );
    }
}
