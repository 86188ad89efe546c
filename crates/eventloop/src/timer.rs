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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

pub(crate) struct TimerShared {
    cancelled: AtomicBool,
    finished: AtomicBool,
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
                cancelled: AtomicBool::new(false),
                finished: AtomicBool::new(false),
                loop_cancelled,
            }),
        }
    }

    /// Cancels the task; `true` if this call cancelled it (it had neither run to completion
    /// as a one-shot nor been cancelled before). A periodic task stops repeating.
    pub fn cancel(&self) -> bool {
        if self.shared.finished.load(Ordering::Acquire) {
            return false;
        }
        let first = !self.shared.cancelled.swap(true, Ordering::AcqRel);
        if first {
            self.shared.loop_cancelled.fetch_add(1, Ordering::Relaxed);
        }
        first
    }

    pub fn is_cancelled(&self) -> bool {
        self.shared.cancelled.load(Ordering::Acquire)
    }

    /// True once a one-shot task has run.
    pub fn is_finished(&self) -> bool {
        self.shared.finished.load(Ordering::Acquire)
    }

    pub(crate) fn mark_finished(&self) {
        self.shared.finished.store(true, Ordering::Release);
    }
}

/// Receives the values of batched timers that fire one after the other within a task batch
/// (see [`crate::LocalLoop::schedule_batched_at`]): one call for up to 64 timers instead of
/// one call each. Called on the loop thread.
pub trait TimerSink {
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

pub(crate) struct TimerHeap {
    heap: BinaryHeap<TimerEntry>,
    next_seq: u64,
    cancelled: Arc<AtomicUsize>,
}

impl TimerHeap {
    pub fn new(cancelled: Arc<AtomicUsize>) -> Self {
        TimerHeap {
            heap: BinaryHeap::new(),
            next_seq: 0,
            cancelled,
        }
    }

    pub fn push(
        &mut self,
        deadline: u64,
        period: Period,
        handle: ScheduledHandle,
        task: TimerTask,
    ) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(TimerEntry {
            deadline,
            seq,
            period,
            handle,
            task,
        });
        self.maybe_purge();
    }

    /// Re-inserts a periodic entry after it ran, with a fresh sequence number.
    pub fn reinsert(&mut self, mut entry: TimerEntry, deadline: u64) {
        entry.deadline = deadline;
        entry.seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(entry);
    }

    fn drop_cancelled_top(&mut self) {
        self.maybe_purge();
        while self.heap.peek().is_some_and(|e| e.handle.is_cancelled()) {
            self.heap.pop();
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
            self.heap.retain(|e| !e.handle.is_cancelled());
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

    /// Cancels and drops every entry (loop shutdown).
    pub fn cancel_all(&mut self) -> usize {
        let n = self.heap.len();
        for e in self.heap.drain() {
            e.handle.cancel();
        }
        self.cancelled.store(0, Ordering::Relaxed);
        n
    }
}
