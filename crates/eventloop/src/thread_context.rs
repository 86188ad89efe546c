//! The event-loop crate's per-thread state, in one place: a cheap thread identity, the loops
//! living on this thread, the loop whose iteration runs now, and the queue that trampolines
//! promise notifications. Nothing here is shared between threads; what other threads touch
//! lives in a loop's `Shared` (shared.rs) instead.
//!
//! Ground rules, field by field (always on the owning thread):
//! - `token`: a non-zero number unique to the thread, drawn on first use ([`thread_token`]);
//!   a loop stores its thread's token as its owner, and `in_event_loop` compares with it.
//! - `locals`: the loops living on this thread, by id, held strongly (so `find_local` is a map
//!   look-up, not a scan: `ScheduledHandle::cancel` calls it on every cancel). A loop registers
//!   when it is made on (or moves to) its thread ([`register_local`]) and unregisters when it
//!   terminates ([`unregister_local`]).
//! - `current`: the loops whose iteration runs on this thread right now, innermost last.
//!   [`enter`] pushes for the length of an iteration; its guard pops.
//! - `notifying`, `pending`: promise notification (promise.rs). A listener that completes
//!   another promise queues that promise's notification in `pending` instead of recursing;
//!   the outermost notification (`notifying` set) runs the queue until it is empty.
//!
//! No borrow of a field is held while user code runs (a loop, a task, a listener): each
//! accessor borrows for one look-up or one insertion, and what it removes drops after the
//! borrow.
//!
//! Teardown: the context itself has no destructor (what it owns sits in `ManuallyDrop`), so
//! it stays readable during every thread-local teardown, in whatever order the thread's
//! destructors run; `with` never fails. What it owns is dropped by [`Teardown`], a guard armed
//! when a field first allocates: at thread exit it drops the loops in id order (the order
//! they were made in), then what the other fields still hold. From then on `register_local`
//! keeps no loop (it drops with its last handle) and the other fields hold nothing past the
//! call that fills them.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::mem::ManuallyDrop;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::local::LocalLoop;

/// A promise notification waiting for the running one (promise.rs).
pub(crate) type Notification = Box<dyn FnOnce()>;

/// The state of one thread (see the module's ground rules).
pub(crate) struct ThreadContext {
    token: Cell<usize>,
    locals: RefCell<ManuallyDrop<BTreeMap<u64, Rc<LocalLoop>>>>,
    current: RefCell<ManuallyDrop<Vec<Rc<LocalLoop>>>>,
    pub notifying: Cell<bool>,
    pending: RefCell<ManuallyDrop<VecDeque<Notification>>>,
    /// The thread is exiting and [`Teardown`] ran: nothing new is kept.
    torn_down: Cell<bool>,
}

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    static CONTEXT: ThreadContext = const {
        ThreadContext {
            token: Cell::new(0),
            locals: RefCell::new(ManuallyDrop::new(BTreeMap::new())),
            current: RefCell::new(ManuallyDrop::new(Vec::new())),
            notifying: Cell::new(false),
            pending: RefCell::new(ManuallyDrop::new(VecDeque::new())),
            torn_down: Cell::new(false),
        }
    };
    static TEARDOWN: Teardown = const { Teardown };
}

/// Runs `f` with this thread's context (available until the thread is gone, teardown included).
pub(crate) fn with<R>(f: impl FnOnce(&ThreadContext) -> R) -> R {
    CONTEXT.with(f)
}

/// Drops what the context owns when the thread exits (see the module's ground rules).
struct Teardown;

impl Teardown {
    /// Makes sure the guard runs at thread exit (the first call registers its destructor).
    fn arm() {
        // A guard that already ran cannot be armed again: the context keeps nothing then.
        let _ = TEARDOWN.try_with(|_| ());
    }
}

impl Drop for Teardown {
    fn drop(&mut self) {
        CONTEXT.with(|c| {
            c.torn_down.set(true);
            // One loop at a time, in id order, no borrow held while it drops (its drop may
            // unregister it, or look other loops up).
            loop {
                let next = c.locals.borrow_mut().pop_first();
                let Some((_, local)) = next else { break };
                drop(local);
            }
            let current = std::mem::take(&mut **c.current.borrow_mut());
            drop(current);
            let pending = std::mem::take(&mut **c.pending.borrow_mut());
            drop(pending);
            let locals = std::mem::take(&mut **c.locals.borrow_mut());
            drop(locals);
        });
    }
}

/// A non-zero number unique to the calling thread.
pub(crate) fn thread_token() -> usize {
    with(|c| {
        if c.token.get() == 0 {
            c.token.set(NEXT_THREAD.fetch_add(1, Ordering::Relaxed));
        }
        c.token.get()
    })
}

pub(crate) fn register_local(l: Rc<LocalLoop>) {
    let refused = with(|c| {
        if c.torn_down.get() {
            return Some(l);
        }
        Teardown::arm();
        c.locals.borrow_mut().insert(l.id(), l)
    });
    drop(refused); // a loop it replaced (same id), or the one not kept: after the borrow
}

pub(crate) fn unregister_local(id: u64) {
    let removed = with(|c| c.locals.borrow_mut().remove(&id));
    drop(removed);
}

pub(crate) fn find_local(id: u64) -> Option<Rc<LocalLoop>> {
    with(|c| c.locals.borrow().get(&id).cloned())
}

/// Marks `l` as the loop running on this thread until the guard drops.
pub(crate) struct CurrentGuard;

pub(crate) fn enter(l: Rc<LocalLoop>) -> CurrentGuard {
    with(|c| {
        let mut current = c.current.borrow_mut();
        if current.capacity() == 0 {
            Teardown::arm();
        }
        current.push(l);
    });
    CurrentGuard
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        let (left, freed) = with(|c| {
            let mut current = c.current.borrow_mut();
            let left = current.pop();
            // After the teardown nothing drops the stack's memory later: free it when empty.
            let freed =
                (c.torn_down.get() && current.is_empty()).then(|| std::mem::take(&mut **current));
            (left, freed)
        });
        drop((left, freed));
    }
}

pub(crate) fn current() -> Option<Rc<LocalLoop>> {
    with(|c| c.current.borrow().last().cloned())
}

/// True while this thread runs an iteration of some loop (a task, a timer, an I/O handler).
pub(crate) fn in_any_iteration() -> bool {
    with(|c| !c.current.borrow().is_empty())
}

impl ThreadContext {
    /// Queues a promise notification behind the running ones.
    pub(crate) fn push_notification(&self, job: Notification) {
        let mut pending = self.pending.borrow_mut();
        if pending.capacity() == 0 {
            Teardown::arm();
        }
        pending.push_back(job);
    }

    /// The next queued promise notification, if any.
    pub(crate) fn next_notification(&self) -> Option<Notification> {
        let mut pending = self.pending.borrow_mut();
        let next = pending.pop_front();
        if next.is_none() && self.torn_down.get() {
            // After the teardown nothing drops the queue's memory later: free it now.
            let freed = std::mem::take(&mut **pending);
            drop(pending);
            drop(freed);
        }
        next
    }
}
