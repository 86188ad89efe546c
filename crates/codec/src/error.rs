//! Typed errors of the codec crate.
//!
//! Two types, for two moments:
//! - [`CodecError`] is raised while decoding or encoding a stream. A decoder that returns it
//!   has already left its buffer and state consistent, so decoding can go on with the next
//!   frame (Netty routes these through `exceptionCaught` and keeps the channel open).
//! - [`ConfigError`] is raised by constructors given invalid arguments (Netty's
//!   `IllegalArgumentException`); it never occurs on a running stream.
//!
//! Each error has a stable string `code()` that the Node binding exposes as `Error.code`.

use std::fmt;

/// An error met while decoding or encoding frames.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodecError {
    /// A frame is longer than the decoder's maximum (Netty's `TooLongFrameException`).
    ///
    /// `length` is the frame length when it is known. When a fail-fast decoder reports
    /// before the end of the frame was seen, `length` is the number of bytes seen so far,
    /// a lower bound; `complete` tells which of the two it is.
    TooLongFrame {
        /// Length of the frame (or a lower bound when `complete` is false).
        length: u64,
        /// The decoder's configured maximum.
        max: usize,
        /// Whether `length` is the whole frame's length (false: fail-fast lower bound).
        complete: bool,
    },
    /// The stream holds a frame that cannot be decoded, e.g. a negative or too small
    /// adjusted length (Netty's `CorruptedFrameException`), or a decoder that broke the
    /// [`FrameDecoder`](crate::FrameDecoder) contract.
    CorruptedFrame {
        /// Human-readable description.
        reason: String,
    },
    /// The stream does not start with a valid PROXY protocol header (Netty's
    /// `HAProxyProtocolException`). The connection cannot be trusted past it: the decoder
    /// closes it.
    HAProxyProtocol {
        /// Human-readable description.
        reason: String,
    },
    /// A message cannot be encoded, e.g. its length does not fit the prepender's field.
    EncoderError {
        /// Human-readable description.
        reason: String,
    },
}

impl CodecError {
    /// Stable code exposed to JavaScript as `Error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            CodecError::TooLongFrame { .. } => "ERR_TOO_LONG_FRAME",
            CodecError::CorruptedFrame { .. } => "ERR_CORRUPTED_FRAME",
            CodecError::HAProxyProtocol { .. } => "ERR_HAPROXY_PROTOCOL",
            CodecError::EncoderError { .. } => "ERR_ENCODER",
        }
    }

    pub(crate) fn corrupted(reason: impl Into<String>) -> Self {
        CodecError::CorruptedFrame {
            reason: reason.into(),
        }
    }

    pub(crate) fn encoder(reason: impl Into<String>) -> Self {
        CodecError::EncoderError {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodecError::TooLongFrame {
                length,
                max,
                complete: true,
            } => {
                write!(
                    f,
                    "frame length ({length}) exceeds the allowed maximum ({max})"
                )
            }
            CodecError::TooLongFrame {
                length,
                max,
                complete: false,
            } => {
                write!(
                    f,
                    "frame length (over {length}) exceeds the allowed maximum ({max})"
                )
            }
            CodecError::CorruptedFrame { reason } => write!(f, "corrupted frame: {reason}"),
            CodecError::HAProxyProtocol { reason } => {
                write!(f, "invalid PROXY protocol header: {reason}")
            }
            CodecError::EncoderError { reason } => write!(f, "cannot encode message: {reason}"),
        }
    }
}

impl std::error::Error for CodecError {}

/// An invalid argument given to a decoder or encoder constructor: the transport crate's
/// [`ConfigError`](netloop_transport::ConfigError), shared by the protocol crates.
pub use netloop_transport::ConfigError;

/// A [`ConfigError`] of this crate (its message says "invalid codec configuration").
pub(crate) fn invalid_config(reason: impl Into<String>) -> ConfigError {
    ConfigError::new("codec", reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_per_variant() {
        let too_long = CodecError::TooLongFrame {
            length: 9,
            max: 8,
            complete: true,
        };
        assert_eq!(too_long.code(), "ERR_TOO_LONG_FRAME");
        assert_eq!(CodecError::corrupted("x").code(), "ERR_CORRUPTED_FRAME");
        assert_eq!(CodecError::encoder("x").code(), "ERR_ENCODER");
        assert_eq!(invalid_config("x").code(), "ERR_INVALID_ARG_VALUE");
    }

    #[test]
    fn too_long_frame_message_distinguishes_lower_bound() {
        let exact = CodecError::TooLongFrame {
            length: 9,
            max: 8,
            complete: true,
        };
        let bound = CodecError::TooLongFrame {
            length: 9,
            max: 8,
            complete: false,
        };
        assert_eq!(
            exact.to_string(),
            "frame length (9) exceeds the allowed maximum (8)"
        );
        assert_eq!(
            bound.to_string(),
            "frame length (over 9) exceeds the allowed maximum (8)"
        );
    }
}
