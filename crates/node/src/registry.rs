//! The sizes of the boundary's registries, for JS (diagnostics; the test that no entry
//! outlives its loop). The tables are `netloop_wire::registry`'s (process-wide) and the
//! per-thread contexts (`netloop_wire::thread_context`, [`crate::thread_context`]).

use netloop_wire::registry::{lock, registry};

/// How many entries the binding's registries hold: the process-wide tables and the calling
/// thread's context (diagnostics; the test that no entry outlives its loop).
#[napi_derive::napi(object)]
#[derive(Debug)]
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
