//! Graceful shutdown and termination of a loop (Netty's `confirmShutdown` and the drain after
//! it). Ground rules as in `local.rs`; the cross-thread half of the "no task abandoned"
//! protocol is described in `shared.rs`.
//!
//! Rules:
//! - A panic that escapes an iteration (not a task's: those are caught one by one) ends the
//!   loop: what was accepted still runs, cleanup hooks run, and the termination future fails
//!   with `LoopError::Panicked`.
//! - The timeout is honoured even when tasks keep coming: each shutting-down iteration runs
//!   one bounded batch, then checks the timeout before anything else.
//! - Quiet period: the loop may stop once no task ran for `quiet` and no work is ready. With
//!   `quiet == 0` it stops once an iteration ran nothing and has nothing ready (Netty's
//!   runAllTasks drained the queue), or after 64 batches of tasks that keep submitting tasks
//!   (which Netty's unbounded runAllTasks would run forever).
//! - Termination is finite: after the state becomes `Shutdown`, every submission is rejected
//!   (`execute`, `execute_local`, tail tasks; timers are cancelled), so the drain runs only
//!   the tasks accepted before.
//! - Descriptors: the waker's eventfd closes at termination. A standalone loop closes its
//!   selector right after; an attached loop's selector closes in
//!   [`LocalLoop::release_selector`], which its driver calls once libuv stopped watching it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

use crate::batch::panic_message;
use crate::error::LoopError;
use crate::event_loop::{EventLoop, LoopState};
use crate::local::{Iteration, LocalLoop};
use crate::thread_context;

/// Bounded batches a direct termination runs before it stops accepting tasks, so that the
/// short task chains of closing channels (close → inactive → unregistered) complete.
const TERMINATE_SETTLE_BATCHES: u32 = 16;

/// Most batches a shutdown with no quiet period runs while tasks keep coming.
const SHUTDOWN_FOLLOW_UP_BATCHES: u32 = 64;

impl EventLoop {
    /// Cuts a graceful shutdown in progress short: the rest of its quiet period and timeout
    /// are skipped, so the loop runs the tasks it already accepted and terminates in its next
    /// iterations (an aborted `shutdownGracefully({ signal })`). Does nothing before
    /// [`EventLoop::shutdown_gracefully`].
    pub fn expedite_shutdown(&self) {
        let s = &self.shared;
        if s.state() < LoopState::ShuttingDown {
            return;
        }
        s.quiet_nanos.store(0, Ordering::SeqCst);
        s.timeout_nanos.store(0, Ordering::SeqCst);
        s.sleeping.store(false, Ordering::SeqCst);
        s.wake();
    }
}

impl LocalLoop {
    /// [`LocalLoop::iterate`], but a panic that escapes the loop's body terminates the loop
    /// (Netty: the loop stops and its termination future fails with that error) instead of
    /// unwinding further: a standalone loop's thread ends cleanly, an attached loop's driver
    /// never lets a panic reach the FFI boundary.
    pub(crate) fn iterate_guarded(&self, blocking: bool, io_wake: bool) -> Iteration {
        match catch_unwind(AssertUnwindSafe(|| self.iterate(blocking, io_wake))) {
            Ok(it) => it,
            Err(p) => {
                self.abort(panic_message(&p));
                Iteration {
                    terminated: true,
                    ..Iteration::default()
                }
            }
        }
    }

    /// A panic escaped the loop's body: log it, run what was accepted, and terminate with
    /// the termination future failed.
    fn abort(&self, msg: String) {
        self.in_iteration.set(false);
        self.io_phase_start.set(None);
        crate::log::error(&format!(
            "netloop: unexpected panic in loop {}: {msg}; the loop terminates",
            self.shared.config.name
        ));
        let error = LoopError::Panicked(msg);
        let again = catch_unwind(AssertUnwindSafe(|| self.terminate_with(Err(error.clone()))));
        if again.is_err() {
            // Terminating panicked too: give up on the rest, but never leave waiters hanging.
            self.shared.set_state(LoopState::Terminated);
            self.shared.release_waker();
            thread_context::unregister_local(self.shared.id);
            self.shared.termination.try_failure(error);
        }
    }

    /// The loop saw the shutting-down state: close every source (once) and start the
    /// graceful-shutdown clock, which cancels every timer.
    pub(crate) fn begin_shutdown(&self) {
        self.sched.begin_graceful(self.shared.now_nanos());
        for h in self.io.sources_to_close() {
            self.guarded(|| h.close_on_shutdown());
        }
    }

    /// Netty's confirmShutdown, after this iteration's batch (`ran`: it ran a task): `true`
    /// once the loop may stop accepting tasks.
    pub(crate) fn confirm_shutdown(&self, ran: bool) -> bool {
        let s = &self.shared;
        let now = s.now_nanos();
        if s.state() >= LoopState::Shutdown {
            return true;
        }
        let start = self.sched.graceful_start().unwrap_or(now);
        if now.saturating_sub(start) > s.timeout_nanos.load(Ordering::SeqCst) {
            return true;
        }
        let quiet = s.quiet_nanos.load(Ordering::SeqCst);
        if quiet == 0 {
            // Netty's runAllTasks runs until its queue is empty, tasks queued meanwhile
            // included, and then confirmShutdown is true. Batches here are bounded (tasks
            // added by a batch run in the next one), so the shutdown goes on while batches
            // run, for at most SHUTDOWN_FOLLOW_UP_BATCHES of them: a finite task chain (a
            // closing channel's) completes, an endless one (tasks that keep submitting tasks)
            // ends there instead of holding the loop until the timeout; what it submits
            // after the termination's settle batches is rejected.
            if !ran {
                return !self.has_ready_work();
            }
            let n = self.shutdown_batches.get() + 1;
            self.shutdown_batches.set(n);
            return n >= SHUTDOWN_FOLLOW_UP_BATCHES;
        }
        if ran || self.has_ready_work() {
            return false;
        }
        now.saturating_sub(self.sched.last_execution()) >= quiet
    }

    /// Stops accepting tasks, runs every task already accepted, then terminates.
    pub(crate) fn terminate(&self) {
        self.terminate_with(Ok(()));
    }

    /// As [`LocalLoop::terminate`]; the termination future completes with `outcome`.
    pub(crate) fn terminate_with(&self, outcome: Result<(), LoopError>) {
        let s = &self.shared;
        if s.state() == LoopState::Terminated {
            return;
        }
        if s.state() < LoopState::ShuttingDown {
            s.set_state(LoopState::ShuttingDown);
        }
        self.begin_shutdown();
        // What the shutdown's close did not close by now is closed at once: its close events
        // and failed writes run in the settle batches below, before the loop terminates.
        for h in self.io.sources() {
            self.guarded(|| h.close_on_termination());
        }
        for _ in 0..TERMINATE_SETTLE_BATCHES {
            if !self.sched.has_work() {
                break;
            }
            self.run_batch(None, self.shared.now_nanos());
        }
        s.set_state(LoopState::Shutdown);
        loop {
            let ran = self.run_batch(None, self.shared.now_nanos());
            if s.pending.load(Ordering::SeqCst) == 0 && s.queue.is_empty() && !self.sched.has_work()
            {
                break;
            }
            if !ran {
                // A producer counted itself in but has not pushed yet: it will very soon.
                std::thread::yield_now();
            }
        }
        self.sched.cancel_timers();
        for hook in self.shared.take_cleanup_hooks() {
            self.guarded(hook);
        }
        self.io.clear();
        self.io.release_retired();
        s.release_waker();
        if self.owns_selector.get() {
            self.io.release();
        }
        s.set_state(LoopState::Terminated);
        thread_context::unregister_local(s.id);
        s.termination.try_complete(outcome);
    }

    /// Terminates the loop if it is not terminated yet, then closes its selector's fds
    /// (and those of selectors replaced by rebuilds). Idempotent; `false` if already
    /// released. After it the loop does nothing and reports itself terminated.
    pub(crate) fn release_selector(&self) -> bool {
        if self.shared.state() != LoopState::Terminated {
            self.terminate();
        }
        self.io.release()
    }
}
