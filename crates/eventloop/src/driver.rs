//! [`LoopDriver`]: drives an attached loop from outside (libuv in the Node binding, a test's
//! hand in unit tests). The driver lives on the loop's thread.
//!
//! Protocol for the outside loop (the Node binding):
//! 1. Watch [`LoopDriver::raw_fd`] for readability; when it is readable call
//!    [`LoopDriver::run_io_ready`]; when the timer armed from [`LoopDriver::next_timeout`]
//!    fires call [`LoopDriver::run_once`]. Each call runs one bounded iteration and returns.
//! 2. After an iteration, [`Iteration::more_work`] (equivalently `next_timeout() ==
//!    Some(Duration::ZERO)`) means work is ready now. The loop has already fired its own
//!    waker, so its fd is readable and the outside loop's poll phase comes back to it; never
//!    re-arm with a zero-delay timer. Whenever the binding itself sees `next_timeout() ==
//!    Some(ZERO)` outside an iteration it may call [`LoopDriver::wake_for_more_work`], which is
//!    cheap and coalesced.
//! 3. After a rebuild ([`Iteration::selector_rebuilt`]) watch the new fd, then call
//!    [`LoopDriver::release_retired_selectors`].
//! 4. Once the loop terminated ([`Iteration::terminated`]), stop watching the fd, then call
//!    [`LoopDriver::release_selector`] to close it (dropping the driver does it too).

use std::rc::Rc;
use std::time::Duration;

use crate::event_loop::EventLoop;
use crate::local::{Iteration, LocalLoop};
use crate::spin::SpinGovernor;

/// Drives one attached loop, one non-blocking iteration at a time.
pub struct LoopDriver {
    local: Rc<LocalLoop>,
}

impl LoopDriver {
    pub(crate) fn new(local: Rc<LocalLoop>) -> Self {
        LoopDriver { local }
    }

    fn terminated() -> Iteration {
        Iteration {
            terminated: true,
            ..Iteration::default()
        }
    }

    /// One non-blocking iteration (a timer or a hand in a test asked for it).
    pub fn run_once(&self) -> Iteration {
        if self.local.handle().is_terminated() {
            return Self::terminated();
        }
        self.local.iterate_guarded(false, false)
    }

    /// One non-blocking iteration because the loop's fd became readable: finding nothing
    /// counts as a premature wake-up towards a selector rebuild.
    pub fn run_io_ready(&self) -> Iteration {
        if self.local.handle().is_terminated() {
            return Self::terminated();
        }
        self.local.iterate_guarded(false, true)
    }

    /// Iterates until no work is ready (tests); at most 10 000 iterations.
    pub fn run_until_idle(&self) {
        for _ in 0..10_000 {
            let it = self.run_once();
            if it.terminated || self.local.next_timeout() != Some(Duration::ZERO) {
                return;
            }
        }
    }

    /// The fd to watch for readability (the selector's epoll/kqueue fd); `-1` after
    /// [`LoopDriver::release_selector`].
    #[cfg(unix)]
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        self.local.raw_fd()
    }

    /// When the loop must run again if its fd stays quiet (`None`: not until woken).
    /// `Some(Duration::ZERO)` means work is ready now: see [`Iteration::more_work`].
    pub fn next_timeout(&self) -> Option<Duration> {
        self.local.next_timeout()
    }

    /// Makes the loop's fd readable so that the outside loop's poll phase runs another
    /// iteration: fires the loop's waker unless a wake is already pending (it is coalesced
    /// with every other wake until the next poll). Cheap; does nothing after termination.
    pub fn wake_for_more_work(&self) {
        self.local.shared.wake();
    }

    /// Whether the loop should spin before its owner hands the thread back (the adaptive
    /// governor of `LoopConfig::spin_before_sleep`, which the owner applies to an attached
    /// loop: it polls [`LoopDriver::raw_fd`] without blocking, for at most the budget).
    pub fn spin(&self) -> &SpinGovernor {
        &self.local.spin
    }

    /// Counts `n` non-blocking polls the owner made while spinning ([`EventLoop::spin_polls`]).
    pub fn count_spin_polls(&self, n: u64) {
        self.local
            .shared
            .spin_polls
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }

    /// The thread-safe handle of the loop.
    pub fn handle(&self) -> EventLoop {
        self.local.handle()
    }

    /// The loop-thread side of the loop.
    pub fn local(&self) -> &Rc<LocalLoop> {
        &self.local
    }

    /// Closes selectors replaced by rebuilds, once the outside loop stopped watching them.
    pub fn release_retired_selectors(&self) {
        self.local.release_retired_selectors();
    }

    /// Terminates now: rejects new tasks, runs those already accepted, cancels timers.
    /// Used when the owning thread goes away (worker termination). The selector's fd stays
    /// open until [`LoopDriver::release_selector`].
    pub fn terminate_now(&self) {
        self.local.terminate();
    }

    /// Closes the loop's selector fd (and retired ones). Call it after the outside loop
    /// stopped watching [`LoopDriver::raw_fd`] (for libuv: after `uv_poll_stop`/`uv_close`
    /// of the poll handle). Terminates the loop first if needed. Idempotent: returns `true`
    /// the first time. Afterwards the driver reports every iteration as terminated and does
    /// nothing, and `raw_fd()` is `-1`. Dropping the driver does the same.
    pub fn release_selector(&self) -> bool {
        self.local.release_selector()
    }
}

impl Drop for LoopDriver {
    fn drop(&mut self) {
        self.local.release_selector();
    }
}

impl std::fmt::Debug for LoopDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopDriver").finish_non_exhaustive()
    }
}
