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
        let budget = s.config.spin_before_sleep;
        if budget.is_zero()
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
                return Some((outcome, ready));
            }
            // A task came (producers see the loop awake and fire no waker), or a shutdown
            // began (its confirmation runs in the iteration).
            if !s.queue.is_empty() || s.state() >= LoopState::ShuttingDown {
                return Some((outcome, ready));
            }
            self.io.recycle(ready);
            if start.elapsed() >= budget {
                return None;
            }
            // Leave the CPU to another runnable thread (the peer on a busy machine) meanwhile.
            std::thread::yield_now();
        }
    }
}
