//! The one place where core errors become JS errors with a stable `code`, and the one switch
//! for diagnostics: the binding never prints unless `NETLOOP_DEBUG` is set in the environment
//! (read once per process). Everything a user must learn about goes to JS instead (a thrown
//! error, or the loop's `onTaskError`).

use std::sync::OnceLock;

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

fn env_flag(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// `NETLOOP_DEBUG` set (and not `0`): diagnostics are printed on stderr.
pub fn debug_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| env_flag("NETLOOP_DEBUG"))
}

/// The Node sink of the `log` crate: one line on stderr per message. A Node process has no
/// Rust logger of its own, so the binding installs this one.
struct NodeSink;

impl log::Log for NodeSink {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, r: &log::Record<'_>) {
        // The one place the binding prints, and only with NETLOOP_DEBUG set. Not the print macro:
        // it panics when stderr cannot be written, and a panic must not cross into Node.
        use std::io::Write;
        let _ = writeln!(std::io::stderr().lock(), "{}", r.args());
    }
    fn flush(&self) {}
}

/// Sets up logging for a Node process, once: a Node library prints nothing unless asked, so
/// every level is off unless `NETLOOP_DEBUG` is set; then all of them go to stderr. The
/// binding's and the core's messages go through the `log` crate (target `netloop`).
pub fn configure_logging() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        if debug_enabled() && log::set_logger(&NodeSink).is_ok() {
            log::set_max_level(log::LevelFilter::Debug);
        } else {
            log::set_max_level(log::LevelFilter::Off);
        }
    });
}

/// A diagnostic of the binding (see [`configure_logging`]).
pub fn debug(msg: std::fmt::Arguments<'_>) {
    configure_logging();
    log::debug!(target: netloop_eventloop::log::TARGET, "netloop: {msg}");
}

/// `NETLOOP_TEST_HOOKS=1` when the loop is made: test hooks (fault injection, cross-thread
/// posts, counters) work on it. Read per loop, so a test process can set it before its first
/// loop.
pub fn test_hooks_enabled() -> bool {
    env_flag("NETLOOP_TEST_HOOKS")
}
