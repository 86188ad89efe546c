//! The timer heap of one loop and the handles that cancel its entries.
//!
//! Ground rules: the heap is touched only on its loop's thread. A [`ScheduledHandle`] may be
//! cancelled from any thread: cancellation sets a flag, and the loop drops cancelled entries
//! when they reach the top or when more than half of the heap is cancelled (a purge), so
//! memory stays bounded however many timers are scheduled and cancelled.
//!
//! Order: entries leave the heap by (deadline, sequence); the sequence is the order in which
//! entries entered the heap, so timers with equal deadlines run in the order scheduled.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

/// How an entry repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Period {
    Once,
    /// Next deadline = previous deadline + period (missed runs catch up back to back).
    FixedRate(u64),
    /// Next deadline = end of the previous run + period.
    FixedDelay(u64),
}

/// Life of a scheduled task: `PENDING` → (`RUNNING` → `FINISHED`, one-shots) or
/// `CANCELLED`. A one-shot becomes `RUNNING` (uncancellable) just before it runs, as Netty's
/// `setUncancellable`, so a `cancel` that returns `true` means the task will not run.
const PENDING: u8 = 0;
const RUNNING: u8 = 1;
const CANCELLED: u8 = 2;
const FINISHED: u8 = 3;

pub(crate) struct TimerShared {
    state: AtomicU8,
    /// The owning loop's count of cancelled entries still in its heap.
    loop_cancelled: Arc<AtomicUsize>,
}

/// Cancels a scheduled task from any thread.
#[derive(Clone)]
pub struct ScheduledHandle {
    shared: Arc<TimerShared>,
}

impl std::fmt::Debug for ScheduledHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScheduledHandle")
            .field("cancelled", &self.is_cancelled())
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl ScheduledHandle {
    pub(crate) fn new(loop_cancelled: Arc<AtomicUsize>) -> Self {
        ScheduledHandle {
            shared: Arc::new(TimerShared {
                state: AtomicU8::new(PENDING),
                loop_cancelled,
            }),
        }
    }

    /// Cancels the task; `true` if this call cancelled it, which means the task will not run
    /// (again). `false` if it was cancelled before, or if it is a one-shot that has started or
    /// finished running. A periodic task may be cancelled while it runs: it stops repeating.
    pub fn cancel(&self) -> bool {
        let first = self
            .shared
            .state
            .compare_exchange(PENDING, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if first {
            self.shared.loop_cancelled.fetch_add(1, Ordering::Relaxed);
        }
        first
    }

    /// True once cancelled (by [`ScheduledHandle::cancel`] or by the loop's shutdown).
    pub fn is_cancelled(&self) -> bool {
        self.shared.state.load(Ordering::Acquire) == CANCELLED
    }

    /// True once a one-shot task has run.
    pub fn is_finished(&self) -> bool {
        self.shared.state.load(Ordering::Acquire) == FINISHED
    }

    /// A one-shot is about to run: make it uncancellable. `false` if it was cancelled first
    /// (then it must not run).
    pub(crate) fn begin_once(&self) -> bool {
        self.shared
            .state
            .compare_exchange(PENDING, RUNNING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    pub(crate) fn mark_finished(&self) {
        self.shared.state.store(FINISHED, Ordering::Release);
    }
}

/// Receives the values of batched timers that fire one after the other within a task batch
/// (see [`crate::LocalLoop::schedule_batched_at`]): one call for up to 64 timers instead of
/// one call each. Called on the loop thread.
pub trait TimerSink {
    /// The timers with these values fired, in deadline order.
    fn fire(&self, values: &[u64]);
}

/// What a timer runs.
pub(crate) enum TimerTask {
    Closure(Box<dyn FnMut()>),
    Batched {
        sink: std::rc::Rc<dyn TimerSink>,
        value: u64,
    },
}

impl TimerTask {
    /// True if `self` goes to the same sink as `sink`.
    pub fn same_sink(&self, sink: &std::rc::Rc<dyn TimerSink>) -> bool {
        match self {
            TimerTask::Batched { sink: s, .. } => std::ptr::eq(
                std::rc::Rc::as_ptr(s) as *const (),
                std::rc::Rc::as_ptr(sink) as *const (),
            ),
            TimerTask::Closure(_) => false,
        }
    }
}

pub(crate) struct TimerEntry {
    pub deadline: u64,
    pub seq: u64,
    pub period: Period,
    pub handle: ScheduledHandle,
    pub task: TimerTask,
}

impl PartialEq for TimerEntry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == CmpOrdering::Equal
    }
}
impl Eq for TimerEntry {}
impl PartialOrd for TimerEntry {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for TimerEntry {
    // Reversed so that BinaryHeap (a max-heap) yields the smallest (deadline, seq) first.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.deadline, other.seq).cmp(&(self.deadline, self.seq))
    }
}

/// The heap never drops an entry itself: entries it discards (cancelled ones) wait in `dead`
/// until the owner takes them with [`TimerHeap::take_dead`] and drops them after releasing its
/// borrow, because dropping a task's closure runs user code (its captures' `Drop`).
pub(crate) struct TimerHeap {
    heap: BinaryHeap<TimerEntry>,
    next_seq: u64,
    cancelled: Arc<AtomicUsize>,
    dead: Vec<TimerEntry>,
}

impl TimerHeap {
    pub fn new(cancelled: Arc<AtomicUsize>) -> Self {
        TimerHeap {
            heap: BinaryHeap::new(),
            next_seq: 0,
            cancelled,
            dead: Vec::new(),
        }
    }

    /// Puts `entry` into the heap behind every entry with the same deadline (a fresh
    /// sequence number). The scheduler's `add_entry` is the only caller: every timer, new or
    /// periodic and due again, enters the heap through that one door.
    pub fn insert(&mut self, mut entry: TimerEntry) {
        entry.seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(entry);
        self.maybe_purge();
    }

    fn drop_cancelled_top(&mut self) {
        self.maybe_purge();
        while self.heap.peek().is_some_and(|e| e.handle.is_cancelled()) {
            self.dead.extend(self.heap.pop());
            // Saturating: a purge may have reset the count meanwhile.
            let _ = self
                .cancelled
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                    Some(c.saturating_sub(1))
                });
        }
    }

    fn maybe_purge(&mut self) {
        let c = self.cancelled.load(Ordering::Relaxed);
        if c > 64 && c * 2 > self.heap.len() {
            let (live, dead): (Vec<_>, Vec<_>) = std::mem::take(&mut self.heap)
                .into_iter()
                .partition(|e| !e.handle.is_cancelled());
            self.heap = live.into();
            self.dead.extend(dead);
            // Entries cancelled after leaving the heap were counted too: start again from zero.
            self.cancelled.store(0, Ordering::Relaxed);
        }
    }

    /// Deadline of the earliest live entry.
    pub fn next_deadline(&mut self) -> Option<u64> {
        self.drop_cancelled_top();
        self.heap.peek().map(|e| e.deadline)
    }

    /// Removes and returns the earliest live entry if it is due at `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<TimerEntry> {
        self.drop_cancelled_top();
        if self.heap.peek()?.deadline <= now {
            self.heap.pop()
        } else {
            None
        }
    }

    /// Number of entries, cancelled ones not yet dropped included.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Cancels every entry and moves it to the dead list (loop shutdown).
    pub fn cancel_all(&mut self) {
        for e in self.heap.drain() {
            e.handle.cancel();
            self.dead.push(e);
        }
        self.cancelled.store(0, Ordering::Relaxed);
    }

    /// The entries discarded since the last call, to be dropped by the caller.
    pub fn take_dead(&mut self) -> Vec<TimerEntry> {
        std::mem::take(&mut self.dead)
    }
}
