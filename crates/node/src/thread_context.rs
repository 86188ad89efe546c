//! The binding's per-JS-thread state, in one place. Everything here is `!Send` (it holds `Rc`s
//! of loop-thread objects) and is only touched on the JS thread that owns it; what must be
//! reachable from other threads lives in [`crate::registry`] instead.
//!
//! Ground rules, field by field (who registers, who unregisters; always on this thread):
//! - `bridges`: weak refs to the loops' libuv bridges. `Bridge::new` registers; dead entries
//!   are pruned at the next registration and `live_bridges` counts only live, open ones. The
//!   env cleanup hook (installed once per thread, `hooked`) closes what is still open.
//! - `tearing_down`: set by that hook when the env is torn down: no JS is called after it.
//! - `hubs`: the channel hub of each loop of this thread, by loop id, so a task that reaches a
//!   loop (an accepted socket handed over from another thread) finds its hub. `Hub::new`
//!   registers; the hub unregisters when its loop closes (`IterationHook::loop_closed`) and
//!   again, idempotently, when it drops.
//! - `released`: tokens of JS values that native code dropped, tagged with their hub's id.
//!   `JsValue`'s drop registers; the hub's next delivery drains its own.
//! - `read_pool`: the JS Buffer small deliveries are copied into (`channel::read_pool`). A
//!   delivery makes it, or a new one when it is full (dropping the old reference); it is
//!   released with the thread.
//! - `lent`: the reads each hub lent JS during the delivery it runs now, tagged with the hub's
//!   id (`channel::big`). The hub lends at each call into JS and forgets its own when the
//!   delivery ends; a write applied by any hub of the thread meanwhile finds them.
//!
//! After the thread's TLS destructors ran (thread exit) every accessor reports "nothing".

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Weak;

use crate::bridge::Bridge;
use crate::channel::Hub;

/// The state of one JS thread (see the module's ground rules).
#[derive(Default)]
pub(crate) struct ThreadContext {
    pub bridges: RefCell<Vec<Weak<Bridge>>>,
    pub tearing_down: Cell<bool>,
    pub hooked: Cell<bool>,
    pub hubs: RefCell<HashMap<u64, Weak<Hub>>>,
    pub released: RefCell<Vec<(u32, f64)>>,
    pub read_pool: RefCell<Option<crate::channel::read_pool::Pool>>,
    pub lent: RefCell<crate::channel::big::Lent>,
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
        (bridges, c.hubs.borrow().len(), c.released.borrow().len())
    })
    .unwrap_or_default()
}
