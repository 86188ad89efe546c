//! [`LocalLoop`]: the loop-thread side of an event loop and its iteration function.
//!
//! Ground rules:
//! - A `LocalLoop` lives on one thread (it is `!Send`); every field is touched only there.
//! - No borrow of a `RefCell` field is held while user code (a task, a timer, an I/O handler)
//!   runs, so user code may call back into the loop (register, execute, schedule) freely.
//! - One iteration = poll → dispatch ready sources → run tasks within the ioRatio budget
//!   (due timers join the run queue first; the budget is checked every 64 tasks) → tail
//!   tasks → shutdown confirmation. Standalone loops block in the poll; attached loops never do.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::{Rc, Weak};
use std::sync::atomic::{fence, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mio::event::Source;
use mio::{Interest, Poll, Token};

use crate::config::SelectorFault;
use crate::event_loop::{EventLoop, LoopState, Shared, Task};
use crate::io::{IoHandler, IoTable, Readiness};
use crate::selector::{PollOutcome, Selector};
use crate::thread;
use crate::timer::{Period, TimerEntry, TimerHeap, TimerTask};

pub(crate) enum RunItem {
    Send(Task),
    Local(Box<dyn FnOnce()>),
    Timer(TimerEntry),
}

/// Tasks between two checks of the time budget (Netty's value).
const BUDGET_CHECK_INTERVAL: u32 = 64;
/// Most batched timers handed to one `TimerSink::fire` call.
pub const MAX_TIMER_BATCH: usize = 64;
/// Longest sleep while shutting down, so the quiet period is re-checked.
const SHUTDOWN_POLL: Duration = Duration::from_millis(100);
/// Longest sleep of a blocking loop on a manual clock, which no timeout can follow.
const MANUAL_CLOCK_POLL: Duration = Duration::from_millis(1);

/// The loop-thread side of an event loop.
pub struct LocalLoop {
    pub(crate) shared: Arc<Shared>,
    pub(crate) me: Weak<LocalLoop>,
    pub(crate) selector: RefCell<Selector>,
    pub(crate) ready: RefCell<Vec<(Token, Readiness)>>,
    pub(crate) io: RefCell<IoTable>,
    pub(crate) timers: RefCell<TimerHeap>,
    pub(crate) run_queue: RefCell<VecDeque<RunItem>>,
    pub(crate) tail: RefCell<Vec<Box<dyn FnOnce()>>>,
    pub(crate) in_iteration: Cell<bool>,
    pub(crate) graceful_start: Cell<Option<u64>>,
    pub(crate) last_execution: Cell<u64>,
    pub(crate) closed_sources: Cell<bool>,
}

/// What one iteration did, for the driver of an attached loop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Iteration {
    /// The selector was rebuilt: the raw fd changed.
    pub selector_rebuilt: bool,
    /// The loop terminated during this iteration.
    pub terminated: bool,
}

impl LocalLoop {
    pub(crate) fn new(shared: Arc<Shared>, poll: Poll) -> Rc<LocalLoop> {
        let capacity = shared.config.events_capacity;
        let cancelled = shared.cancelled_timers.clone();
        Rc::new_cyclic(|me| LocalLoop {
            shared,
            me: me.clone(),
            selector: RefCell::new(Selector::new(poll, capacity)),
            ready: RefCell::new(Vec::with_capacity(capacity)),
            io: RefCell::new(IoTable::default()),
            timers: RefCell::new(TimerHeap::new(cancelled)),
            run_queue: RefCell::new(VecDeque::new()),
            tail: RefCell::new(Vec::new()),
            in_iteration: Cell::new(false),
            graceful_start: Cell::new(None),
            last_execution: Cell::new(0),
            closed_sources: Cell::new(false),
        })
    }

    /// The loop whose iteration is running on this thread.
    pub fn current() -> Option<Rc<LocalLoop>> {
        thread::current()
    }

    pub fn id(&self) -> u64 {
        self.shared.id
    }

    pub fn handle(&self) -> EventLoop {
        EventLoop {
            shared: self.shared.clone(),
        }
    }

    /// Loop time (the configured ticker; fake in tests).
    pub fn now(&self) -> Duration {
        self.shared.config.ticker.now()
    }

    pub fn is_in_iteration(&self) -> bool {
        self.in_iteration.get()
    }

    /// Registers `source` for `interest`; readiness is delivered to `handler`.
    pub fn register(
        &self,
        source: &mut dyn Source,
        interest: Interest,
        handler: Rc<dyn IoHandler>,
    ) -> io::Result<Token> {
        let token = self.io.borrow_mut().insert(handler);
        let res = source.register(self.selector.borrow().poll.registry(), token, interest);
        if let Err(e) = res {
            self.io.borrow_mut().remove(token);
            return Err(e);
        }
        Ok(token)
    }

    pub fn reregister(
        &self,
        source: &mut dyn Source,
        token: Token,
        interest: Interest,
    ) -> io::Result<()> {
        source.reregister(self.selector.borrow().poll.registry(), token, interest)
    }

    /// Removes `source`; events already fetched for its token are not delivered.
    pub fn deregister(&self, source: &mut dyn Source, token: Token) -> io::Result<()> {
        self.io.borrow_mut().remove(token);
        source.deregister(self.selector.borrow().poll.registry())
    }

    /// Timers in the heap (cancelled ones not yet dropped included).
    pub fn timer_count(&self) -> usize {
        self.timers.borrow().len()
    }

    /// Sources registered on this loop.
    pub fn registered_count(&self) -> usize {
        self.io.borrow().len()
    }

    /// Runs `task` (which need not be `Send`) in this loop's task batch, FIFO with `execute`.
    pub fn execute_local(&self, task: impl FnOnce() + 'static) {
        self.run_queue
            .borrow_mut()
            .push_back(RunItem::Local(Box::new(task)));
        self.request_iteration();
    }

    pub(crate) fn push_task(&self, task: Task) {
        self.run_queue.borrow_mut().push_back(RunItem::Send(task));
        self.request_iteration();
    }

    /// Runs `task` after every task batch from now on until it has run once (Netty's
    /// `executeAfterEventLoopIteration`).
    pub fn execute_after_batch(&self, task: impl FnOnce() + 'static) {
        self.tail.borrow_mut().push(Box::new(task));
        self.request_iteration();
    }

    /// Outside an iteration (an attached loop's owner thread, between libuv callbacks), new
    /// work must make the loop run again: wake it once. Inside an iteration: nothing to do.
    pub fn request_iteration(&self) {
        if !self.in_iteration.get() {
            self.shared.wake_if_sleeping();
        }
    }

    pub(crate) fn has_local_work(&self) -> bool {
        !self.run_queue.borrow().is_empty() || !self.tail.borrow().is_empty()
    }

    /// Time until this loop must iterate again if nothing wakes it; `None`: only a wake.
    pub fn next_timeout(&self) -> Option<Duration> {
        if self.has_local_work() {
            return Some(Duration::ZERO);
        }
        let now = self.shared.now_nanos();
        let mut t = self
            .timers
            .borrow_mut()
            .next_deadline()
            .map(|d| Duration::from_nanos(d.saturating_sub(now)));
        if self.shared.state() >= LoopState::ShuttingDown {
            t = Some(t.map_or(SHUTDOWN_POLL, |t| t.min(SHUTDOWN_POLL)));
        }
        t
    }

    fn block_timeout(&self) -> Option<Duration> {
        if self.has_local_work() {
            return Some(Duration::ZERO);
        }
        let s = &self.shared;
        s.sleeping.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !s.queue.is_empty() {
            s.sleeping.store(false, Ordering::SeqCst);
            return Some(Duration::ZERO);
        }
        let t = self.next_timeout();
        if s.config.ticker.is_manual() {
            return Some(t.map_or(MANUAL_CLOCK_POLL, |t| t.min(MANUAL_CLOCK_POLL)));
        }
        t
    }

    /// One iteration. `blocking`: standalone (sleep in the poll). `io_wake`: an attached loop
    /// was called because its fd became readable, so an empty poll is premature.
    pub(crate) fn iterate(&self, blocking: bool, io_wake: bool) -> Iteration {
        let Some(me) = self.me.upgrade() else {
            return Iteration::default();
        };
        let _current = thread::enter(me);
        self.in_iteration.set(true);
        let s = self.shared.clone();
        let mut out = Iteration::default();

        let timeout = if blocking {
            self.block_timeout()
        } else {
            Some(Duration::ZERO)
        };
        let fault = s
            .config
            .fault_injector
            .as_ref()
            .map_or(SelectorFault::None, |f| f());
        let mut ready = std::mem::take(&mut *self.ready.borrow_mut());
        let outcome = self
            .selector
            .borrow_mut()
            .select(timeout, fault, &mut ready);
        s.sleeping.store(false, Ordering::SeqCst);

        let io_start = s.now_nanos();
        let had_io = !ready.is_empty();
        match outcome {
            PollOutcome::Ready => self.selector.borrow_mut().reset_premature(),
            PollOutcome::TimedOut if !io_wake || blocking => {
                self.selector.borrow_mut().reset_premature()
            }
            PollOutcome::TimedOut | PollOutcome::PrematureEmpty => {
                let threshold = s.config.selector_rebuild_threshold;
                if self.selector.borrow_mut().count_premature(threshold) {
                    out.selector_rebuilt = self.rebuild_selector();
                }
            }
            PollOutcome::Failed(e) if e.kind() == io::ErrorKind::Interrupted => {}
            PollOutcome::Failed(e) => {
                eprintln!(
                    "netloop: poll failed on loop {}: {e}; rebuilding the selector",
                    s.config.name
                );
                out.selector_rebuilt = self.rebuild_selector();
            }
        }
        for (token, readiness) in ready.drain(..) {
            let handler = self.io.borrow().get(token);
            if let Some(h) = handler {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| h.ready(readiness))) {
                    s.report_panic(&panic_message(&p));
                }
            }
        }
        *self.ready.borrow_mut() = ready;

        let ratio = s.config.io_ratio as u64;
        let budget = if ratio == 100 {
            None
        } else if had_io {
            let io_time = s.now_nanos().saturating_sub(io_start);
            Some(io_time.saturating_mul(100 - ratio) / ratio)
        } else {
            Some(0)
        };
        self.run_all_tasks(budget);

        if s.state() >= LoopState::ShuttingDown {
            self.close_sources_once();
            if self.confirm_shutdown() {
                self.terminate();
                out.terminated = true;
            }
        }
        if !blocking && !out.terminated {
            self.prepare_attached_sleep();
        }
        self.in_iteration.set(false);
        out
    }

    /// An attached loop hands control back to libuv: keep the fd readable if work remains,
    /// else mark the loop asleep so the next producer wakes it.
    fn prepare_attached_sleep(&self) {
        let s = &self.shared;
        if self.has_local_work() {
            s.wake();
            return;
        }
        s.sleeping.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !s.queue.is_empty() && s.sleeping.swap(false, Ordering::SeqCst) {
            s.wake();
        }
    }

    fn rebuild_selector(&self) -> bool {
        let io = self.io.borrow();
        match self.selector.borrow_mut().rebuild(&self.shared, &io) {
            Ok(()) => {
                self.shared
                    .selector_rebuilds
                    .fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(e) => {
                eprintln!("netloop: rebuilding the selector failed: {e}");
                false
            }
        }
    }

    /// Closes selectors replaced by rebuilds.
    pub fn release_retired_selectors(&self) {
        self.selector.borrow_mut().release_retired();
    }

    #[cfg(unix)]
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.selector.borrow().poll.as_raw_fd()
    }

    /// Runs queued tasks and due timers; `budget` in nanoseconds bounds the batch (checked
    /// every 64 tasks). Returns whether any task ran. Tail tasks run after the batch.
    ///
    /// The batch takes the cross-thread tasks present when it starts; tasks that arrive from
    /// other threads meanwhile wait for the next batch, so busy producers cannot starve I/O.
    pub(crate) fn run_all_tasks(&self, budget: Option<u64>) -> bool {
        let s = &self.shared;
        let start = s.now_nanos();
        {
            let mut rq = self.run_queue.borrow_mut();
            // Only what is there now: busy producers must not keep the batch from starting.
            for _ in 0..s.pending.load(Ordering::SeqCst) {
                let Some(t) = s.queue.pop() else { break };
                s.pending.fetch_sub(1, Ordering::SeqCst);
                rq.push_back(RunItem::Send(t));
            }
            let mut timers = self.timers.borrow_mut();
            while let Some(e) = timers.pop_due(start) {
                rq.push_back(RunItem::Timer(e));
            }
        }
        let deadline = budget.map(|b| start.saturating_add(b));
        let mut ran: u32 = 0;
        let mut next_check = BUDGET_CHECK_INTERVAL;
        loop {
            let Some(item) = self.run_queue.borrow_mut().pop_front() else {
                break;
            };
            ran = ran.saturating_add(match item {
                RunItem::Timer(e) if matches!(e.task, TimerTask::Batched { .. }) => {
                    self.run_timer_batch(e)
                }
                other => {
                    self.run_item(other);
                    1
                }
            });
            if ran >= next_check {
                next_check = ran.saturating_add(BUDGET_CHECK_INTERVAL);
                if deadline.is_some_and(|d| s.now_nanos() >= d) {
                    break;
                }
            }
        }
        if ran > 0 {
            self.last_execution.set(s.now_nanos());
        }
        let tail = std::mem::take(&mut *self.tail.borrow_mut());
        for t in tail {
            self.guarded(t);
        }
        ran > 0
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

    fn run_item(&self, item: RunItem) {
        match item {
            RunItem::Send(t) => {
                self.guarded(t);
            }
            RunItem::Local(t) => {
                self.guarded(t);
            }
            RunItem::Timer(mut e) => {
                if e.handle.is_cancelled() {
                    return;
                }
                let ok = match &mut e.task {
                    TimerTask::Closure(f) => self.guarded(f),
                    TimerTask::Batched { sink, value } => self.guarded(|| sink.fire(&[*value])),
                };
                self.after_timer_run(e, ok);
            }
        }
    }

    /// Fires `first` and the timers of the same sink right behind it in the run queue with
    /// one `fire` call; returns how many timers it took from the queue.
    fn run_timer_batch(&self, first: TimerEntry) -> u32 {
        let TimerTask::Batched { sink, .. } = &first.task else {
            return 0;
        };
        let sink = sink.clone();
        let mut entries = vec![first];
        {
            let mut rq = self.run_queue.borrow_mut();
            while entries.len() < MAX_TIMER_BATCH {
                match rq.front() {
                    Some(RunItem::Timer(e)) if e.task.same_sink(&sink) => {}
                    _ => break,
                }
                if let Some(RunItem::Timer(e)) = rq.pop_front() {
                    entries.push(e);
                }
            }
        }
        let taken = entries.len() as u32;
        entries.retain(|e| !e.handle.is_cancelled());
        let values: Vec<u64> = entries
            .iter()
            .map(|e| match e.task {
                TimerTask::Batched { value, .. } => value,
                TimerTask::Closure(_) => 0,
            })
            .collect();
        let ok = values.is_empty() || self.guarded(|| sink.fire(&values));
        for e in entries {
            self.after_timer_run(e, ok);
        }
        taken
    }

    /// A timer ran: a one-shot is finished, a periodic one goes back into the heap.
    fn after_timer_run(&self, e: TimerEntry, ok: bool) {
        match e.period {
            Period::Once => e.handle.mark_finished(),
            _ if !ok || e.handle.is_cancelled() => {
                e.handle.cancel();
            }
            Period::FixedRate(p) => {
                let next = e.deadline.saturating_add(p);
                self.timers.borrow_mut().reinsert(e, next);
            }
            Period::FixedDelay(p) => {
                let next = self.shared.now_nanos().saturating_add(p);
                self.timers.borrow_mut().reinsert(e, next);
            }
        }
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

/// The body of a standalone loop's thread.
pub(crate) fn run_standalone(shared: Arc<Shared>, poll: Poll) {
    shared.owner.store(thread::thread_token(), Ordering::SeqCst);
    let local = LocalLoop::new(shared.clone(), poll);
    thread::register_local(local.clone());
    while !local.iterate(true, false).terminated {}
}
