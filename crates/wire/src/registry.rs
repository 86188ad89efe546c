//! The binding's one process-wide registry: what a JS thread must find of another thread's
//! loops, channels and TLS contexts, by id. Per-thread state lives in
//! [`crate::thread_context`].
//!
//! Ground rules (each table is behind its own mutex; no lock is held across a call out):
//! - `loops`: the handle of every attached loop that has a channel hub. The hub registers it
//!   when it is made and unregisters it when its loop closes (both on the loop's thread).
//!   Acceptors on other threads hand sockets to a loop through it.
//! - `channels`: the loop id of every channel a hub holds (what `writeToChannel` needs to
//!   reach the channel from any thread: a task of that loop finds it in the loop's hub). The
//!   hub registers when it adopts a channel, unregisters when the channel leaves it or the
//!   loop closes. Ids only: a `ChannelHandle` per channel would make its close future up front.
//! - `tls_contexts`: every `NativeSslContext` made in the process. Its constructor registers
//!   (any JS thread); the owning JS object unregisters when it is collected. Channels hold
//!   their own reference, so a connection outlives its context's entry.
//!
//! Every value is `Send + Sync` (checked below at compile time): only handles cross threads,
//! never a JS value or a loop-thread object.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use netloop_eventloop::EventLoop;
use netloop_tls::SslContext;

/// The process-wide tables (see the module's ground rules).
#[derive(Default)]
pub(crate) struct Registry {
    pub loops: Mutex<HashMap<u64, EventLoop>>,
    pub channels: Mutex<HashMap<u64, u64>>,
    pub tls_contexts: Mutex<HashMap<u64, SslContext>>,
}

const _: fn() = || {
    fn assert<T: Send + Sync>() {}
    assert::<Registry>();
    assert::<EventLoop>();
    assert::<SslContext>();
};

/// The registry of this process.
pub(crate) fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

/// A table, locked; a poisoned lock is taken over (the tables hold plain handles, a panic
/// while one was held cannot leave them half-updated).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How many entries the binding's registries hold: the process-wide tables and the calling
/// thread's context (diagnostics; the test that no entry outlives its loop).
#[napi_derive::napi(object)]
pub struct RegistrySizes {
    /// Process-wide: attached loops with a channel hub.
    pub loops: u32,
    /// Process-wide: channels writable by id.
    pub channels: u32,
    /// Process-wide: TLS contexts whose JS object is alive.
    pub tls_contexts: u32,
    /// This thread: open loop bridges.
    pub bridges: u32,
    /// This thread: channel hubs by loop.
    pub hubs: u32,
    /// This thread: dropped JS value tokens not yet handed back.
    pub released_tokens: u32,
}

/// The sizes of the binding's registries (see [`RegistrySizes`]).
#[napi_derive::napi]
pub fn registry_sizes() -> RegistrySizes {
    let r = registry();
    let n = |len: usize| u32::try_from(len).unwrap_or(u32::MAX);
    let (bridges, hubs, released) = crate::thread_context::sizes();
    RegistrySizes {
        loops: n(lock(&r.loops).len()),
        channels: n(lock(&r.channels).len()),
        tls_contexts: n(lock(&r.tls_contexts).len()),
        bridges: n(bridges),
        hubs: n(hubs),
        released_tokens: n(released),
    }
}
