//! Per-thread bookkeeping: a cheap thread identity, the loops living on this thread (by id,
//! so `find_local` is a map look-up, not a scan: `ScheduledHandle::cancel` calls it on every
//! cancel), and the loop whose iteration is running right now.
//!
//! Ground rules: everything here is thread-local; nothing is shared between threads.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::local::LocalLoop;

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    static THREAD_TOKEN: Cell<usize> = const { Cell::new(0) };
    /// The loops living on this thread, by id (dropped in id order at thread exit, the
    /// order they were made in).
    static LOCALS: RefCell<BTreeMap<u64, Rc<LocalLoop>>> = const { RefCell::new(BTreeMap::new()) };
    static CURRENT: RefCell<Vec<Rc<LocalLoop>>> = const { RefCell::new(Vec::new()) };
}

/// A non-zero number unique to the calling thread.
pub(crate) fn thread_token() -> usize {
    THREAD_TOKEN.with(|t| {
        if t.get() == 0 {
            t.set(NEXT_THREAD.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

pub(crate) fn register_local(l: Rc<LocalLoop>) {
    LOCALS.with(|v| {
        v.borrow_mut().insert(l.id(), l);
    });
}

pub(crate) fn unregister_local(id: u64) {
    // try_with: during thread teardown the list may already be gone.
    let _ = LOCALS.try_with(|v| v.borrow_mut().remove(&id));
}

pub(crate) fn find_local(id: u64) -> Option<Rc<LocalLoop>> {
    LOCALS
        .try_with(|v| v.borrow().get(&id).cloned())
        .ok()
        .flatten()
}

/// Marks `l` as the loop running on this thread until the guard drops.
pub(crate) struct CurrentGuard;

pub(crate) fn enter(l: Rc<LocalLoop>) -> CurrentGuard {
    CURRENT.with(|c| c.borrow_mut().push(l));
    CurrentGuard
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        let _ = CURRENT.try_with(|c| c.borrow_mut().pop());
    }
}

pub(crate) fn current() -> Option<Rc<LocalLoop>> {
    CURRENT
        .try_with(|c| c.borrow().last().cloned())
        .ok()
        .flatten()
}

/// True while this thread runs an iteration of some loop (a task, a timer, an I/O handler).
pub(crate) fn in_any_iteration() -> bool {
    CURRENT
        .try_with(|c| !c.borrow().is_empty())
        .unwrap_or(false)
}
