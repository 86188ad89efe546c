//! The timer heap of one loop and the handles that cancel its entries.
//!
//! Ground rules: the heap is touched only on its loop's thread. A [`ScheduledHandle`] may be
//! cancelled from any thread: cancellation sets a flag and queues the entry on its loop's
//! [`TimerCancels`]. On the loop's thread (and not while the heap is borrowed) the entry is
//! removed from the heap at once; from another thread the loop removes it at its next look at
//! the heap (Netty: removal on the loop thread, a lazy removal task otherwise, which does
//! not wake the loop). So a cancelled timer never waits for its deadline to be freed.
//!
//! Order: entries leave the heap by (deadline, sequence); the sequence is the order in which
//! entries entered the heap, so timers with equal deadlines run in the order scheduled.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use crossbeam_queue::SegQueue;

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
    /// The owning loop's queue of cancelled entries to take out of its heap.
    cancels: Arc<TimerCancels>,
    /// The entry's key in the heap (deadline, sequence); written on the loop thread only.
    deadline: AtomicU64,
    seq: AtomicU64,
}

/// The cancelled timers of one loop that its heap has not removed yet.
pub(crate) struct TimerCancels {
    loop_id: u64,
    queue: SegQueue<Arc<TimerShared>>,
}

impl TimerCancels {
    pub fn new(loop_id: u64) -> Arc<Self> {
        Arc::new(TimerCancels {
            loop_id,
            queue: SegQueue::new(),
        })
    }

    /// Forgets the queued cancellations (termination: the heap is gone).
    pub fn clear(&self) {
        while self.queue.pop().is_some() {}
    }
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
    pub(crate) fn new(cancels: Arc<TimerCancels>) -> Self {
        ScheduledHandle {
            shared: Arc::new(TimerShared {
                state: AtomicU8::new(PENDING),
                cancels,
                deadline: AtomicU64::new(0),
                seq: AtomicU64::new(u64::MAX),
            }),
        }
    }

    /// Cancels the task; `true` if this call cancelled it, which means the task will not run
    /// (again). `false` if it was cancelled before, or if it is a one-shot that has started or
    /// finished running. A periodic task may be cancelled while it runs: it stops repeating.
    ///
    /// The entry leaves its loop's heap at once when cancelled on the loop's thread, else at
    /// the loop's next look at its heap (no wake-up). Cost: a look-up of the loop by id on
    /// this thread and a removal by the entry's key (deadline, sequence), O(log n) in the
    /// loops of the thread and the entries of the heap; no scan.
    pub fn cancel(&self) -> bool {
        if !self.cancel_flag() {
            return false;
        }
        let cancels = &self.shared.cancels;
        cancels.queue.push(self.shared.clone());
        if let Some(local) = crate::thread_context::find_local(cancels.loop_id) {
            local.sched.remove_cancelled_timers();
        }
        true
    }

    /// Sets the cancelled state only (the heap is being cleared or the entry is not in it).
    pub(crate) fn cancel_flag(&self) -> bool {
        self.shared
            .state
            .compare_exchange(PENDING, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
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

/// What a timer runs.
pub(crate) type TimerTask = Box<dyn FnMut()>;

pub(crate) struct TimerEntry {
    pub deadline: u64,
    pub seq: u64,
    pub period: Period,
    pub handle: ScheduledHandle,
    pub task: TimerTask,
}

/// The heap never drops an entry itself: entries it discards (cancelled ones) wait in `dead`
/// until the owner takes them with [`TimerHeap::take_dead`] and drops them after releasing its
/// borrow, because dropping a task's closure runs user code (its captures' `Drop`).
pub(crate) struct TimerHeap {
    /// Ordered by (deadline, sequence).
    map: BTreeMap<(u64, u64), TimerEntry>,
    next_seq: u64,
    cancels: Arc<TimerCancels>,
    dead: Vec<TimerEntry>,
}

impl TimerHeap {
    pub fn new(cancels: Arc<TimerCancels>) -> Self {
        TimerHeap {
            map: BTreeMap::new(),
            next_seq: 0,
            cancels,
            dead: Vec::new(),
        }
    }

    /// Puts `entry` into the heap behind every entry with the same deadline (a fresh
    /// sequence number). The scheduler's `add_entry` is the only caller: every timer, new or
    /// periodic and due again, enters the heap through that one door.
    pub fn insert(&mut self, mut entry: TimerEntry) {
        entry.seq = self.next_seq;
        self.next_seq += 1;
        let sh = &entry.handle.shared;
        sh.deadline.store(entry.deadline, Ordering::Relaxed);
        sh.seq.store(entry.seq, Ordering::Relaxed);
        self.map.insert((entry.deadline, entry.seq), entry);
    }

    /// Takes the entries cancelled since the last call out of the heap.
    pub fn remove_cancelled(&mut self) {
        while let Some(sh) = self.cancels.queue.pop() {
            let key = (
                sh.deadline.load(Ordering::Relaxed),
                sh.seq.load(Ordering::Relaxed),
            );
            let ours = self
                .map
                .get(&key)
                .is_some_and(|e| Arc::ptr_eq(&e.handle.shared, &sh));
            if ours {
                self.dead.extend(self.map.remove(&key));
            }
        }
    }

    fn drop_cancelled_top(&mut self) {
        self.remove_cancelled();
        while let Some(entry) = self.map.first_entry() {
            if !entry.get().handle.is_cancelled() {
                break;
            }
            self.dead.push(entry.remove());
        }
    }

    /// Deadline of the earliest live entry.
    pub fn next_deadline(&mut self) -> Option<u64> {
        self.drop_cancelled_top();
        self.map.first_key_value().map(|(k, _)| k.0)
    }

    /// Removes and returns the earliest live entry if it is due at `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<TimerEntry> {
        self.drop_cancelled_top();
        let entry = self.map.first_entry()?;
        if entry.key().0 <= now {
            Some(entry.remove())
        } else {
            None
        }
    }

    /// Number of entries, cancelled ones not removed yet included.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Cancels every entry and moves it to the dead list (loop shutdown).
    pub fn cancel_all(&mut self) {
        for (_, e) in std::mem::take(&mut self.map) {
            e.handle.cancel_flag();
            self.dead.push(e);
        }
        self.cancels.clear();
    }

    /// The entries discarded since the last call, to be dropped by the caller.
    pub fn take_dead(&mut self) -> Vec<TimerEntry> {
        std::mem::take(&mut self.dead)
    }
}
