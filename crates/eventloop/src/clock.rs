//! Loop time. Every loop reads time through a [`Ticker`] so tests can use a fake clock.
//!
//! Time is a `Duration` since the ticker's origin; it never goes backwards.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A monotonic clock shared by a loop and the threads that schedule on it.
pub trait Ticker: Send + Sync + 'static {
    /// Time elapsed since this ticker's origin.
    fn now(&self) -> Duration;
    /// True for clocks that only move when told to (tests). Blocking loops never sleep on
    /// such a clock's timers, they only wait for tasks or I/O.
    fn is_manual(&self) -> bool {
        false
    }
}

/// The real monotonic clock.
#[derive(Debug)]
pub struct SystemTicker {
    origin: Instant,
}

impl SystemTicker {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        SystemTicker {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemTicker {
    fn default() -> Self {
        Self::new()
    }
}

impl Ticker for SystemTicker {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A fake clock that moves only through [`ManualTicker::advance`].
#[derive(Debug, Default)]
pub struct ManualTicker {
    nanos: AtomicU64,
}

impl ManualTicker {
    /// A clock at zero.
    pub fn new() -> Arc<Self> {
        Arc::new(ManualTicker::default())
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        self.nanos.fetch_add(saturating_nanos(d), Ordering::SeqCst);
    }
}

impl Ticker for ManualTicker {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::SeqCst))
    }
    fn is_manual(&self) -> bool {
        true
    }
}

/// `d` in nanoseconds, saturating at `u64::MAX`.
pub(crate) fn saturating_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The default ticker shared by all loops of a process.
pub fn system_ticker() -> Arc<dyn Ticker> {
    static SYSTEM: std::sync::OnceLock<Arc<SystemTicker>> = std::sync::OnceLock::new();
    SYSTEM.get_or_init(|| Arc::new(SystemTicker::new())).clone()
}
