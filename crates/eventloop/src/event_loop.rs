//! [`EventLoop`]: the thread-safe handle of one loop, and the state it shares across threads.
//!
//! Ground rules:
//! - `Shared` is the only part of a loop that other threads touch: the MPSC task queue, the
//!   pending-task counter, the lifecycle state, the sleep flag and the waker.
//! - Wake-up coalescing: the loop sets `sleeping` before it blocks (or, attached, when it
//!   hands control back to libuv with nothing to do) and re-checks the queue; a producer pushes
//!   and then swaps `sleeping` to false, waking the loop only if it was the one to clear it.
//!   Both sides use SeqCst fences, so a task is never left in the queue of a sleeping loop, and
//!   the loop is woken once however many tasks arrive while it sleeps (the protocol is checked
//!   exhaustively in `tests/it/wake_model.rs`).
//! - Waker coalescing: `wake_pending` is set by whoever fires the waker and cleared by the loop
//!   right after each poll (the poll consumed the event); a wake while one is pending does not
//!   write the eventfd again. A selector rebuild fires the new waker unconditionally.
//! - Descriptors: the waker (an eventfd) is dropped when the loop terminates, not when the last
//!   handle goes; waking a terminated loop does nothing.
//! - No task is abandoned: a producer counts itself in `pending` before it checks the state;
//!   after the loop moves to `Shutdown` it drains until `pending` is zero, and producers that
//!   see `Shutdown` take themselves out and report a rejection.

use std::rc::Rc;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_queue::SegQueue;
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

pub(crate) type Task = Box<dyn FnOnce() + Send + 'static>;

/// Lifecycle of a loop (Netty's states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum LoopState {
    /// A standalone loop whose thread has not started (no task submitted yet).
    NotStarted = 1,
    /// Running.
    Started = 2,
    /// A graceful shutdown started: tasks are still accepted during the quiet period.
    ShuttingDown = 3,
    /// New tasks are rejected; the tasks already accepted are running.
    Shutdown = 4,
    /// Done: every accepted task ran, timers are cancelled, descriptors closed.
    Terminated = 5,
}

impl LoopState {
    fn from_u8(v: u8) -> Self {
        match v {
            1 => LoopState::NotStarted,
            2 => LoopState::Started,
            3 => LoopState::ShuttingDown,
            4 => LoopState::Shutdown,
            _ => LoopState::Terminated,
        }
    }
}

static NEXT_LOOP_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) struct Shared {
    pub id: u64,
    pub config: LoopConfig,
    pub queue: SegQueue<Task>,
    pub pending: AtomicUsize,
    state: AtomicU8,
    pub sleeping: AtomicBool,
    /// The waker fired and the loop has not polled since.
    wake_pending: AtomicBool,
    /// `None` once the loop terminated.
    waker: Mutex<Option<Arc<Waker>>>,
    /// Thread token of the thread that runs the loop (0 until it starts).
    pub owner: AtomicUsize,
    pub cancelled_timers: Arc<crate::timer::TimerCancels>,
    pub termination: Promise<(), LoopError>,
    pub quiet_nanos: AtomicU64,
    pub timeout_nanos: AtomicU64,
    /// The selector of a standalone loop, waiting for the lazy thread start.
    pub(crate) startup: Mutex<Option<Poll>>,
    pub(crate) thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    pub task_panics: AtomicU64,
    /// When the sleeping loop plans to wake up by itself (loop time, `u64::MAX`: never).
    pub planned_wakeup: AtomicU64,
    /// Hooks run once on the loop thread after its last task (Netty's `cleanup()`).
    pub(crate) cleanup: Mutex<Vec<Task>>,
    pub selector_rebuilds: AtomicU64,
    pub wakeups: AtomicU64,
    /// Non-blocking polls made while spinning before a sleep.
    pub spin_polls: AtomicU64,
    pub refused_connections: AtomicU64,
    /// A standalone loop's time in iterations (not blocked in its selector), in loop nanos,
    /// and when its thread started (`u64::MAX`: not yet); written by the loop thread only.
    pub busy_nanos: AtomicU64,
    pub started_nanos: AtomicU64,
}

impl Shared {
    pub fn state(&self) -> LoopState {
        LoopState::from_u8(self.state.load(Ordering::SeqCst))
    }

    pub fn set_state(&self, s: LoopState) {
        self.state.store(s as u8, Ordering::SeqCst);
    }

    pub(crate) fn cas_state(&self, from: LoopState, to: LoopState) -> bool {
        self.state
            .compare_exchange(from as u8, to as u8, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    pub fn replace_waker(&self, w: Waker) {
        *self.waker.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(w));
    }

    /// Closes the waker's descriptor (termination).
    pub fn release_waker(&self) {
        let w = self.waker.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(w);
    }

    /// Wakes the loop if it is asleep (or about to be); at most one wake per sleep.
    pub fn wake_if_sleeping(&self) {
        fence(Ordering::SeqCst);
        if self.sleeping.swap(false, Ordering::SeqCst) {
            self.wake();
        }
    }

    /// Makes the loop's selector readable now, unless a wake is already pending.
    pub fn wake(&self) {
        if !self.wake_pending.swap(true, Ordering::SeqCst) {
            self.fire_waker();
        }
    }

    /// Fires the waker even if a wake is pending (a rebuild replaced the waker).
    pub fn force_wake(&self) {
        self.wake_pending.store(true, Ordering::SeqCst);
        self.fire_waker();
    }

    /// The loop polled: the pending wake (if any) was consumed.
    pub fn polled(&self) {
        self.sleeping.store(false, Ordering::SeqCst);
        self.wake_pending.store(false, Ordering::SeqCst);
    }

    fn fire_waker(&self) {
        let w = self.waker.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(w) = w else { return };
        self.wakeups.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = w.wake() {
            crate::log::error(&format!(
                "netloop: waking loop {} failed: {e}",
                self.config.name
            ));
        }
    }

    /// The cleanup hooks, once (termination).
    pub fn take_cleanup_hooks(&self) -> Vec<Task> {
        std::mem::take(&mut *self.cleanup.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub fn report_panic(&self, msg: &str) {
        self.task_panics.fetch_add(1, Ordering::Relaxed);
        match &self.config.on_task_panic {
            Some(r) => r(msg),
            None => crate::log::error(&format!(
                "netloop: a task on loop {} failed: {msg}",
                self.config.name
            )),
        }
    }

    pub fn now_nanos(&self) -> u64 {
        saturating_nanos(self.config.ticker.now())
    }
}

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
        let id = NEXT_LOOP_ID.fetch_add(1, Ordering::Relaxed);
        let cancelled = crate::timer::TimerCancels::new(id);
        let shared = Arc::new(Shared {
            id,
            config,
            queue: SegQueue::new(),
            pending: AtomicUsize::new(0),
            state: AtomicU8::new(state as u8),
            sleeping: AtomicBool::new(false),
            wake_pending: AtomicBool::new(false),
            waker: Mutex::new(Some(Arc::new(waker))),
            owner: AtomicUsize::new(0),
            cancelled_timers: cancelled,
            termination: Promise::new(),
            quiet_nanos: AtomicU64::new(0),
            timeout_nanos: AtomicU64::new(0),
            startup: Mutex::new(None),
            thread: Mutex::new(None),
            task_panics: AtomicU64::new(0),
            planned_wakeup: AtomicU64::new(u64::MAX),
            cleanup: Mutex::new(Vec::new()),
            selector_rebuilds: AtomicU64::new(0),
            wakeups: AtomicU64::new(0),
            spin_polls: AtomicU64::new(0),
            refused_connections: AtomicU64::new(0),
            busy_nanos: AtomicU64::new(0),
            started_nanos: AtomicU64::new(u64::MAX),
        });
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
