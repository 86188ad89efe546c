//! What the netloop crates report but cannot return as an error (a failed wake-up, a
//! panicking task without a reporter, a dropped listener) goes to the [`log`](::log) crate,
//! target `netloop`: the application's logger decides what is shown and where (nothing is
//! printed without one). The Node binding installs its own logger (stderr when
//! `NETLOOP_DEBUG` is set). Library code never prints.
//!
//! The functions below only fix the target, so every crate reports the same way.

/// The `log` target of every netloop message.
pub const TARGET: &str = "netloop";

/// A message at `log::Level::Error`: something failed and was not reported anywhere else.
pub fn error(message: &str) {
    ::log::error!(target: TARGET, "{message}");
}

/// A message at `log::Level::Warn`: something was dropped or degraded.
pub fn warn(message: &str) {
    ::log::warn!(target: TARGET, "{message}");
}

/// A message at `log::Level::Info`: notable but expected.
pub fn info(message: &str) {
    ::log::info!(target: TARGET, "{message}");
}

/// A message at `log::Level::Debug`: diagnostics.
pub fn debug(message: &str) {
    ::log::debug!(target: TARGET, "{message}");
}
