//! The failures of this crate: a stable Node-style `code` and a message. crates/node throws
//! one as a JS `Error` with that `code` (`error::wire_error` there); nothing here knows JS.

use std::fmt;

/// A failure with a stable code (`ERR_INVALID_ARG_VALUE`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    /// The `code` JS sees.
    pub code: &'static str,
    /// The error's message.
    pub message: String,
}

/// What a fallible operation of this crate returns.
pub type WireResult<T> = Result<T, WireError>;

impl WireError {
    /// A failure with `code`.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        WireError {
            code,
            message: message.into(),
        }
    }
}

/// An argument JS passed is not acceptable (`ERR_INVALID_ARG_VALUE`).
pub fn invalid_arg(msg: impl Into<String>) -> WireError {
    WireError::new("ERR_INVALID_ARG_VALUE", msg)
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for WireError {}
