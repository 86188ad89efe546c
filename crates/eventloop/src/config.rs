//! Configuration of one loop.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::{system_ticker, Ticker};
use crate::error::LoopError;

/// What an injected selector fault makes the next poll do (tests of selector safety).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectorFault {
    /// Poll normally.
    None,
    /// Return at once with no events, as a buggy epoll would.
    PrematureEmpty,
    /// Return an I/O error, as a broken selector would.
    Error,
    /// Return `EINTR`, as a poll interrupted by a signal does.
    Interrupted,
}

/// Called before every poll; lets tests inject selector faults.
pub type FaultInjector = Arc<dyn Fn() -> SelectorFault + Send + Sync>;
/// Receives the message of a task that panicked (or of a JS task that threw).
pub type PanicReporter = Arc<dyn Fn(&str) + Send + Sync>;

/// The default [`LoopConfig::spin_before_sleep`].
pub const DEFAULT_SPIN_BEFORE_SLEEP: Duration = Duration::from_micros(20);

/// Settings of one loop. Defaults follow Netty, except a short adaptive spin before sleeping
/// (docs/decisions/0010).
#[derive(Clone)]
pub struct LoopConfig {
    /// Thread and diagnostics name.
    pub name: String,
    /// Percentage of an iteration's time given to I/O (1..=100); tasks get the rest.
    /// 100 runs every pending task after each poll without a time budget.
    pub io_ratio: u32,
    /// Most tasks that may wait in the cross-thread queue; more are rejected.
    pub max_pending_tasks: usize,
    /// Premature empty polls in a row that make the loop rebuild its selector (0: never).
    pub selector_rebuild_threshold: u32,
    /// Readiness events fetched per poll.
    pub events_capacity: usize,
    /// The loop's clock (a [`crate::ManualTicker`] in tests).
    pub ticker: Arc<dyn Ticker>,
    /// Receives the messages of failed tasks; `None`: they are logged at error level.
    pub on_task_panic: Option<PanicReporter>,
    /// Injects selector faults before every poll (tests).
    pub fault_injector: Option<FaultInjector>,
    /// How long a loop with nothing to do keeps polling without blocking before it sleeps in
    /// the selector (zero: it sleeps at once). I/O or a task arriving meanwhile is handled
    /// without a sleep and a wake-up. The spin is adaptive ([`crate::SpinGovernor`]): a loop
    /// spins only after a spin that found work or a sleep shorter than this, so an idle or
    /// lightly loaded loop does not spin. Attached loops: their driver's owner applies it
    /// (the Node binding between libuv callbacks), through [`crate::LoopDriver::spin`].
    pub spin_before_sleep: Duration,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            name: "netloop".into(),
            io_ratio: 50,
            max_pending_tasks: usize::MAX / 2,
            selector_rebuild_threshold: 512,
            events_capacity: 1024,
            ticker: system_ticker(),
            on_task_panic: None,
            fault_injector: None,
            spin_before_sleep: DEFAULT_SPIN_BEFORE_SLEEP,
        }
    }
}

impl LoopConfig {
    /// Checks the ranges of the settings.
    pub fn validate(&self) -> Result<(), LoopError> {
        if !(1..=100).contains(&self.io_ratio) {
            return Err(LoopError::invalid(format!(
                "ioRatio must be in 1..=100, got {}",
                self.io_ratio
            )));
        }
        if self.max_pending_tasks == 0 {
            return Err(LoopError::invalid("maxPendingTasks must be at least 1"));
        }
        if self.events_capacity == 0 {
            return Err(LoopError::invalid("events capacity must be at least 1"));
        }
        Ok(())
    }
}

impl std::fmt::Debug for LoopConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopConfig")
            .field("name", &self.name)
            .field("io_ratio", &self.io_ratio)
            .field("max_pending_tasks", &self.max_pending_tasks)
            .field(
                "selector_rebuild_threshold",
                &self.selector_rebuild_threshold,
            )
            .field("spin_before_sleep", &self.spin_before_sleep)
            .finish_non_exhaustive()
    }
}
