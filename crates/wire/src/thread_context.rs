//! The hub's per-JS-thread state, in one place. Everything here is `!Send` (it holds `Rc`s of
//! loop-thread objects) and is only touched on the JS thread that owns it; what must be
//! reachable from other threads lives in [`crate::registry`] instead. The binding's own
//! per-thread state (its libuv bridges, the read pool) is crates/node's `thread_context`.
//!
//! Ground rules, field by field (who registers, who unregisters; always on this thread):
//! - `hubs`: the channel hub of each loop of this thread, by loop id, so a task that reaches a
//!   loop (an accepted socket handed over from another thread) finds its hub. `Hub::new`
//!   registers; the hub unregisters when its loop closes (`Hub::unregister`, called by the
//!   binding's iteration hook) and again, idempotently, when it drops.
//! - `released`: tokens of JS values that native code dropped, tagged with their hub's id.
//!   `JsValue`'s drop registers; the hub's next delivery drains its own.
//! - `lent`: the reads each hub lent JS during the delivery it runs now, tagged with the hub's
//!   id ([`crate::big`]). The hub lends at each call into JS and forgets its own when the
//!   delivery ends; a write applied by any hub of the thread meanwhile finds them.
//!
//! After the thread's TLS destructors ran (thread exit) every accessor reports "nothing".

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Weak;

use crate::hub::Hub;

/// The hub's state of one JS thread (see the module's ground rules).
#[derive(Default)]
pub struct ThreadContext {
    /// The hub of each loop of this thread, by loop id.
    pub hubs: RefCell<HashMap<u64, Weak<Hub>>>,
    /// Dropped JS value tokens, by hub id, not yet handed back.
    pub released: RefCell<Vec<(u32, f64)>>,
    /// The reads lent to JS by the deliveries running now.
    pub lent: RefCell<crate::big::Lent>,
}

thread_local! {
    static CONTEXT: ThreadContext = ThreadContext::default();
}

/// Runs `f` with this thread's context; `None` once the thread is exiting.
pub fn with<R>(f: impl FnOnce(&ThreadContext) -> R) -> Option<R> {
    CONTEXT.try_with(f).ok()
}

/// Entries of this thread's tables (hubs, released tokens), for the test that none outlives
/// its loop.
pub fn sizes() -> (usize, usize) {
    with(|c| (c.hubs.borrow().len(), c.released.borrow().len())).unwrap_or_default()
}
