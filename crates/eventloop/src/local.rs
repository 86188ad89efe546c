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

mod iteration;

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
    /// While the I/O handlers of an iteration run: the loop time read after the poll
    /// ([`LocalLoop::io_time`]), in nanoseconds.
    pub(crate) io_phase_start: Cell<Option<u64>>,
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
            io_phase_start: Cell::new(None),
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

    /// The loop time for an I/O event: while the iteration's I/O handlers run, the time read
    /// once after the poll returned (no clock read per channel; the event happened at most
    /// that phase's length later); otherwise [`LocalLoop::now`]. For bookkeeping that a
    /// phase's length cannot matter to, such as the time of a channel's last read
    /// (`IdleStateHandler`), never for scheduling (a timer from it could fire early).
    pub fn io_time(&self) -> Duration {
        match self.io_phase_start.get() {
            Some(nanos) => Duration::from_nanos(nanos),
            None => self.now(),
        }
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
