//! User events in the wire's terms: what a [`JsAdapter`](crate::adapter::JsAdapter) puts in
//! a `UserEvent` record (`a`, and the [`UserEventKind`] in `b`) for each event JS knows: idle
//! states, the input's shutdown, TLS handshakes and close_notify, a PROXY protocol header, a
//! WebSocket handshake, and JS's own values (tokens). The strings some of them carry go into
//! the outbox first (`a` is then their index). Loop thread only (the hub's outbox).

use std::rc::Weak;

use netloop_codec::{HAProxyMessage, IdleState, IdleStateEvent};
use netloop_tls::{SslCloseCompletionEvent, SslHandshakeCompletionEvent};
use netloop_transport::{ChannelInputShutdown, UserEvent};

use crate::hub::Hub;
use crate::outbox::ErrorRef;
use crate::protocol::{ErrorIndex, RecordValue as _, UserEventKind};
use crate::token::JsValue;

/// The record fields of `event`: `Ok(Some((a, kind)))`; `Ok(None)` when it needed the hub's
/// outbox and the hub is gone; `Err(event)` for a native event JS cannot see (passed on).
pub(crate) fn fields(
    hub: &Weak<Hub>,
    event: UserEvent,
) -> Result<Option<(f64, UserEventKind)>, UserEvent> {
    let event = match event.downcast::<IdleStateEvent>() {
        Ok(idle) => {
            let state = match idle.state {
                IdleState::ReaderIdle => 0.0,
                IdleState::WriterIdle => 1.0,
                IdleState::AllIdle => 2.0,
            };
            return Ok(Some((
                state * 2.0 + f64::from(u8::from(idle.first)),
                UserEventKind::Idle,
            )));
        }
        Err(e) => e,
    };
    let event = match event.downcast::<ChannelInputShutdown>() {
        Ok(_) => return Ok(Some((0.0, UserEventKind::InputShutdown))),
        Err(e) => e,
    };
    let event = match event.downcast::<SslHandshakeCompletionEvent>() {
        Ok(done) => {
            // `a` = `ErrorIndex::None` on success, else the string index of the error (code, message).
            let at = match &done.0 {
                Ok(_) => ErrorIndex::None.value(),
                Err(e) => {
                    let Some(hub) = hub.upgrade() else {
                        return Ok(None);
                    };
                    let put = hub
                        .outbox()
                        .put_error(hub.id(), &e.clone().into_transport());
                    match put {
                        ErrorRef::Native(at) => at,
                        ErrorRef::Js(_) => ErrorIndex::None.value(),
                    }
                }
            };
            return Ok(Some((at, UserEventKind::TlsHandshake)));
        }
        Err(e) => e,
    };
    let event = match event.downcast::<SslCloseCompletionEvent>() {
        Ok(_) => return Ok(Some((0.0, UserEventKind::TlsClose))),
        Err(e) => e,
    };
    let event = match event.downcast::<HAProxyMessage>() {
        Ok(m) => {
            return Ok(put_strings(hub, crate::haproxy_wire::strings(&m))
                .map(|at| (at, UserEventKind::HAProxy)))
        }
        Err(e) => e,
    };
    let event = match crate::ws_wire::handshake_strings(event) {
        Ok(strings) => {
            return Ok(put_strings(hub, strings).map(|at| (at, UserEventKind::WebSocketHandshake)))
        }
        Err(e) => e,
    };
    match event.downcast::<JsValue>() {
        Ok(v) => Ok(Some((v.take(), UserEventKind::Token))),
        Err(other) => Err(other),
    }
}

/// Appends `strings` to the outbox's; the index of the first (`None`: the hub is gone).
fn put_strings(hub: &Weak<Hub>, strings: impl IntoIterator<Item = String>) -> Option<f64> {
    let hub = hub.upgrade()?;
    let mut out = hub.outbox();
    let at = out.strings.len() as f64;
    out.strings.extend(strings);
    Some(at)
}
