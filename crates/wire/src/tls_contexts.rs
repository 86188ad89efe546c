//! The TLS contexts JS made, in the process-wide table ([`crate::registry`], `tls_contexts`):
//! their ids, who may use one from another thread, and what a reload may change.
//!
//! Ground rules: a context is registered by the JS object that made it (crates/node's
//! `NativeSslContext`, on any JS thread) and unregistered when that object is collected; the
//! table's lock is held for one look-up or change, never across a call out. A context that
//! asks JS (an `SNICallback`, an `ALPNCallback`, a `checkServerIdentity`) stays on the thread
//! that made it: the function belongs to that thread, and a reload keeps which of them the
//! context has, since threads that use a context without one have no function to ask.

use std::sync::atomic::{AtomicU64, Ordering};

use netloop_tls::SslContext;

use crate::error::{WireError, WireResult};
use crate::registry::{lock, registry};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Registers a context made on this thread; its process-wide id.
pub fn register(ctx: SslContext) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    lock(&registry().tls_contexts).insert(id, ctx);
    id
}

/// Removes the context with this id (its JS object was collected).
pub fn unregister(id: u64) {
    lock(&registry().tls_contexts).remove(&id);
}

fn missing(id: impl std::fmt::Display) -> WireError {
    WireError::new(
        "ERR_TLS_INVALID_CONTEXT",
        format!("no TLS context with id {id} (the object that made it was collected)"),
    )
}

/// The context with id `id` (as JS gave it), for a thread other than the one that made it:
/// refused when it is gone or asks JS.
pub fn shared(id: f64) -> WireResult<SslContext> {
    let ctx = crate::registry::tls_context(id as u64).ok_or_else(|| missing(id))?;
    if ctx.asks_server_name() || ctx.asks_protocol() {
        // The callback is a JS function of the thread that made the context.
        let (code, which) = if ctx.asks_server_name() {
            ("ERR_TLS_SNI_CALLBACK_NOT_SHAREABLE", "an SNICallback")
        } else {
            ("ERR_TLS_ALPN_CALLBACK_NOT_SHAREABLE", "an ALPNCallback")
        };
        return Err(WireError::new(
            code,
            format!(
                "an SslContext with {which} cannot be used on another thread: its callback \
                 is a function of the thread that made it (make the context in the worker's \
                 module instead)"
            ),
        ));
    }
    if ctx.checks_server_identity() {
        return Err(WireError::new(
            "ERR_TLS_CHECK_SERVER_IDENTITY_NOT_SHAREABLE",
            "an SslContext with a checkServerIdentity cannot be used on another thread: the \
             function belongs to the thread that made it (make the context in the worker's \
             module instead)",
        ));
    }
    Ok(ctx)
}

/// A reload keeps the context's side: checked before the new options are read.
pub fn check_reload_side(was_server: bool, is_server: bool) -> WireResult<()> {
    if is_server == was_server {
        return Ok(());
    }
    let side = |s: bool| if s { "a server" } else { "a client" };
    Err(WireError::new(
        "ERR_INVALID_ARG_VALUE",
        format!(
            "{} context cannot be reloaded as {} context",
            side(was_server),
            side(is_server)
        ),
    ))
}

/// Replaces the configuration under `id` (node:tls's `server.setSecureContext`): handlers
/// made from now on, on every thread, use `ctx`; established connections keep theirs. On an
/// error nothing changes.
pub fn reload(id: u64, ctx: SslContext) -> WireResult<()> {
    let mut contexts = lock(&registry().tls_contexts);
    let Some(slot) = contexts.get_mut(&id) else {
        return Err(missing(id));
    };
    type Has = fn(&SslContext) -> bool;
    let functions: [(&str, Has); 3] = [
        ("a checkServerIdentity", SslContext::checks_server_identity),
        ("an SNICallback", SslContext::asks_server_name),
        ("an ALPNCallback", SslContext::asks_protocol),
    ];
    for (which, has) in functions {
        if has(slot) != has(&ctx) {
            return Err(WireError::new(
                "ERR_INVALID_ARG_VALUE",
                format!(
                    "a reload keeps whether the context has {which} (a context without one \
                     may be in use on other threads, which have no function to ask)"
                ),
            ));
        }
    }
    *slot = ctx;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use netloop_tls::SslOptions;

    fn client() -> SslContext {
        SslContext::client(&SslOptions::default()).unwrap()
    }

    #[test]
    fn a_registered_context_is_found_by_id_until_unregistered() {
        let id = register(client());
        assert!(!shared(id as f64).unwrap().is_server());
        reload(id, client()).unwrap();
        unregister(id);
        assert_eq!(
            shared(id as f64).unwrap_err().code,
            "ERR_TLS_INVALID_CONTEXT"
        );
        assert_eq!(
            reload(id, client()).unwrap_err().code,
            "ERR_TLS_INVALID_CONTEXT"
        );
    }

    #[test]
    fn a_reload_keeps_the_side() {
        assert!(check_reload_side(true, true).is_ok());
        let e = check_reload_side(false, true).unwrap_err();
        assert_eq!(e.code, "ERR_INVALID_ARG_VALUE");
        assert_eq!(
            e.message,
            "a client context cannot be reloaded as a server context"
        );
    }
}
