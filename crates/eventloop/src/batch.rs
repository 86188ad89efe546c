//! The task batch of one loop: runs the owned [`Work`] that the [`crate::scheduler`] hands
//! out, with no borrow held (ground rules as in `local.rs`).
//!
//! Bound: a batch runs only the work queued when it starts (the scheduler counts it); with
//! ioRatio < 100 it also stops when its time budget is spent, checked every 64 tasks (Netty's
//! interval). Work that the batch adds runs in the next batch, so no task that re-submits
//! itself can hold the thread. Tail tasks run after the batch; one can be taken out before
//! it runs by its [`TailTaskKey`].

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::event_loop::LoopState;
use crate::local::LocalLoop;
use crate::scheduler::Work;
use crate::timer::{Period, TimerEntry};

/// Identifies a tail task queued by [`LocalLoop::add_tail_task`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailTaskKey(u64);

/// Tasks between two checks of the time budget (Netty's value).
const BUDGET_CHECK_INTERVAL: u32 = 64;

impl LocalLoop {
    /// Runs one bounded batch: the tasks and due timers queued when it starts (work they add
    /// waits for the next batch); `budget` in nanoseconds also bounds it (checked every 64
    /// tasks). `start`: the loop time now (timers due by then run), read by the caller.
    /// Tail tasks run after the batch. Returns whether any task ran.
    pub(crate) fn run_batch(&self, budget: Option<u64>, start: u64) -> bool {
        let s = &self.shared;
        let mut batch = self.sched.start_batch(s, start);
        let deadline = budget.map(|b| start.saturating_add(b));
        let mut ran: u32 = 0;
        let mut next_check = BUDGET_CHECK_INTERVAL;
        while let Some(work) = self.sched.next(&mut batch) {
            ran = ran.saturating_add(self.run_work(work));
            if ran >= next_check {
                next_check = ran.saturating_add(BUDGET_CHECK_INTERVAL);
                if deadline.is_some_and(|d| s.now_nanos() >= d) {
                    break;
                }
            }
        }
        if ran > 0 {
            self.sched.set_last_execution(s.now_nanos());
        }
        for t in self.sched.take_tail() {
            self.guarded(t);
        }
        ran > 0
    }

    /// As [`LocalLoop::execute_after_batch`], returning a key for
    /// [`LocalLoop::remove_tail_task`]; `None` if the loop is shut down (the task is dropped).
    pub fn add_tail_task(&self, task: impl FnOnce() + 'static) -> Option<TailTaskKey> {
        if self.shared.state() >= LoopState::Shutdown {
            return None;
        }
        let key = self.sched.push_tail(Box::new(task));
        self.request_iteration();
        Some(TailTaskKey(key))
    }

    /// Netty's `removeAfterEventLoopIterationTask`: takes a tail task out before it runs.
    /// `true` if it was still queued (it will not run).
    pub fn remove_tail_task(&self, key: TailTaskKey) -> bool {
        let removed = self.sched.remove_tail(key.0);
        removed.is_some()
    }

    pub(crate) fn guarded(&self, f: impl FnOnce()) -> bool {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(()) => true,
            Err(p) => {
                self.shared.report_panic(&panic_message(&p));
                false
            }
        }
    }

    /// Runs one piece of work; returns how many run-queue items it stood for.
    fn run_work(&self, work: Work) -> u32 {
        match work {
            Work::Task(t) => {
                self.guarded(t);
                1
            }
            Work::Timer(mut e) => {
                if !may_run(&e) {
                    return 1;
                }
                let ok = self.guarded(&mut e.task);
                self.sched.timer_ran(e, ok, self.shared.now_nanos());
                1
            }
        }
    }
}

/// A timer about to run: a one-shot becomes uncancellable (`false` if it was cancelled
/// first); a periodic one runs unless cancelled.
fn may_run(e: &TimerEntry) -> bool {
    match e.period {
        Period::Once => e.handle.begin_once(),
        _ => !e.handle.is_cancelled(),
    }
}

pub(crate) fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a task panicked".to_string()
    }
}
