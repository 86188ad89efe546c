//! Timer scheduling on the loop thread: the [`LocalLoop`] methods that put entries into the
//! loop's timer heap. Ground rules as in `local.rs`: loop thread only, no borrow held while
//! user code runs.
//!
//! Every path goes through the scheduler's one door (`Scheduler::add_timer`, which periodic
//! timers also take when they are due again), so one rule holds for all of them: once a
//! graceful shutdown has started, a timer is cancelled at once instead of entering the heap
//! (Netty cancels scheduled tasks when shutdown begins).

use std::time::Duration;

use crate::clock::saturating_nanos;
use crate::error::LoopError;
use crate::local::LocalLoop;
use crate::timer::{Period, ScheduledHandle, TimerTask};

/// The repeat rule of a periodic timer; a zero period is an error.
fn periodic(period: Duration, fixed_rate: bool) -> Result<Period, LoopError> {
    if period.is_zero() {
        return Err(LoopError::InvalidArgument("period must be positive".into()));
    }
    let p = saturating_nanos(period);
    Ok(if fixed_rate {
        Period::FixedRate(p)
    } else {
        Period::FixedDelay(p)
    })
}

impl LocalLoop {
    /// Runs `task` once after `delay` on this loop; the handle cancels it.
    pub fn schedule_local(
        &self,
        delay: Duration,
        task: impl FnOnce() + 'static,
    ) -> ScheduledHandle {
        self.schedule_local_at(self.now().saturating_add(delay), task)
    }

    /// Runs `task` once at loop time `deadline` (see [`LocalLoop::now`]); a deadline in the
    /// past is due now and still ordered by its deadline among other due timers.
    pub fn schedule_local_at(
        &self,
        deadline: Duration,
        task: impl FnOnce() + 'static,
    ) -> ScheduledHandle {
        let mut task = Some(task);
        let run_once = move || {
            if let Some(t) = task.take() {
                t()
            }
        };
        self.add_timer(saturating_nanos(deadline), Period::Once, Box::new(run_once))
    }

    /// Runs `task` after `initial`, then every `period`: from the previous deadline when
    /// `fixed_rate` (missed runs catch up), else from the end of the previous run.
    pub fn schedule_local_periodic(
        &self,
        initial: Duration,
        period: Duration,
        fixed_rate: bool,
        task: impl FnMut() + 'static,
    ) -> Result<ScheduledHandle, LoopError> {
        self.schedule_local_periodic_at(
            self.now().saturating_add(initial),
            period,
            fixed_rate,
            task,
        )
    }

    /// As [`LocalLoop::schedule_local_periodic`], first run at loop time `first`.
    pub fn schedule_local_periodic_at(
        &self,
        first: Duration,
        period: Duration,
        fixed_rate: bool,
        task: impl FnMut() + 'static,
    ) -> Result<ScheduledHandle, LoopError> {
        let kind = periodic(period, fixed_rate)?;
        Ok(self.add_timer(saturating_nanos(first), kind, Box::new(task)))
    }

    /// A timer scheduled through [`crate::EventLoop`] (from any thread), arriving here.
    pub(crate) fn push_timer(
        &self,
        deadline: u64,
        period: Period,
        handle: ScheduledHandle,
        task: Box<dyn FnMut() + Send>,
    ) {
        self.add_timer_with(deadline, period, handle, task);
    }

    fn add_timer(&self, deadline: u64, period: Period, task: TimerTask) -> ScheduledHandle {
        let handle = self.sched.new_handle();
        self.add_timer_with(deadline, period, handle.clone(), task);
        handle
    }

    fn add_timer_with(
        &self,
        deadline: u64,
        period: Period,
        handle: ScheduledHandle,
        task: TimerTask,
    ) {
        if self.sched.add_timer(deadline, period, handle, task) {
            self.request_iteration();
        }
    }
}
