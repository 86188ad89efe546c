//! Typed errors of the WebSocket crate.
//!
//! - [`WsError`] is a protocol violation by the peer (or a limit it passed): each maps to the
//!   close code the connection is failed with ([`WsError::close_code`]) and to a stable
//!   `ERR_WS_*` code ([`WsError::code`]) that the Node binding exposes as `Error.code`.
//! - [`HandshakeError`] is an opening handshake this server refuses, with the HTTP status it
//!   answers.
//! - [`ConfigError`] is an invalid [`WsConfig`](crate::WsConfig).
//!
//! In a pipeline they travel as `TransportError::Foreign` with their code; the typed error is
//! recovered with `error.foreign_source()?.downcast_ref::<WsError>()`.

use std::fmt;

use netloop_transport::TransportError;

use crate::close::CloseCode;

/// A protocol error: the peer broke RFC 6455 or passed a configured limit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WsError {
    /// A reserved bit (RSV1-3) is set and no extension gave it a meaning (RSV1 on a control
    /// frame or a continuation even with permessage-deflate).
    ReservedBits,
    /// An opcode RFC 6455 reserves (3-7, 11-15).
    ReservedOpcode {
        /// The opcode.
        opcode: u8,
    },
    /// A client frame without a mask (server side) or a server frame with one (client side).
    BadMask {
        /// Whether the frame was masked.
        masked: bool,
    },
    /// A control frame (close, ping, pong) with a payload over 125 bytes.
    ControlTooLong {
        /// The payload length.
        length: u64,
    },
    /// A control frame without FIN: control frames are never fragmented.
    FragmentedControl,
    /// A 16- or 64-bit length that fits a shorter form, or a 64-bit one with its top bit set.
    NonMinimalLength,
    /// A continuation frame with no message in progress.
    UnexpectedContinuation,
    /// A text or binary frame while a fragmented message is still in progress.
    ExpectedContinuation,
    /// A close frame whose payload is one byte, or whose code may not be sent.
    BadCloseFrame {
        /// The code received, if any.
        code: Option<u16>,
    },
    /// Text (a message or a close reason) that is not UTF-8.
    InvalidUtf8,
    /// A frame longer than `max_frame_size`.
    FrameTooLarge {
        /// The frame's payload length.
        length: u64,
        /// The configured maximum.
        max: usize,
    },
    /// A compressed message (permessage-deflate) whose data is not DEFLATE.
    InvalidCompressedData,
    /// A message longer than `max_message_size` (inflated size, for a compressed one).
    MessageTooLarge {
        /// The message's length so far.
        length: u64,
        /// The configured maximum.
        max: usize,
    },
}

impl WsError {
    /// Stable code exposed to JavaScript as `Error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            WsError::ReservedBits => "ERR_WS_RESERVED_BITS",
            WsError::ReservedOpcode { .. } => "ERR_WS_RESERVED_OPCODE",
            WsError::BadMask { .. } => "ERR_WS_BAD_MASK",
            WsError::ControlTooLong { .. } => "ERR_WS_CONTROL_TOO_LONG",
            WsError::FragmentedControl => "ERR_WS_FRAGMENTED_CONTROL",
            WsError::NonMinimalLength => "ERR_WS_BAD_LENGTH",
            WsError::UnexpectedContinuation => "ERR_WS_UNEXPECTED_CONTINUATION",
            WsError::ExpectedContinuation => "ERR_WS_EXPECTED_CONTINUATION",
            WsError::BadCloseFrame { .. } => "ERR_WS_BAD_CLOSE_FRAME",
            WsError::InvalidUtf8 => "ERR_WS_INVALID_UTF8",
            WsError::InvalidCompressedData => "ERR_WS_INVALID_COMPRESSED_DATA",
            WsError::FrameTooLarge { .. } => "ERR_WS_FRAME_TOO_LARGE",
            WsError::MessageTooLarge { .. } => "ERR_WS_MESSAGE_TOO_LARGE",
        }
    }

    /// The close code the connection is failed with: 1007 for bad UTF-8 or compressed data
    /// that does not inflate (as the `ws` package), 1009 for a limit, 1002 for everything
    /// else.
    pub fn close_code(&self) -> CloseCode {
        match self {
            WsError::InvalidUtf8 | WsError::InvalidCompressedData => CloseCode::INVALID_PAYLOAD,
            WsError::FrameTooLarge { .. } | WsError::MessageTooLarge { .. } => {
                CloseCode::MESSAGE_TOO_BIG
            }
            _ => CloseCode::PROTOCOL_ERROR,
        }
    }
}

impl fmt::Display for WsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WsError::ReservedBits => f.write_str("reserved bits set in a WebSocket frame"),
            WsError::ReservedOpcode { opcode } => write!(f, "reserved WebSocket opcode {opcode}"),
            WsError::BadMask { masked: false } => f.write_str("unmasked frame from a client"),
            WsError::BadMask { masked: true } => f.write_str("masked frame from a server"),
            WsError::ControlTooLong { length } => {
                write!(f, "control frame payload of {length} bytes (at most 125)")
            }
            WsError::FragmentedControl => f.write_str("fragmented control frame"),
            WsError::NonMinimalLength => f.write_str("frame length not minimally encoded"),
            WsError::UnexpectedContinuation => {
                f.write_str("continuation frame without a message in progress")
            }
            WsError::ExpectedContinuation => {
                f.write_str("new data frame while a fragmented message is in progress")
            }
            WsError::BadCloseFrame { code: Some(code) } => {
                write!(f, "close frame with invalid code {code}")
            }
            WsError::BadCloseFrame { code: None } => f.write_str("close frame of one byte"),
            WsError::InvalidUtf8 => f.write_str("invalid UTF-8 in a text frame or close reason"),
            WsError::InvalidCompressedData => {
                f.write_str("compressed message that does not inflate (permessage-deflate)")
            }
            WsError::FrameTooLarge { length, max } => {
                write!(f, "frame of {length} bytes exceeds the maximum ({max})")
            }
            WsError::MessageTooLarge { length, max } => {
                write!(f, "message of {length} bytes exceeds the maximum ({max})")
            }
        }
    }
}

impl std::error::Error for WsError {}

impl From<WsError> for TransportError {
    fn from(error: WsError) -> Self {
        TransportError::foreign(error.code(), error)
    }
}

/// An opening handshake the server refuses, with the HTTP status it answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandshakeError {
    /// Not a `GET`.
    NotGet,
    /// No `Upgrade: websocket`, or no `Connection: upgrade`.
    NotUpgrade,
    /// `Sec-WebSocket-Version` missing or not 13 (answered 426 with the supported version).
    UnsupportedVersion,
    /// `Sec-WebSocket-Key` missing, repeated, or not 16 bytes in base64.
    BadKey,
    /// The origin check refused the `Origin` field.
    OriginRefused,
}

impl HandshakeError {
    /// Stable code exposed to JavaScript as `Error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            HandshakeError::NotGet => "ERR_WS_HANDSHAKE_METHOD",
            HandshakeError::NotUpgrade => "ERR_WS_HANDSHAKE_NOT_UPGRADE",
            HandshakeError::UnsupportedVersion => "ERR_WS_HANDSHAKE_VERSION",
            HandshakeError::BadKey => "ERR_WS_HANDSHAKE_KEY",
            HandshakeError::OriginRefused => "ERR_WS_HANDSHAKE_ORIGIN",
        }
    }

    /// The HTTP status of the refusal.
    pub fn status(&self) -> u16 {
        match self {
            HandshakeError::NotGet => 405,
            HandshakeError::UnsupportedVersion => 426,
            HandshakeError::OriginRefused => 403,
            HandshakeError::NotUpgrade | HandshakeError::BadKey => 400,
        }
    }

    /// Header fields the refusal carries (`Sec-WebSocket-Version: 13` with a 426, `Allow: GET`
    /// with a 405).
    pub fn headers(&self) -> Vec<(&'static str, &'static str)> {
        match self {
            HandshakeError::UnsupportedVersion => vec![("Sec-WebSocket-Version", "13")],
            HandshakeError::NotGet => vec![("Allow", "GET")],
            _ => Vec::new(),
        }
    }
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HandshakeError::NotGet => "a WebSocket handshake must be a GET",
            HandshakeError::NotUpgrade => "not a WebSocket upgrade request",
            HandshakeError::UnsupportedVersion => "Sec-WebSocket-Version must be 13",
            HandshakeError::BadKey => "missing or invalid Sec-WebSocket-Key",
            HandshakeError::OriginRefused => "origin refused",
        })
    }
}

impl std::error::Error for HandshakeError {}

impl From<HandshakeError> for TransportError {
    fn from(error: HandshakeError) -> Self {
        TransportError::foreign(error.code(), error)
    }
}

/// An invalid configuration: netloop-transport's one type for every protocol crate, with the
/// subject `"WebSocket"`.
pub use netloop_transport::ConfigError;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_has_its_stable_code_and_close_code() {
        let cases = [
            (WsError::ReservedBits, "ERR_WS_RESERVED_BITS", 1002),
            (
                WsError::ReservedOpcode { opcode: 3 },
                "ERR_WS_RESERVED_OPCODE",
                1002,
            ),
            (WsError::BadMask { masked: false }, "ERR_WS_BAD_MASK", 1002),
            (
                WsError::ControlTooLong { length: 126 },
                "ERR_WS_CONTROL_TOO_LONG",
                1002,
            ),
            (
                WsError::FragmentedControl,
                "ERR_WS_FRAGMENTED_CONTROL",
                1002,
            ),
            (WsError::NonMinimalLength, "ERR_WS_BAD_LENGTH", 1002),
            (
                WsError::UnexpectedContinuation,
                "ERR_WS_UNEXPECTED_CONTINUATION",
                1002,
            ),
            (
                WsError::ExpectedContinuation,
                "ERR_WS_EXPECTED_CONTINUATION",
                1002,
            ),
            (
                WsError::BadCloseFrame { code: Some(1005) },
                "ERR_WS_BAD_CLOSE_FRAME",
                1002,
            ),
            (WsError::InvalidUtf8, "ERR_WS_INVALID_UTF8", 1007),
            (
                WsError::InvalidCompressedData,
                "ERR_WS_INVALID_COMPRESSED_DATA",
                1007,
            ),
            (
                WsError::FrameTooLarge { length: 2, max: 1 },
                "ERR_WS_FRAME_TOO_LARGE",
                1009,
            ),
            (
                WsError::MessageTooLarge { length: 2, max: 1 },
                "ERR_WS_MESSAGE_TOO_LARGE",
                1009,
            ),
        ];
        for (error, code, close) in cases {
            assert_eq!((error.code(), error.close_code()), (code, CloseCode(close)));
            let transport: TransportError = error.clone().into();
            assert_eq!(transport.code(), code);
            let inner = transport.foreign_source().and_then(|e| e.downcast_ref());
            assert_eq!(inner, Some(&error));
            assert!(!error.to_string().is_empty());
        }
    }

    #[test]
    fn handshake_refusals_carry_their_status_and_fields() {
        let cases = [
            (HandshakeError::NotGet, 405, "ERR_WS_HANDSHAKE_METHOD"),
            (
                HandshakeError::NotUpgrade,
                400,
                "ERR_WS_HANDSHAKE_NOT_UPGRADE",
            ),
            (
                HandshakeError::UnsupportedVersion,
                426,
                "ERR_WS_HANDSHAKE_VERSION",
            ),
            (HandshakeError::BadKey, 400, "ERR_WS_HANDSHAKE_KEY"),
            (
                HandshakeError::OriginRefused,
                403,
                "ERR_WS_HANDSHAKE_ORIGIN",
            ),
        ];
        for (error, status, code) in cases {
            assert_eq!((error.status(), error.code()), (status, code));
            let transport: TransportError = error.into();
            assert_eq!(transport.code(), code);
        }
        assert_eq!(HandshakeError::NotGet.headers(), [("Allow", "GET")]);
    }
}
