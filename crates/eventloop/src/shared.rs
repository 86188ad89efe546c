//! The part of a loop that other threads touch (`Shared`, behind every [`crate::EventLoop`]
//! handle), and the loop's lifecycle states.
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

use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_queue::SegQueue;
use mio::{Poll, Waker};

use crate::clock::saturating_nanos;
use crate::config::LoopConfig;
use crate::error::LoopError;
use crate::promise::Promise;

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
    /// The state of a new loop in `state`, woken through `waker`.
    pub(crate) fn new(config: LoopConfig, state: LoopState, waker: Waker) -> Shared {
        let id = NEXT_LOOP_ID.fetch_add(1, Ordering::Relaxed);
        let cancelled = crate::timer::TimerCancels::new(id);
        Shared {
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
        }
    }

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
