//! The one process-wide registry of the JS boundary: what a JS thread must find of another thread's
//! loops, channels and TLS contexts, by id. Per-thread state lives in
//! [`crate::thread_context`] (and crates/node's).
//!
//! Ground rules (each table is behind its own mutex; no lock is held across a call out):
//! - `loops`: the handle of every attached loop that has a channel hub. The hub registers it
//!   when it is made and unregisters it when its loop closes (both on the loop's thread).
//!   Acceptors on other threads hand sockets to a loop through it.
//! - `channels`: the loop id of every channel a hub holds (what `writeToChannel` needs to
//!   reach the channel from any thread: a task of that loop finds it in the loop's hub). The
//!   hub registers when it adopts a channel, unregisters when the channel leaves it or the
//!   loop closes. Ids only: a `ChannelHandle` per channel would make its close future up front.
//! - `tls_contexts`: every `NativeSslContext` made in the process, through
//!   [`crate::tls_contexts`]. Its constructor registers (any JS thread); the owning JS object
//!   unregisters when it is collected. Channels hold their own reference, so a connection
//!   outlives its context's entry.
//!
//! Every value is `Send + Sync` (checked below at compile time): only handles cross threads,
//! never a JS value or a loop-thread object.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use netloop_eventloop::EventLoop;
use netloop_tls::SslContext;

/// The process-wide tables (see the module's ground rules).
#[derive(Default)]
pub struct Registry {
    /// Attached loops with a channel hub, by loop id.
    pub loops: Mutex<HashMap<u64, EventLoop>>,
    /// The loop id of every channel a hub holds.
    pub channels: Mutex<HashMap<u64, u64>>,
    /// Every TLS context whose JS object is alive, by id.
    pub tls_contexts: Mutex<HashMap<u64, SslContext>>,
}

const _: fn() = || {
    fn assert<T: Send + Sync>() {}
    assert::<Registry>();
    assert::<EventLoop>();
    assert::<SslContext>();
};

/// The registry of this process.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

/// A table, locked; a poisoned lock is taken over (the tables hold plain handles, a panic
/// while one was held cannot leave them half-updated).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The TLS context with this id, wherever in the process it was made.
pub fn tls_context(id: u64) -> Option<SslContext> {
    lock(&registry().tls_contexts).get(&id).cloned()
}
