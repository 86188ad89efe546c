//! The bounded spin of a standalone loop before it sleeps: non-blocking polls for a short
//! time (`LoopConfig::spin_before_sleep`) so that I/O or a task arriving right after a batch
//! is picked up without the loop going to sleep in the selector and being woken again (a
//! context switch each way, and on another CPU a cross-CPU wake-up). tokio's workers search
//! for work briefly before they park for the same reason; Netty offers it as the busy-wait
//! select strategy (unbounded there, bounded here).
//!
//! Ground rules: loop thread only, called by `LocalLoop::iterate` of a standalone loop
//! instead of its blocking poll. The spin never runs user code: it returns the first poll
//! that found something and the iteration dispatches it as usual. It does not spin when
//! work is already queued, while shutting down, with a manual clock (tests) or an injected
//! selector fault, or when a timer is due before the spin would end; and it never marks the
//! loop asleep, so producers do not fire the waker while it spins.
//!
//! The spin is adaptive ([`SpinGovernor`]): a loop spins only while spinning pays, that is
//! after a spin that found work or after a sleep shorter than the budget (a spin would have
//! caught its wake-up). Failed spins back off exponentially (up to [`MAX_SKIP`] sleeps without
//! a spin), so an idle or lightly loaded loop (work further apart than the budget) mostly
//! sleeps at once. The same governor decides for attached loops (crates/node's bridge).

use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::config::SelectorFault;
use crate::event_loop::LoopState;
use crate::io_driver::ReadyEvents;
use crate::local::LocalLoop;
use crate::selector::PollOutcome;

impl LocalLoop {
    /// Polls without blocking until something is ready or the spin budget is spent. `Some`:
    /// the outcome to dispatch (events, or none because a task came); `None`: nothing came,
    /// block as usual.
    pub(crate) fn spin_before_sleep(
        &self,
        fault: SelectorFault,
    ) -> Option<(PollOutcome, ReadyEvents)> {
        let s = &self.shared;
        let budget = self.spin.budget();
        if !self.spin.should_spin()
            || fault != SelectorFault::None
            || s.config.ticker.is_manual()
            || s.state() >= LoopState::ShuttingDown
            || self.sched.has_work()
            || !s.queue.is_empty()
            || self.next_timeout().is_some_and(|t| t <= budget)
        {
            return None;
        }
        let start = Instant::now();
        loop {
            let (outcome, ready) = self.io.select(Some(Duration::ZERO), SelectorFault::None);
            s.spin_polls.fetch_add(1, Ordering::Relaxed);
            if !ready.is_empty() || !matches!(outcome, PollOutcome::TimedOut) {
                self.spin.spun(true);
                return Some((outcome, ready));
            }
            // A task came (producers see the loop awake and fire no waker), or a shutdown
            // began (its confirmation runs in the iteration).
            if !s.queue.is_empty() || s.state() >= LoopState::ShuttingDown {
                self.spin.spun(true);
                return Some((outcome, ready));
            }
            self.io.recycle(ready);
            if start.elapsed() >= budget {
                self.spin.spun(false);
                return None;
            }
            // Leave the CPU to another runnable thread (the peer on a busy machine) meanwhile.
            std::thread::yield_now();
        }
    }
}

/// Whether a loop spins before it sleeps, adapted to how often spinning paid lately (module
/// docs). Loop thread only (it is `!Sync`).
///
/// A spin that finds work, or a sleep shorter than the budget, keeps the loop spinning. A spin
/// that finds nothing makes the loop sleep at once the next `skip` times it runs out of work,
/// `skip` doubling with every failed spin in a row up to [`MAX_SKIP`]: a loop whose work comes
/// further apart than the budget pays one budget every [`MAX_SKIP`] waits at most (a sleep
/// measures the wake-up latency too, so a short sleep alone would rarely turn a busy loop on
/// again on a loaded machine).
#[derive(Debug)]
pub struct SpinGovernor {
    budget: Duration,
    /// Failed spins in a row, as the sleeps to skip after the last one (0: spinning pays).
    backoff: Cell<u32>,
    /// Sleeps left before the next spin is tried.
    skip: Cell<u32>,
    /// When the loop went to sleep.
    slept_at: Cell<Option<Instant>>,
}

/// The most sleeps a loop skips spinning after failed spins.
pub const MAX_SKIP: u32 = 64;

impl SpinGovernor {
    /// A governor for a spin of at most `budget` (zero: never spin). It starts willing, so a
    /// loop spins once after its first work and learns from there.
    pub fn new(budget: Duration) -> Self {
        SpinGovernor {
            budget,
            backoff: Cell::new(0),
            skip: Cell::new(0),
            slept_at: Cell::new(None),
        }
    }

    /// The most a spin lasts.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// The loop is out of work: spin (true) or sleep at once (false).
    pub fn should_spin(&self) -> bool {
        !self.budget.is_zero() && self.skip.get() == 0
    }

    /// A spin ended: it found work (keep spinning) or spent its budget (back off).
    pub fn spun(&self, found_work: bool) {
        if found_work {
            self.backoff.set(0);
            self.skip.set(0);
        } else {
            let b = (self.backoff.get() * 2).clamp(1, MAX_SKIP);
            self.backoff.set(b);
            self.skip.set(b);
        }
    }

    /// The loop goes to sleep now (blocks in its selector, or hands its thread back).
    pub fn sleeping(&self) {
        if !self.budget.is_zero() {
            self.skip.set(self.skip.get().saturating_sub(1));
            self.slept_at.set(Some(Instant::now()));
        }
    }

    /// The loop woke up with work: a sleep shorter than the budget turns the spin on.
    pub fn woke(&self) {
        if let Some(at) = self.slept_at.take() {
            if at.elapsed() <= self.budget {
                self.backoff.set(0);
                self.skip.set(0);
            }
        }
    }

    /// The loop woke up with nothing to do (a timeout or a spurious wake-up): the sleep
    /// says nothing about how soon work comes.
    pub fn woke_idle(&self) {
        self.slept_at.set(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_spins_back_off_doubling_up_to_the_cap_and_a_found_one_resets() {
        let g = SpinGovernor::new(Duration::from_micros(20));
        assert!(g.should_spin());
        let mut skipped = Vec::new();
        for _ in 0..8 {
            g.spun(false);
            let mut n = 0;
            while !g.should_spin() {
                g.sleeping();
                g.woke_idle();
                n += 1;
            }
            skipped.push(n);
        }
        assert_eq!(skipped, [1, 2, 4, 8, 16, 32, 64, 64]);
        g.spun(true);
        g.spun(false);
        assert!(!g.should_spin());
        g.sleeping();
        assert!(
            g.should_spin(),
            "after a found spin the backoff starts again at one"
        );
    }

    #[test]
    fn a_sleep_shorter_than_the_budget_turns_the_spin_back_on() {
        let g = SpinGovernor::new(Duration::from_secs(5));
        for _ in 0..7 {
            g.spun(false);
        }
        g.sleeping();
        assert!(!g.should_spin());
        g.woke();
        assert!(g.should_spin());
    }

    #[test]
    fn a_zero_budget_never_spins() {
        let g = SpinGovernor::new(Duration::ZERO);
        g.woke();
        assert!(!g.should_spin());
    }
}
