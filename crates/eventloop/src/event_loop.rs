//! [`EventLoop`]: the thread-safe handle of one loop. What it shares across threads, and the
//! rules that make that safe (wake-up coalescing, no task abandoned), are in `shared.rs`.

use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use mio::{Poll, Waker};

use crate::clock::saturating_nanos;
use crate::config::LoopConfig;
use crate::error::{LoopError, RejectReason};
use crate::io::WAKER_TOKEN;
use crate::local::LocalLoop;
use crate::promise::{Future, Promise};
use crate::submit::Wake;
use crate::thread_context::{find_local, thread_token};
use crate::timer::{Period, ScheduledHandle};

pub use crate::shared::LoopState;
pub(crate) use crate::shared::{Shared, Task};

/// A handle to one event loop. Cheap to clone; usable from any thread.
#[derive(Clone)]
pub struct EventLoop {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for EventLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLoop")
            .field("name", &self.shared.config.name)
            .field("state", &self.state())
            .finish()
    }
}

impl PartialEq for EventLoop {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl EventLoop {
    fn build(config: LoopConfig, state: LoopState) -> Result<(EventLoop, Poll), LoopError> {
        config.validate()?;
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER_TOKEN)?;
        let shared = Arc::new(Shared::new(config, state, waker));
        Ok((EventLoop { shared }, poll))
    }

    /// A loop that runs on its own OS thread, started by the first task or schedule.
    pub fn standalone(config: LoopConfig) -> Result<EventLoop, LoopError> {
        let (el, poll) = Self::build(config, LoopState::NotStarted)?;
        *el.shared.startup.lock().unwrap_or_else(|p| p.into_inner()) = Some(poll);
        Ok(el)
    }

    /// A loop that lives on the calling thread and is driven from outside (by libuv, or by
    /// hand in tests) through the returned [`crate::LoopDriver`].
    pub fn attached(config: LoopConfig) -> Result<(EventLoop, crate::LoopDriver), LoopError> {
        let (el, poll) = Self::build(config, LoopState::Started)?;
        el.shared.owner.store(thread_token(), Ordering::SeqCst);
        el.shared.sleeping.store(true, Ordering::SeqCst);
        let local = LocalLoop::new(el.shared.clone(), poll);
        crate::thread_context::register_local(local.clone());
        Ok((el, crate::LoopDriver::new(local)))
    }

    /// This loop's process-wide id.
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The configured name.
    pub fn name(&self) -> &str {
        &self.shared.config.name
    }

    /// The lifecycle state.
    pub fn state(&self) -> LoopState {
        self.shared.state()
    }

    /// True once a graceful shutdown started.
    pub fn is_shutting_down(&self) -> bool {
        self.state() >= LoopState::ShuttingDown
    }

    /// True once new tasks are rejected.
    pub fn is_shutdown(&self) -> bool {
        self.state() >= LoopState::Shutdown
    }

    /// True once terminated.
    pub fn is_terminated(&self) -> bool {
        self.state() == LoopState::Terminated
    }

    /// Tasks waiting in the cross-thread queue.
    pub fn pending_tasks(&self) -> usize {
        self.shared.pending.load(Ordering::SeqCst)
    }

    /// Tasks that panicked (or JS tasks that threw) on this loop so far.
    pub fn task_failures(&self) -> u64 {
        self.shared.task_panics.load(Ordering::Relaxed)
    }

    /// Times the loop's waker was fired (wake-ups of a sleeping loop and self-wakes).
    pub fn wakeups(&self) -> u64 {
        self.shared.wakeups.load(Ordering::Relaxed)
    }

    /// True while the loop sleeps with nothing to do (blocked in its selector, or an attached
    /// loop that handed its thread back) until a producer or its own next deadline wakes it.
    /// Its planned wake-up is published before this turns true.
    pub fn is_sleeping(&self) -> bool {
        self.shared.sleeping.load(Ordering::SeqCst)
    }

    /// Non-blocking polls the loop made while spinning before a sleep
    /// ([`crate::LoopConfig::spin_before_sleep`]).
    pub fn spin_polls(&self) -> u64 {
        self.shared.spin_polls.load(Ordering::Relaxed)
    }

    /// Connections the server channels of this loop accepted and closed at once (over their
    /// `max_connections`, or out of descriptors).
    pub fn refused_connections(&self) -> u64 {
        self.shared.refused_connections.load(Ordering::Relaxed)
    }

    /// Counts one refused connection (server channels call it).
    pub fn record_refused_connection(&self) {
        self.shared
            .refused_connections
            .fetch_add(1, Ordering::Relaxed);
    }

    /// A standalone loop's (busy, elapsed) time since its thread started: busy is the time
    /// spent in iterations, the rest was spent blocked in the selector (Node's event-loop
    /// utilization is busy / elapsed). Zero for attached loops (their driver measures).
    pub fn busy_time(&self) -> (Duration, Duration) {
        let s = &self.shared;
        let started = s.started_nanos.load(Ordering::Relaxed);
        let elapsed = s.now_nanos().saturating_sub(started);
        let busy = s.busy_nanos.load(Ordering::Relaxed).min(elapsed);
        (Duration::from_nanos(busy), Duration::from_nanos(elapsed))
    }

    /// Times this loop rebuilt its selector.
    pub fn selector_rebuilds(&self) -> u64 {
        self.shared.selector_rebuilds.load(Ordering::Relaxed)
    }

    /// True on the thread that runs this loop.
    pub fn in_event_loop(&self) -> bool {
        self.shared.owner.load(Ordering::Relaxed) == thread_token()
    }

    /// The loop-thread side, on the loop's own thread only.
    pub fn local(&self) -> Option<Rc<LocalLoop>> {
        if !self.in_event_loop() {
            return None;
        }
        find_local(self.shared.id)
    }

    /// Runs `task` once after `delay` (zero: due now). Huge delays saturate.
    pub fn schedule(
        &self,
        delay: Duration,
        task: impl FnOnce() + Send + 'static,
    ) -> Result<ScheduledHandle, LoopError> {
        let mut task = Some(task);
        self.schedule_entry(
            delay,
            Period::Once,
            Box::new(move || {
                if let Some(t) = task.take() {
                    t()
                }
            }),
        )
    }

    /// Runs `task` after `initial`, then every `period` counted from the previous deadline;
    /// after an overrun, missed runs follow back to back.
    pub fn schedule_at_fixed_rate(
        &self,
        initial: Duration,
        period: Duration,
        task: impl FnMut() + Send + 'static,
    ) -> Result<ScheduledHandle, LoopError> {
        let p = positive_period(period)?;
        self.schedule_entry(initial, Period::FixedRate(p), Box::new(task))
    }

    /// Runs `task` after `initial`, then `delay` after the end of each run.
    pub fn schedule_with_fixed_delay(
        &self,
        initial: Duration,
        delay: Duration,
        task: impl FnMut() + Send + 'static,
    ) -> Result<ScheduledHandle, LoopError> {
        let p = positive_period(delay)?;
        self.schedule_entry(initial, Period::FixedDelay(p), Box::new(task))
    }

    fn schedule_entry(
        &self,
        delay: Duration,
        period: Period,
        task: Box<dyn FnMut() + Send>,
    ) -> Result<ScheduledHandle, LoopError> {
        let deadline = self
            .shared
            .now_nanos()
            .saturating_add(saturating_nanos(delay));
        let handle = ScheduledHandle::new(self.shared.cancelled_timers.clone());
        if let Some(local) = self.local() {
            if self.is_shutdown() {
                return Err(LoopError::Rejected(RejectReason::Shutdown));
            }
            local.push_timer(deadline, period, handle.clone(), task);
            return Ok(handle);
        }
        let h = handle.clone();
        // Wake the loop only if this timer is due before the loop's own planned wake-up.
        self.submit(
            Box::new(move || {
                if let Some(local) = crate::thread_context::current() {
                    local.push_timer(deadline, period, h, task);
                }
            }),
            Wake::Before(deadline),
        )?;
        Ok(handle)
    }

    /// Starts a graceful shutdown: tasks keep running until none arrived for `quiet`, or until
    /// `timeout` passes; then new tasks are rejected and the loop terminates.
    pub fn shutdown_gracefully(&self, quiet: Duration, timeout: Duration) -> Future<(), LoopError> {
        if quiet > timeout {
            return Promise::completed(Err(LoopError::invalid(
                "quiet period must not exceed the timeout",
            )));
        }
        let s = &self.shared;
        if s.state() < LoopState::ShuttingDown {
            s.quiet_nanos
                .store(saturating_nanos(quiet), Ordering::SeqCst);
            s.timeout_nanos
                .store(saturating_nanos(timeout), Ordering::SeqCst);
        }
        if s.state() == LoopState::NotStarted {
            // Netty starts the thread so that the loop can run its shutdown and terminate.
            if let Err(e) = self.start_thread() {
                return Promise::completed(Err(e));
            }
        }
        while s.state() < LoopState::ShuttingDown {
            if s.cas_state(LoopState::Started, LoopState::ShuttingDown) {
                break;
            }
        }
        s.sleeping.store(false, Ordering::SeqCst);
        s.wake();
        self.termination_future()
    }

    /// Completes when the loop terminated.
    pub fn termination_future(&self) -> Future<(), LoopError> {
        self.shared.termination.future()
    }

    /// Blocks until terminated or `timeout` passes; `true` if terminated. On a thread that
    /// runs a loop iteration it does not block (that could deadlock): it reports whether
    /// the loop has terminated already.
    pub fn await_termination(&self, timeout: Duration) -> bool {
        let done = !matches!(
            self.termination_future().wait_timeout(timeout),
            None | Some(Err(LoopError::BlockingOperation))
        );
        if done {
            if let Some(h) = self
                .shared
                .thread
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
            {
                if h.thread().id() != std::thread::current().id() {
                    let _ = h.join();
                }
            }
        }
        done
    }
}

fn positive_period(d: Duration) -> Result<u64, LoopError> {
    if d.is_zero() {
        return Err(LoopError::invalid("period must be positive"));
    }
    Ok(saturating_nanos(d))
}
