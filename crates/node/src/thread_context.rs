//! The binding's per-JS-thread state, in one place. Everything here is `!Send` (it holds `Rc`s
//! of loop-thread objects) and is only touched on the JS thread that owns it; what must be
//! reachable from other threads lives in `netloop_wire::registry` instead.
//!
//! Ground rules, field by field (who registers, who unregisters; always on this thread):
//! - `bridges`: weak refs to the loops' libuv bridges. `Bridge::new` registers; dead entries
//!   are pruned at the next registration and `live_bridges` counts only live, open ones. The
//!   env cleanup hook (installed once per thread, `hooked`) closes what is still open.
//! - `tearing_down`: set by that hook when the env is torn down: no JS is called after it.
//! - `read_pool`: the JS Buffer small deliveries are copied into (`channel::read_pool`). A
//!   delivery makes it, or a new one when it is full (dropping the old reference); it is
//!   released with the thread.
//!
//! The hub's per-thread state (the hubs by loop, released tokens, lent reads) is
//! `netloop_wire::thread_context`, with its own ground rules.
//!
//! After the thread's TLS destructors ran (thread exit) every accessor reports "nothing".

use std::cell::{Cell, RefCell};
use std::rc::Weak;

use crate::bridge::Bridge;

/// The state of one JS thread (see the module's ground rules).
#[derive(Default)]
pub(crate) struct ThreadContext {
    pub bridges: RefCell<Vec<Weak<Bridge>>>,
    pub tearing_down: Cell<bool>,
    pub hooked: Cell<bool>,
    pub read_pool: RefCell<Option<crate::channel::read_pool::Pool>>,
}

thread_local! {
    static CONTEXT: ThreadContext = ThreadContext::default();
}

/// Runs `f` with this thread's context; `None` once the thread is exiting.
pub(crate) fn with<R>(f: impl FnOnce(&ThreadContext) -> R) -> Option<R> {
    CONTEXT.try_with(f).ok()
}

/// Entries of this thread's registries, for the test that none outlives its loop.
pub(crate) fn sizes() -> (usize, usize, usize) {
    with(|c| {
        let bridges = c
            .bridges
            .borrow()
            .iter()
            .filter(|w| w.upgrade().is_some_and(|b| !b.is_closed()))
            .count();
        let (hubs, released) = netloop_wire::thread_context::sizes();
        (bridges, hubs, released)
    })
    .unwrap_or_default()
}
