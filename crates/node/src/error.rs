//! The one place where core errors become JS errors with a stable `code`. Everything a user
//! must learn about goes to JS (a thrown error, or the loop's `onTaskError`); diagnostics are
//! printed only with `NETLOOP_DEBUG` set (`netloop_wire::logging`, re-exported here).

use napi::Error;
use netloop_eventloop::LoopError;

/// The `code` of a thrown JS error (napi-rs puts an error's status into `error.code`).
#[derive(Debug, Clone, Copy)]
pub struct Code(pub &'static str);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

/// A failure with a stable code, thrown into JS by [`throw`].
pub type JsResult<T> = std::result::Result<T, Error<Code>>;

/// Throws `e` as a JS `Error` with `code` set, and returns the marker napi-rs expects when an
/// exception is already pending.
pub fn throw(env: &napi::Env, e: Error<Code>) -> napi::Error {
    let _ = env.throw_error(&e.reason, Some(e.status.0));
    napi::Error::from_status(napi::Status::PendingException)
}

/// A failure of the boundary's engine (`netloop_wire`), with its code.
pub fn wire_error(e: netloop_wire::WireError) -> Error<Code> {
    Error::new(Code(e.code), e.message)
}

pub fn loop_error(e: LoopError) -> Error<Code> {
    Error::new(Code(e.code()), e.to_string())
}

pub fn invalid_arg(msg: impl Into<String>) -> Error<Code> {
    Error::new(Code("ERR_INVALID_ARG_VALUE"), msg.into())
}

pub fn out_of_range(name: &str, rule: &str, received: f64) -> Error<Code> {
    Error::new(
        Code("ERR_OUT_OF_RANGE"),
        format!("The value of \"{name}\" is out of range. It must be {rule}. Received {received}"),
    )
}

/// Milliseconds from JS as a duration: must be finite; negatives are due now (Netty).
pub fn millis(name: &str, ms: f64) -> JsResult<std::time::Duration> {
    if !ms.is_finite() {
        return Err(out_of_range(name, "a finite number", ms));
    }
    Ok(std::time::Duration::try_from_secs_f64(ms.max(0.0) / 1000.0)
        .unwrap_or(std::time::Duration::MAX))
}

// The logging switch and the test hooks' flag live with the engine (napi-free); named here
// for the binding's modules.
pub use netloop_wire::logging::{configure_logging, debug, test_hooks_enabled};
