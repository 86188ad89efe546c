//! Timer scheduling on the loop thread: the [`LocalLoop`] methods that put entries into the
//! loop's timer heap. Ground rules as in `local.rs`: loop thread only, no borrow held while
//! user code runs.

use std::time::Duration;

use crate::event_loop::LoopState;
use crate::local::LocalLoop;
use crate::timer::{Period, ScheduledHandle, TimerSink, TimerTask};
use std::rc::Rc;

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
        let handle = ScheduledHandle::new(self.shared.cancelled_timers.clone());
        let mut task = Some(task);
        self.timers.borrow_mut().push(
            crate::clock::saturating_nanos(deadline),
            Period::Once,
            handle.clone(),
            TimerTask::Closure(Box::new(move || {
                if let Some(t) = task.take() {
                    t()
                }
            })),
        );
        self.request_iteration();
        handle
    }

    /// Runs `task` after `initial`, then every `period`: from the previous deadline when
    /// `fixed_rate` (missed runs catch up), else from the end of the previous run.
    pub fn schedule_local_periodic(
        &self,
        initial: Duration,
        period: Duration,
        fixed_rate: bool,
        task: impl FnMut() + 'static,
    ) -> Result<ScheduledHandle, crate::LoopError> {
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
    ) -> Result<ScheduledHandle, crate::LoopError> {
        if period.is_zero() {
            return Err(crate::LoopError::InvalidArgument(
                "period must be positive".into(),
            ));
        }
        let p = crate::clock::saturating_nanos(period);
        let handle = ScheduledHandle::new(self.shared.cancelled_timers.clone());
        let kind = if fixed_rate {
            Period::FixedRate(p)
        } else {
            Period::FixedDelay(p)
        };
        self.timers.borrow_mut().push(
            crate::clock::saturating_nanos(first),
            kind,
            handle.clone(),
            TimerTask::Closure(Box::new(task)),
        );
        self.request_iteration();
        Ok(handle)
    }

    pub(crate) fn push_timer(
        &self,
        deadline: u64,
        period: Period,
        handle: ScheduledHandle,
        task: Box<dyn FnMut() + Send>,
    ) {
        if self.shared.state() >= LoopState::ShuttingDown && self.graceful_start.get().is_some() {
            // Scheduled tasks are cancelled at shutdown (Netty).
            handle.cancel();
            return;
        }
        self.timers
            .borrow_mut()
            .push(deadline, period, handle, TimerTask::Closure(task));
        self.request_iteration();
    }

    /// A timer whose firing calls `sink.fire(&[.., value, ..])` at loop time `deadline`,
    /// together with the other due timers of the same sink that follow it in the task batch
    /// (up to 64 per call). `period`: `Some((period, fixed_rate))` repeats it.
    pub fn schedule_batched_at(
        &self,
        deadline: Duration,
        period: Option<(Duration, bool)>,
        sink: Rc<dyn TimerSink>,
        value: u64,
    ) -> Result<ScheduledHandle, crate::LoopError> {
        let kind = match period {
            None => Period::Once,
            Some((p, _)) if p.is_zero() => {
                return Err(crate::LoopError::InvalidArgument(
                    "period must be positive".into(),
                ))
            }
            Some((p, true)) => Period::FixedRate(crate::clock::saturating_nanos(p)),
            Some((p, false)) => Period::FixedDelay(crate::clock::saturating_nanos(p)),
        };
        let handle = ScheduledHandle::new(self.shared.cancelled_timers.clone());
        self.timers.borrow_mut().push(
            crate::clock::saturating_nanos(deadline),
            kind,
            handle.clone(),
            TimerTask::Batched { sink, value },
        );
        self.request_iteration();
        Ok(handle)
    }
}
