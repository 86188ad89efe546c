//! Logging in a Node process, and the binding's two environment switches: a Node library
//! prints nothing unless asked, so every level of the `log` crate is off unless
//! `NETLOOP_DEBUG` is set (not `0`); then the binding's and the core's messages (target
//! `netloop`) go to stderr, one line each. `NETLOOP_TEST_HOOKS` turns on the test hooks of the
//! loops made while it is set.
//!
//! Ground rules: the logger is installed once per process (`configure_logging`, on any
//! thread, before a loop is made); the flags are read from the environment, `NETLOOP_DEBUG`
//! once per process, `NETLOOP_TEST_HOOKS` per loop.

use std::sync::OnceLock;

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

/// Sets up logging for a Node process, once (see the module docs).
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
