//! [`ConfigError`]: an invalid argument given to a handler's constructor or configuration
//! (Netty's `IllegalArgumentException`), one type for every protocol crate (codec, HTTP,
//! RESP re-export it). It never occurs on a running stream.

use std::fmt;

use crate::TransportError;

/// An invalid argument given to a handler's constructor or to its configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// What was being configured, the message's subject: `"codec"`, `"HTTP codec"`, `"RESP"`.
    pub subject: &'static str,
    /// Human-readable description naming the offending argument or field.
    pub reason: String,
}

impl ConfigError {
    /// An invalid configuration of `subject`, described by `reason`.
    pub fn new(subject: &'static str, reason: impl Into<String>) -> Self {
        ConfigError {
            subject,
            reason: reason.into(),
        }
    }

    /// Stable code exposed to JavaScript as `Error.code` (Node's code for a bad argument).
    pub fn code(&self) -> &'static str {
        "ERR_INVALID_ARG_VALUE"
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {} configuration: {}", self.subject, self.reason)
    }
}

impl std::error::Error for ConfigError {}

/// In a pipeline it travels as [`TransportError::Foreign`] with its code; the typed error is
/// recovered with `error.foreign_source()?.downcast_ref::<ConfigError>()`.
impl From<ConfigError> for TransportError {
    fn from(error: ConfigError) -> Self {
        TransportError::foreign(error.code(), error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_its_subject_and_reason_with_the_bad_argument_code() {
        let e = ConfigError::new("RESP", "max_depth must be at least 1");
        assert_eq!(
            e.to_string(),
            "invalid RESP configuration: max_depth must be at least 1"
        );
        assert_eq!(e.code(), "ERR_INVALID_ARG_VALUE");
        let t = TransportError::from(e.clone());
        assert_eq!(t.code(), "ERR_INVALID_ARG_VALUE");
        assert_eq!(
            t.foreign_source()
                .and_then(|s| s.downcast_ref::<ConfigError>()),
            Some(&e)
        );
    }
}
