//! [`LocalLoop`]: the loop-thread side of an event loop and its iteration function.
//!
//! Ground rules:
//! - A `LocalLoop` lives on one thread (it is `!Send`); every field is touched only there.
//! - Its state is split in two owners that keep their fields private: the [`IoDriver`]
//!   (selector, ready events, registered sources) and the [`Scheduler`] (run queue, timers,
//!   tail tasks, shutdown clock). Neither ever calls user code or lends out a borrow; they hand
//!   back owned work, which this module runs. So no `RefCell` borrow is held while user code
//!   (a task, a timer, an I/O handler) runs, and user code may call back into the loop
//!   (register, execute, schedule) freely.
//! - One iteration = poll → dispatch ready sources → one bounded task batch (due timers join
//!   the run queue first; the batch takes only what is queued when it starts, and with
//!   ioRatio < 100 a time budget is checked every 64 tasks) → tail tasks → shutdown
//!   confirmation. Standalone loops block in the poll; attached loops never do, and every
//!   attached iteration returns after one batch.
//! - More work after a batch: standalone loops poll with a zero timeout; attached loops make
//!   their own fd readable (the waker, coalesced), report [`Iteration::more_work`] and
//!   `next_timeout() == Some(ZERO)`, so the outside loop comes back through its poll phase.

use std::cell::Cell;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::{Rc, Weak};
use std::sync::atomic::{fence, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mio::event::Source;
use mio::{Interest, Poll, Token};

use crate::batch::panic_message;
use crate::config::SelectorFault;
use crate::error::{LoopError, RejectReason};
use crate::event_loop::{EventLoop, LoopState, Shared, Task};
use crate::io::IoHandler;
use crate::io_driver::{IoDriver, Rebuilt};
use crate::scheduler::Scheduler;
use crate::selector::PollOutcome;
use crate::spin::SpinGovernor;
use crate::thread_context;

pub use crate::batch::TailTaskKey;

/// Longest sleep while shutting down, so the quiet period is re-checked.
const SHUTDOWN_POLL: Duration = Duration::from_millis(100);
/// Longest sleep of a blocking loop on a manual clock, which no timeout can follow.
const MANUAL_CLOCK_POLL: Duration = Duration::from_millis(1);

/// The loop-thread side of an event loop.
pub struct LocalLoop {
    pub(crate) shared: Arc<Shared>,
    me: Weak<LocalLoop>,
    pub(crate) io: IoDriver,
    pub(crate) sched: Scheduler,
    pub(crate) in_iteration: Cell<bool>,
    /// A standalone loop: nothing outside watches the selector, so termination closes it.
    pub(crate) owns_selector: Cell<bool>,
    /// Batches that ran during a shutdown with no quiet period (see `confirm_shutdown`).
    pub(crate) shutdown_batches: Cell<u32>,
    /// Work the loop does not see itself (an attached loop's JS side: events waiting for JS,
    /// ops waiting for the loop) that must keep a graceful shutdown going.
    work_probe: std::cell::RefCell<Option<Rc<dyn Fn() -> bool>>>,
    /// Whether a standalone loop spins before it sleeps (`crate::spin`).
    pub(crate) spin: SpinGovernor,
}

/// What one iteration did, for the driver of an attached loop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Iteration {
    /// The selector was rebuilt: the raw fd changed.
    pub selector_rebuilt: bool,
    /// The loop terminated during this iteration.
    pub terminated: bool,
    /// Work is ready now (tasks left behind by the bounded batch, tasks from other threads,
    /// a due timer; during a shutdown also the work probe's). The loop has already fired its own waker, so its fd is readable and the
    /// outside loop's poll phase will call [`crate::LoopDriver::run_io_ready`] again; the
    /// driver must not re-arm through a zero-delay timer.
    pub more_work: bool,
}

impl LocalLoop {
    pub(crate) fn new(shared: Arc<Shared>, poll: Poll) -> Rc<LocalLoop> {
        let capacity = shared.config.events_capacity;
        let cancelled = shared.cancelled_timers.clone();
        let spin_budget = shared.config.spin_before_sleep;
        Rc::new_cyclic(|me| LocalLoop {
            shared,
            me: me.clone(),
            io: IoDriver::new(poll, capacity),
            sched: Scheduler::new(cancelled),
            in_iteration: Cell::new(false),
            owns_selector: Cell::new(false),
            shutdown_batches: Cell::new(0),
            work_probe: std::cell::RefCell::new(None),
            spin: SpinGovernor::new(spin_budget),
        })
    }

    /// The loop whose iteration is running on this thread.
    pub fn current() -> Option<Rc<LocalLoop>> {
        thread_context::current()
    }

    /// This loop's process-wide id (as [`EventLoop::id`]).
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The thread-safe handle of this loop.
    pub fn handle(&self) -> EventLoop {
        EventLoop {
            shared: self.shared.clone(),
        }
    }

    /// Loop time (the configured ticker; fake in tests).
    pub fn now(&self) -> Duration {
        self.shared.config.ticker.now()
    }

    /// True while an iteration of this loop runs (inside a task, timer or I/O handler).
    pub fn is_in_iteration(&self) -> bool {
        self.in_iteration.get()
    }

    /// Registers `source` for `interest`; readiness is delivered to `handler`.
    pub fn register(
        &self,
        source: &mut dyn Source,
        interest: Interest,
        handler: Rc<dyn IoHandler>,
    ) -> io::Result<Token> {
        self.io.register(source, interest, handler)
    }

    /// Changes the interest of a registered `source`.
    pub fn reregister(
        &self,
        source: &mut dyn Source,
        token: Token,
        interest: Interest,
    ) -> io::Result<()> {
        self.io.reregister(source, token, interest)
    }

    /// Removes `source`; events already fetched for its token are not delivered.
    pub fn deregister(&self, source: &mut dyn Source, token: Token) -> io::Result<()> {
        self.io.deregister(source, token)
    }

    /// Timers in the heap (cancelled ones not yet dropped included).
    pub fn timer_count(&self) -> usize {
        self.sched.timer_count()
    }

    /// Sources registered on this loop.
    pub fn registered_count(&self) -> usize {
        self.io.registered_count()
    }

    /// Runs `task` (which need not be `Send`) in a later task batch, FIFO with `execute`.
    /// Once the loop is shut down the task is rejected: it is dropped and a warning is
    /// logged (use [`LocalLoop::try_execute_local`] to handle the rejection).
    pub fn execute_local(&self, task: impl FnOnce() + 'static) {
        if let Err(e) = self.try_execute_local(task) {
            crate::log::warn(&format!(
                "netloop: a local task for loop {} was dropped: {e}",
                self.shared.config.name
            ));
        }
    }

    /// As [`LocalLoop::execute_local`], reporting a rejection (the loop is shut down).
    pub fn try_execute_local(&self, task: impl FnOnce() + 'static) -> Result<(), LoopError> {
        if self.shared.state() >= LoopState::Shutdown {
            return Err(LoopError::Rejected(RejectReason::Shutdown));
        }
        self.sched.push_task(Box::new(task));
        self.request_iteration();
        Ok(())
    }

    pub(crate) fn push_task(&self, task: Task) {
        self.sched.push_task(task);
        self.request_iteration();
    }

    /// Queues `task` without waking the loop (lazy execute).
    pub(crate) fn push_task_lazily(&self, task: Task) {
        self.sched.push_task(task);
    }

    /// Runs `task` after the next task batch (Netty's `executeAfterEventLoopIteration`).
    /// Rejected (dropped, with a warning logged) once the loop is shut down.
    pub fn execute_after_batch(&self, task: impl FnOnce() + 'static) {
        if self.shared.state() >= LoopState::Shutdown {
            crate::log::warn(&format!(
                "netloop: a tail task for loop {} was dropped: the loop is shut down",
                self.shared.config.name
            ));
            return;
        }
        self.sched.push_tail(Box::new(task));
        self.request_iteration();
    }

    /// Outside an iteration (an attached loop's owner thread, between libuv callbacks), new
    /// work must make the loop run again: wake it once. Inside an iteration: nothing to do.
    pub fn request_iteration(&self) {
        if !self.in_iteration.get() {
            self.shared.wake_if_sleeping();
        }
    }

    /// Tells the loop about work it cannot see (e.g. events an attached loop's driver still
    /// has to hand to JS): while `probe()` is true a graceful shutdown does not confirm (and
    /// the iteration reports more work). Outside a shutdown the probe's work does not make the
    /// loop wake itself: whoever holds that work runs it after the iteration and asks for
    /// another one ([`LocalLoop::request_iteration`]) if some is left. The probe runs on the
    /// loop thread between batches, with no borrow of the loop held.
    pub fn set_work_probe(&self, probe: Rc<dyn Fn() -> bool>) {
        *self.work_probe.borrow_mut() = Some(probe);
    }

    /// Work is ready now: queued tasks or tail tasks, tasks from other threads, a due timer,
    /// or work the probe reports.
    pub(crate) fn has_ready_work(&self) -> bool {
        let probe = self.work_probe.borrow().clone();
        probe.is_some_and(|p| p()) || self.has_own_ready_work()
    }

    /// Work of the loop's own is ready now (the probe not asked).
    fn has_own_ready_work(&self) -> bool {
        self.sched.has_work()
            || !self.shared.queue.is_empty()
            || self
                .sched
                .next_deadline()
                .is_some_and(|d| d <= self.shared.now_nanos())
    }

    /// Time until this loop must iterate again if nothing wakes it; `None`: only a wake.
    /// `Some(ZERO)` exactly when work is ready now (see [`Iteration::more_work`]).
    pub fn next_timeout(&self) -> Option<Duration> {
        if self.sched.has_work() || !self.shared.queue.is_empty() {
            return Some(Duration::ZERO);
        }
        let now = self.shared.now_nanos();
        let mut t = self
            .sched
            .next_deadline()
            .map(|d| Duration::from_nanos(d.saturating_sub(now)));
        if self.shared.state() >= LoopState::ShuttingDown {
            t = Some(t.map_or(SHUTDOWN_POLL, |t| t.min(SHUTDOWN_POLL)));
        }
        t
    }

    fn block_timeout(&self) -> Option<Duration> {
        if self.sched.has_work() {
            return Some(Duration::ZERO);
        }
        let s = &self.shared;
        let t = self.next_timeout();
        self.publish_planned_wakeup();
        s.sleeping.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !s.queue.is_empty() {
            s.sleeping.store(false, Ordering::SeqCst);
            return Some(Duration::ZERO);
        }
        if s.config.ticker.is_manual() {
            return Some(t.map_or(MANUAL_CLOCK_POLL, |t| t.min(MANUAL_CLOCK_POLL)));
        }
        t
    }

    /// One iteration. `blocking`: standalone (sleep in the poll). `io_wake`: an attached loop
    /// was called because its fd became readable, so an empty poll is premature.
    pub(crate) fn iterate(&self, blocking: bool, io_wake: bool) -> Iteration {
        let terminated = Iteration {
            terminated: true,
            ..Iteration::default()
        };
        if self.io.is_released() || self.shared.state() == LoopState::Terminated {
            return terminated;
        }
        let Some(me) = self.me.upgrade() else {
            return terminated;
        };
        let _current = thread_context::enter(me);
        let was_in = self.in_iteration.replace(true);
        let s = self.shared.clone();
        let mut out = Iteration::default();

        let fault = s
            .config
            .fault_injector
            .as_ref()
            .map_or(SelectorFault::None, |f| f());
        let spun = if blocking {
            self.spin_before_sleep(fault)
        } else {
            None
        };
        let (outcome, ready) = match spun {
            Some(found) => found,
            None if blocking => {
                let timeout = self.block_timeout();
                let sleeps = timeout != Some(Duration::ZERO);
                if sleeps {
                    self.spin.sleeping();
                }
                let (outcome, ready) = self.io.select(timeout, fault);
                if sleeps {
                    if ready.is_empty() && s.queue.is_empty() {
                        self.spin.woke_idle();
                    } else {
                        self.spin.woke();
                    }
                }
                (outcome, ready)
            }
            None => self.io.select(Some(Duration::ZERO), fault),
        };
        s.polled();

        let io_start = s.now_nanos();
        let had_io = !ready.is_empty();
        match outcome {
            PollOutcome::Ready => self.io.reset_premature(),
            PollOutcome::TimedOut if !io_wake || blocking => self.io.reset_premature(),
            PollOutcome::TimedOut | PollOutcome::PrematureEmpty => {
                if self.io.count_premature(s.config.selector_rebuild_threshold) {
                    out.selector_rebuilt = self.rebuild_selector();
                }
            }
            // Netty: a poll interrupted by a signal is not a spin; it resets the counter.
            PollOutcome::Failed(e) if e.kind() == io::ErrorKind::Interrupted => {
                self.io.reset_premature()
            }
            PollOutcome::Failed(e) => {
                crate::log::error(&format!(
                    "netloop: poll failed on loop {}: {e}; rebuilding the selector",
                    s.config.name
                ));
                out.selector_rebuilt = self.rebuild_selector();
            }
        }
        for &(token, readiness) in &ready {
            if let Some(h) = self.io.handler(token) {
                self.guarded(|| h.ready(readiness));
            }
        }
        self.io.recycle(ready);

        let shutting_down = s.state() >= LoopState::ShuttingDown;
        if shutting_down {
            self.begin_shutdown();
        }
        // One clock read serves the I/O time and the batch's start (no handler ran without
        // I/O: the poll's return is the start then).
        let io_end = if had_io { s.now_nanos() } else { io_start };
        let ratio = s.config.io_ratio as u64;
        let budget = if ratio == 100 || shutting_down {
            None
        } else if had_io {
            let io_time = io_end.saturating_sub(io_start);
            Some(io_time.saturating_mul(100 - ratio) / ratio)
        } else {
            Some(0)
        };
        let ran = self.run_batch(budget, io_end);

        if shutting_down && self.confirm_shutdown(ran) {
            self.terminate();
            out.terminated = true;
        }
        if !out.terminated {
            // What the probe reports (an attached loop's events waiting for JS) is delivered
            // by the driver's owner right after this iteration, and the owner asks for
            // another iteration if it cannot deliver everything: waking the loop for it would
            // cost a waker write and a spurious poll per iteration. During a shutdown it
            // counts, so that the next iteration comes to confirm it.
            out.more_work = if shutting_down {
                self.has_ready_work()
            } else {
                self.has_own_ready_work()
            };
            if !blocking {
                self.prepare_attached_sleep(out.more_work);
            }
        }
        if blocking {
            // Utilization: from the selector's return to here (one clock read more).
            let busy = s.now_nanos().saturating_sub(io_start);
            s.busy_nanos.fetch_add(busy, Ordering::Relaxed);
        }
        self.in_iteration.set(was_in);
        out
    }

    /// An attached loop hands control back to libuv: keep the fd readable if work remains,
    /// else mark the loop asleep so the next producer wakes it.
    fn prepare_attached_sleep(&self, more_work: bool) {
        let s = &self.shared;
        if more_work {
            s.wake();
            return;
        }
        self.publish_planned_wakeup();
        s.sleeping.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !s.queue.is_empty() && s.sleeping.swap(false, Ordering::SeqCst) {
            s.wake();
        }
    }

    /// Before the loop sleeps: tell producers when it plans to wake up by itself (loop
    /// time; `u64::MAX`: only when woken), so that a timer scheduled from another thread
    /// wakes it only if it would become the earliest (Netty's `nextWakeupNanos`). The next
    /// deadline is published as it is: the clock is read only when work is ready now or a
    /// shutdown bounds the sleep (an overdue deadline wakes the loop at once either way).
    fn publish_planned_wakeup(&self) {
        let s = &self.shared;
        let at = if self.sched.has_work() || !s.queue.is_empty() {
            s.now_nanos()
        } else {
            let deadline = self.sched.next_deadline();
            if s.state() >= LoopState::ShuttingDown {
                let bound = s
                    .now_nanos()
                    .saturating_add(crate::clock::saturating_nanos(SHUTDOWN_POLL));
                deadline.map_or(bound, |d| d.min(bound))
            } else {
                deadline.unwrap_or(u64::MAX)
            }
        };
        s.planned_wakeup.store(at, Ordering::SeqCst);
    }

    /// Replaces the selector, then moves every source to it. Handlers run with no borrow
    /// held; a handler whose source cannot be moved is told through
    /// [`IoHandler::reregister_failed`].
    fn rebuild_selector(&self) -> bool {
        let Rebuilt {
            old,
            new,
            waker,
            sources,
        } = match self.io.rebuild() {
            Ok(r) => r,
            Err(e) => {
                crate::log::error(&format!("netloop: rebuilding the selector failed: {e}"));
                return false;
            }
        };
        for (token, handler) in sources {
            let res = catch_unwind(AssertUnwindSafe(|| {
                handler.reregister(old.registry(), &new, token)
            }));
            let err = match res {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => e,
                Err(p) => {
                    self.shared.report_panic(&panic_message(&p));
                    io::Error::other("re-registering the source panicked")
                }
            };
            self.guarded(|| handler.reregister_failed(err));
        }
        drop(new);
        if self.owns_selector.get() {
            // A standalone loop: nobody else watches the old fd, close it now.
            drop(old);
        } else {
            self.io.retire(old);
        }
        self.shared.replace_waker(waker);
        // Whoever may be sleeping on the old waker must look again.
        self.shared.force_wake();
        self.shared
            .selector_rebuilds
            .fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Closes selectors replaced by rebuilds.
    pub fn release_retired_selectors(&self) {
        self.io.release_retired();
    }

    /// The selector's fd; `-1` once the selector was released.
    #[cfg(unix)]
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        self.io.raw_fd().unwrap_or(-1)
    }
}

/// The body of a standalone loop's thread: iterate until terminated, then close the
/// selector's descriptors at once (nobody else watches them).
pub(crate) fn run_standalone(shared: Arc<Shared>, poll: Poll) {
    shared
        .owner
        .store(thread_context::thread_token(), Ordering::SeqCst);
    shared
        .started_nanos
        .store(shared.now_nanos(), Ordering::Relaxed);
    let local = LocalLoop::new(shared.clone(), poll);
    local.owns_selector.set(true);
    thread_context::register_local(local.clone());
    while !local.iterate_guarded(true, false).terminated {}
    local.release_selector();
}

impl std::fmt::Debug for LocalLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalLoop").finish_non_exhaustive()
    }
}
