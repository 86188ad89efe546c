//! Close codes (RFC 6455 §7.4) and the close frame's payload: a 2-byte code, then a UTF-8
//! reason, 123 bytes at most (a control frame carries 125).

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::WsError;
use crate::utf8::Utf8Validator;

/// A close status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CloseCode(pub u16);

impl CloseCode {
    /// 1000: normal closure.
    pub const NORMAL: CloseCode = CloseCode(1000);
    /// 1001: the endpoint is going away (server shutdown, page left).
    pub const GOING_AWAY: CloseCode = CloseCode(1001);
    /// 1002: protocol error.
    pub const PROTOCOL_ERROR: CloseCode = CloseCode(1002);
    /// 1003: a data type the endpoint cannot accept.
    pub const UNSUPPORTED_DATA: CloseCode = CloseCode(1003);
    /// 1005: no code was received (never sent on the wire).
    pub const NO_STATUS: CloseCode = CloseCode(1005);
    /// 1006: the connection ended without a close frame (never sent on the wire).
    pub const ABNORMAL: CloseCode = CloseCode(1006);
    /// 1007: data inconsistent with its type (text that is not UTF-8).
    pub const INVALID_PAYLOAD: CloseCode = CloseCode(1007);
    /// 1008: a policy violation.
    pub const POLICY_VIOLATION: CloseCode = CloseCode(1008);
    /// 1009: a message or frame too big to process.
    pub const MESSAGE_TOO_BIG: CloseCode = CloseCode(1009);
    /// 1011: an unexpected condition on the server.
    pub const INTERNAL_ERROR: CloseCode = CloseCode(1011);

    /// Whether the code may travel in a close frame: 1000-1003, 1007-1014 (the registered
    /// ones), 3000-4999 (libraries and applications). 1004-1006 and 1015 are reserved.
    pub fn is_sendable(self) -> bool {
        matches!(self.0, 1000..=1003 | 1007..=1014 | 3000..=4999)
    }
}

/// The payload of a close frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseFrame {
    /// The status code; `None` for an empty close frame (reported as 1005).
    pub code: Option<CloseCode>,
    /// The reason, valid UTF-8, empty when there is none.
    pub reason: Bytes,
}

/// The longest reason a close frame can carry.
pub const MAX_REASON_LEN: usize = 123;

impl CloseFrame {
    /// A close frame with `code` and `reason` (cut to [`MAX_REASON_LEN`] bytes at a character
    /// boundary).
    pub fn new(code: CloseCode, reason: &str) -> Self {
        let mut end = reason.len().min(MAX_REASON_LEN);
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        CloseFrame {
            code: Some(code),
            reason: Bytes::copy_from_slice(&reason.as_bytes()[..end]),
        }
    }

    /// An empty close frame (no code).
    pub fn empty() -> Self {
        CloseFrame {
            code: None,
            reason: Bytes::new(),
        }
    }

    /// The code as reported to the application: 1005 for none.
    pub fn code_or_no_status(&self) -> CloseCode {
        self.code.unwrap_or(CloseCode::NO_STATUS)
    }

    /// Parses a received close payload.
    ///
    /// # Errors
    /// [`WsError::BadCloseFrame`] for a 1-byte payload or a code that may not be sent,
    /// [`WsError::InvalidUtf8`] for a reason that is not UTF-8.
    pub fn parse(payload: &Bytes) -> Result<Self, WsError> {
        match payload.len() {
            0 => Ok(CloseFrame::empty()),
            1 => Err(WsError::BadCloseFrame { code: None }),
            _ => {
                let code = CloseCode(u16::from_be_bytes([payload[0], payload[1]]));
                if !code.is_sendable() {
                    return Err(WsError::BadCloseFrame { code: Some(code.0) });
                }
                let reason = payload.slice(2..);
                let mut utf8 = Utf8Validator::default();
                if utf8.feed(&reason).is_err() || !utf8.is_complete() {
                    return Err(WsError::InvalidUtf8);
                }
                Ok(CloseFrame {
                    code: Some(code),
                    reason,
                })
            }
        }
    }

    /// The payload on the wire (empty without a code).
    pub fn payload(&self) -> Bytes {
        let Some(code) = self.code else {
            return Bytes::new();
        };
        let mut out = BytesMut::with_capacity(2 + self.reason.len());
        out.put_u16(code.0);
        out.extend_from_slice(&self.reason[..self.reason.len().min(MAX_REASON_LEN)]);
        out.freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sendable_codes_follow_rfc_6455_and_the_registry() {
        for ok in [
            1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1014, 3000, 4999,
        ] {
            assert!(CloseCode(ok).is_sendable(), "{ok}");
        }
        for bad in [
            0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535,
        ] {
            assert!(!CloseCode(bad).is_sendable(), "{bad}");
        }
    }

    #[test]
    fn a_close_payload_parses_into_code_and_reason() {
        let frame = CloseFrame::parse(&Bytes::from_static(b"\x03\xe8bye")).unwrap();
        assert_eq!(frame.code, Some(CloseCode::NORMAL));
        assert_eq!(&frame.reason[..], b"bye");
        assert_eq!(frame.payload(), Bytes::from_static(b"\x03\xe8bye"));
        assert_eq!(
            CloseFrame::parse(&Bytes::new()).unwrap(),
            CloseFrame::empty()
        );
        assert_eq!(
            CloseFrame::empty().code_or_no_status(),
            CloseCode::NO_STATUS
        );
    }

    #[test]
    fn bad_close_payloads_are_refused_with_their_error() {
        let cases: [(&[u8], WsError); 4] = [
            (b"\x03", WsError::BadCloseFrame { code: None }),
            (b"\x03\xed", WsError::BadCloseFrame { code: Some(1005) }),
            (b"\x03\xe8\xff", WsError::InvalidUtf8),
            (b"\x03\xe8\xce", WsError::InvalidUtf8),
        ];
        for (payload, error) in cases {
            let got = CloseFrame::parse(&Bytes::copy_from_slice(payload));
            assert_eq!(got, Err(error.clone()));
            assert_eq!(
                error.close_code(),
                if error == WsError::InvalidUtf8 {
                    CloseCode(1007)
                } else {
                    CloseCode(1002)
                }
            );
        }
    }

    #[test]
    fn a_long_reason_is_cut_at_a_character_boundary() {
        let reason = "é".repeat(100);
        let frame = CloseFrame::new(CloseCode::GOING_AWAY, &reason);
        assert_eq!(frame.reason.len(), 122);
        assert!(frame.payload().len() <= 125);
    }
}
