//! The one place where the netloop crates report what they cannot return as an error (a
//! failed wake-up, a panicking task without a reporter, a dropped listener).
//!
//! Library code never prints: it calls [`log`] (or [`error`], [`warn`], ...), which hands the
//! message to the process-wide sink. The default sink forwards it to the `log` crate (target
//! `netloop`), so the application's logger decides what is shown and where; with no logger
//! installed nothing is printed. [`set_log_sink`] routes messages elsewhere ([`stderr_sink`],
//! the Node binding, a test), [`set_max_level`] filters them before any sink sees them.
//!
//! Ground rules: the sink and the level are process-wide and may be changed from any thread;
//! a sink is a plain function so it can be called from any thread without locking user state.

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::RwLock;

/// How serious a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Level {
    /// Something failed and was not reported anywhere else (a task panicked, a wake failed).
    Error = 1,
    /// Something was dropped or degraded (a rejected task, a listener that cannot run).
    Warn = 2,
    /// Notable but expected events.
    Info = 3,
    /// Diagnostics.
    Debug = 4,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Error => "error",
            Level::Warn => "warn",
            Level::Info => "info",
            Level::Debug => "debug",
        })
    }
}

/// Receives every message at or below the maximum level.
pub type LogSink = fn(Level, &str);

/// The default sink: the message to the `log` crate's logger, target `netloop` (nothing is
/// printed unless the application installed a logger).
pub fn log_crate_sink(level: Level, message: &str) {
    let level = match level {
        Level::Error => ::log::Level::Error,
        Level::Warn => ::log::Level::Warn,
        Level::Info => ::log::Level::Info,
        Level::Debug => ::log::Level::Debug,
    };
    ::log::log!(target: "netloop", level, "{message}");
}

/// A sink for programs without a logger: the message as one line on stderr (install it with
/// [`set_log_sink`]).
pub fn stderr_sink(_level: Level, message: &str) {
    eprintln!("{message}");
}

static SINK: RwLock<LogSink> = RwLock::new(log_crate_sink);
static MAX_LEVEL: AtomicU8 = AtomicU8::new(Level::Debug as u8);

/// Routes every later message to `sink` (process-wide); returns the previous sink.
pub fn set_log_sink(sink: LogSink) -> LogSink {
    let mut s = SINK.write().unwrap_or_else(|p| p.into_inner());
    std::mem::replace(&mut *s, sink)
}

/// Keeps messages up to `level` (`None`: none at all). Default: every level.
pub fn set_max_level(level: Option<Level>) {
    MAX_LEVEL.store(level.map_or(0, |l| l as u8), Ordering::Relaxed);
}

/// True if a message at `level` would reach the sink.
pub fn enabled(level: Level) -> bool {
    level as u8 <= MAX_LEVEL.load(Ordering::Relaxed)
}

/// Hands `message` to the sink if `level` is enabled.
pub fn log(level: Level, message: &str) {
    if !enabled(level) {
        return;
    }
    let sink = *SINK.read().unwrap_or_else(|p| p.into_inner());
    sink(level, message);
}

/// [`log`] at [`Level::Error`].
pub fn error(message: &str) {
    log(Level::Error, message);
}

/// [`log`] at [`Level::Warn`].
pub fn warn(message: &str) {
    log(Level::Warn, message);
}

/// [`log`] at [`Level::Info`].
pub fn info(message: &str) {
    log(Level::Info, message);
}

/// [`log`] at [`Level::Debug`].
pub fn debug(message: &str) {
    log(Level::Debug, message);
}
