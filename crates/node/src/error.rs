//! The one place where core errors become JS errors with a stable `code`.

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

pub fn loop_error(e: LoopError) -> Error<Code> {
    Error::new(Code(e.code()), e.to_string())
}

pub fn invalid_arg(msg: impl Into<String>) -> Error<Code> {
    Error::new(Code("ERR_INVALID_ARG_VALUE"), msg.into())
}

/// Milliseconds from JS as a duration: NaN is rejected, negatives are due now, huge saturate.
pub fn millis(name: &str, ms: f64) -> JsResult<std::time::Duration> {
    if ms.is_nan() {
        return Err(invalid_arg(format!("{name} must be a number, got NaN")));
    }
    let ms = ms.max(0.0);
    Ok(std::time::Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(std::time::Duration::MAX))
}

/// A strictly positive period in milliseconds.
pub fn period(name: &str, ms: f64) -> JsResult<std::time::Duration> {
    if ms.is_nan() || ms <= 0.0 {
        return Err(invalid_arg(format!(
            "{name} must be a positive number of milliseconds, got {ms}"
        )));
    }
    millis(name, ms)
}
