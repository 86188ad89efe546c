//! [`Scheduler`]: the task side of one loop — the run queue, the timer heap, the tail tasks
//! and the graceful-shutdown clock.
//!
//! Ground rules (kept by construction, the fields are private to this module):
//! - Loop thread only (`!Send`, owned by the loop's `LocalLoop`).
//! - The scheduler never runs user code and never lends a borrow out: every method takes its
//!   `RefCell` borrow, finishes, and hands back *owned* work ([`Work`]) that the caller runs
//!   after the borrow ended. Entries it discards (cancelled timers) are dropped after the
//!   borrow too, because dropping a closure runs its captures' `Drop`.
//! - One door for timers: [`Scheduler::add_timer`] and the re-insertion of a periodic timer
//!   after it ran both go through `add_entry`, which cancels the timer instead once a graceful
//!   shutdown has started.
//! - A batch is bounded: [`Scheduler::start_batch`] counts the work present when the batch
//!   starts (cross-thread tasks taken from the MPSC queue, due timers, local tasks); work that
//!   the batch itself adds waits for the next batch.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::event_loop::Shared;
use crate::timer::{Period, ScheduledHandle, TimerCancels, TimerEntry, TimerHeap, TimerTask};

/// A task that runs on the loop thread.
type LocalTask = Box<dyn FnOnce()>;

enum RunItem {
    Task(Box<dyn FnOnce()>),
    Timer(TimerEntry),
}

/// One unit of work taken out of the scheduler, run by the caller with no borrow held.
pub(crate) enum Work {
    /// A task (cross-thread or local).
    Task(Box<dyn FnOnce()>),
    /// A due timer.
    Timer(TimerEntry),
}

/// The bound of one batch: how many run-queue items it may still take.
pub(crate) struct Batch {
    left: usize,
}

pub(crate) struct Scheduler {
    cancels: Arc<TimerCancels>,
    timers: RefCell<TimerHeap>,
    run_queue: RefCell<VecDeque<RunItem>>,
    tail: RefCell<Vec<(u64, LocalTask)>>,
    next_tail: Cell<u64>,
    graceful_start: Cell<Option<u64>>,
    last_execution: Cell<u64>,
}

impl Scheduler {
    pub fn new(cancels: Arc<TimerCancels>) -> Self {
        Scheduler {
            timers: RefCell::new(TimerHeap::new(cancels.clone())),
            cancels,
            run_queue: RefCell::new(VecDeque::new()),
            tail: RefCell::new(Vec::new()),
            next_tail: Cell::new(0),
            graceful_start: Cell::new(None),
            last_execution: Cell::new(0),
        }
    }

    /// A fresh handle counted in this loop's cancelled-timer statistics.
    pub fn new_handle(&self) -> ScheduledHandle {
        ScheduledHandle::new(self.cancels.clone())
    }

    /// Takes cancelled timers out of the heap now, unless the heap is borrowed (then the
    /// next look at the heap does it).
    pub fn remove_cancelled_timers(&self) {
        let dead = match self.timers.try_borrow_mut() {
            Ok(mut heap) => {
                heap.remove_cancelled();
                heap.take_dead()
            }
            Err(_) => return,
        };
        drop(dead);
    }

    /// Runs `f` on the heap and drops what it discarded after the borrow ended.
    fn with_timers<R>(&self, f: impl FnOnce(&mut TimerHeap) -> R) -> R {
        let (r, dead) = {
            let mut heap = self.timers.borrow_mut();
            let r = f(&mut heap);
            (r, heap.take_dead())
        };
        drop(dead);
        r
    }

    /// Queues a task behind every task already queued.
    pub fn push_task(&self, task: Box<dyn FnOnce()>) {
        self.run_queue.borrow_mut().push_back(RunItem::Task(task));
    }

    /// Queues a tail task (runs after the next batch); returns its key.
    pub fn push_tail(&self, task: Box<dyn FnOnce()>) -> u64 {
        let key = self.next_tail.get();
        self.next_tail.set(key + 1);
        self.tail.borrow_mut().push((key, task));
        key
    }

    /// Takes the tail task `key` out if still queued (the caller drops it, no borrow held).
    pub fn remove_tail(&self, key: u64) -> Option<Box<dyn FnOnce()>> {
        let mut tail = self.tail.borrow_mut();
        let i = tail.iter().position(|(k, _)| *k == key)?;
        Some(tail.remove(i).1)
    }

    /// The one door into the timer heap. `false`: the timer was cancelled instead (a graceful
    /// shutdown has started) and dropped.
    pub fn add_timer(
        &self,
        deadline: u64,
        period: Period,
        handle: ScheduledHandle,
        task: TimerTask,
    ) -> bool {
        self.add_entry(TimerEntry {
            deadline,
            seq: 0,
            period,
            handle,
            task,
        })
    }

    fn add_entry(&self, entry: TimerEntry) -> bool {
        if self.graceful_start.get().is_some() {
            entry.handle.cancel_flag();
            drop(entry);
            return false;
        }
        self.with_timers(|h| h.insert(entry));
        true
    }

    /// Starts a batch at loop time `now`: takes the cross-thread tasks present now, then the
    /// timers due at `now`, behind the local tasks already queued. The batch is bounded by
    /// that count.
    pub fn start_batch(&self, shared: &Shared, now: u64) -> Batch {
        let mut moved: Vec<RunItem> = Vec::new();
        // Only what is there now: busy producers must not keep the batch from starting.
        for _ in 0..shared.pending.load(Ordering::SeqCst) {
            let Some(t) = shared.queue.pop() else { break };
            shared.pending.fetch_sub(1, Ordering::SeqCst);
            moved.push(RunItem::Task(t));
        }
        self.with_timers(|h| {
            while let Some(e) = h.pop_due(now) {
                moved.push(RunItem::Timer(e));
            }
        });
        let mut rq = self.run_queue.borrow_mut();
        rq.extend(moved);
        Batch { left: rq.len() }
    }

    /// The next piece of work of `batch`, or `None` when the batch's bound is reached.
    pub fn next(&self, batch: &mut Batch) -> Option<Work> {
        if batch.left == 0 {
            return None;
        }
        let mut rq = self.run_queue.borrow_mut();
        let item = rq.pop_front()?;
        batch.left -= 1;
        match item {
            RunItem::Task(t) => Some(Work::Task(t)),
            RunItem::Timer(e) => Some(Work::Timer(e)),
        }
    }

    /// A timer ran (`ok`: without panicking) at loop time `now`: a one-shot is finished, a
    /// periodic one goes back through the door.
    pub fn timer_ran(&self, mut e: TimerEntry, ok: bool, now: u64) {
        match e.period {
            Period::Once => e.handle.mark_finished(),
            _ if !ok || e.handle.is_cancelled() => {
                e.handle.cancel_flag();
            }
            Period::FixedRate(p) => {
                e.deadline = e.deadline.saturating_add(p);
                self.add_entry(e);
            }
            Period::FixedDelay(p) => {
                e.deadline = now.saturating_add(p);
                self.add_entry(e);
            }
        }
    }

    /// The tail tasks queued so far, to run after a batch.
    pub fn take_tail(&self) -> Vec<Box<dyn FnOnce()>> {
        let tail = std::mem::take(&mut *self.tail.borrow_mut());
        tail.into_iter().map(|(_, t)| t).collect()
    }

    /// Tasks or tail tasks are queued.
    pub fn has_work(&self) -> bool {
        !self.run_queue.borrow().is_empty() || !self.tail.borrow().is_empty()
    }

    /// Deadline of the earliest live timer.
    pub fn next_deadline(&self) -> Option<u64> {
        self.with_timers(|h| h.next_deadline())
    }

    /// Timers in the heap (cancelled ones not yet dropped included).
    pub fn timer_count(&self) -> usize {
        self.timers.borrow().len()
    }

    /// The graceful shutdown starts at `now` (first call only; `false` afterwards): every
    /// timer is cancelled, those in the heap and those already queued in the run queue, and
    /// from now on the door cancels every timer that comes.
    pub fn begin_graceful(&self, now: u64) -> bool {
        if self.graceful_start.get().is_some() {
            return false;
        }
        self.graceful_start.set(Some(now));
        self.last_execution.set(now);
        self.cancel_timers();
        true
    }

    /// Cancels every timer (heap and run queue); cancelled queued timers are skipped when
    /// their turn comes.
    pub fn cancel_timers(&self) {
        self.with_timers(|h| h.cancel_all());
        for item in self.run_queue.borrow().iter() {
            if let RunItem::Timer(e) = item {
                e.handle.cancel_flag();
            }
        }
    }

    /// Loop time at which the graceful shutdown started.
    pub fn graceful_start(&self) -> Option<u64> {
        self.graceful_start.get()
    }

    /// Loop time at which a batch last ran a task.
    pub fn last_execution(&self) -> u64 {
        self.last_execution.get()
    }

    pub fn set_last_execution(&self, t: u64) {
        self.last_execution.set(t);
    }
}
