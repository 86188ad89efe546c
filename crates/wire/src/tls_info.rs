//! The JS `SNICallback`'s side of a handler that asks for its context by server name.
//!
//! Ground rules (the ClientHello): loop thread only. A handler of a context with
//! `ask_server_name` or `ask_protocol` asks through a [`WireKind::TlsClientHello`] record (the
//! name and the protocols in the batch's strings, a protocol's bytes as chars U+0000–U+00FF);
//! JS answers with `tlsAnswerClientHello` ([`Hub::tls_answer_client_hello`]), a direct call (once per connection; JS applies its
//! buffered ops first), which finds the handler in the channel's pipeline. Nothing is kept here
//! between the two: an answer for a channel or handler that is gone is dropped.
//! A client handler of a context with `checkServerIdentity` asks the same way
//! ([`WireKind::TlsServerIdentity`], answered by `tlsAnswerServerIdentity`).

use std::rc::Rc;

use netloop_tls::{
    ClientHelloAnswer, ClientHelloQuestion, ProtocolChoice, ServerNameChoice, SslHandler,
};
use netloop_transport::{Channel, ChannelHandlerContext};

use crate::hub::Hub;
use crate::protocol::{ProtocolAnswer, ServerNameAnswer, WireKind};

/// For a handler of a context with an `SNICallback` or an `ALPNCallback`: asks JS about the
/// ClientHello (the context by server name, the protocol among the client's).
pub fn ask_js_for_client_hellos(hub: &Rc<Hub>, id: f64, tls: &SslHandler) {
    if !tls.asks_client_hello() {
        return;
    }
    let hub = Rc::downgrade(hub);
    tls.on_client_hello(move |_, q: &ClientHelloQuestion| {
        let Some(hub) = hub.upgrade() else { return };
        let mut out = hub.outbox();
        let name = match &q.server_name {
            Some(n) => {
                out.strings.push(n.clone());
                (out.strings.len() - 1) as f64
            }
            None => -1.0,
        };
        let first = out.strings.len() as f64;
        out.strings.extend(
            q.protocols
                .iter()
                .map(|p| p.iter().map(|&b| char::from(b)).collect()),
        );
        let kind = WireKind::TlsClientHello as u32;
        out.push(kind, id, 0.0, name, first, q.protocols.len() as f64);
    });
}

/// For a client handler of a context with a `checkServerIdentity`: asks JS to judge the
/// server (the session, with the certificate, is readable meanwhile through `tls_session`).
pub fn ask_js_for_server_identity(hub: &Rc<Hub>, id: f64, tls: &SslHandler) {
    if tls.checks_server_identity() {
        tls.on_server_identity(ask_js(hub, id, WireKind::TlsServerIdentity));
    }
}

/// A handler hook that asks JS through a `kind` record for channel `id`, the name in the
/// batch's strings (the hub may be gone by then: nothing is asked).
fn ask_js(hub: &Rc<Hub>, id: f64, kind: WireKind) -> impl FnOnce(&ChannelHandlerContext, &str) {
    let hub = Rc::downgrade(hub);
    move |_, name| {
        let Some(hub) = hub.upgrade() else { return };
        let mut out = hub.outbox();
        let at = out.strings.len() as f64;
        out.strings.push(name.to_string());
        out.push(kind as u32, id, 0.0, at, 0.0, 0.0);
    }
}

/// What JS answered about the protocol, as the handler takes it (`protocol`'s chars are its
/// bytes; one above U+00FF cannot be a byte the client offered).
fn protocol_choice(kind: u32, protocol: String, message: String) -> ProtocolChoice {
    match kind {
        k if k == ProtocolAnswer::Select as u32 => {
            let bytes: Option<Vec<u8>> = protocol.chars().map(|c| u8::try_from(c).ok()).collect();
            match bytes {
                Some(b) => ProtocolChoice::Select(b),
                None => ProtocolChoice::Invalid(format!(
                    "the ALPNCallback chose {protocol:?}, which the client did not offer"
                )),
            }
        }
        k if k == ProtocolAnswer::Refuse as u32 => ProtocolChoice::Refuse,
        k if k == ProtocolAnswer::Invalid as u32 => ProtocolChoice::Invalid(message),
        k if k == ProtocolAnswer::Fail as u32 => ProtocolChoice::Fail(message),
        _ => ProtocolChoice::Default,
    }
}

/// What JS answered about the context, as the handler takes it.
fn choice(kind: u32, context: f64, message: String) -> ServerNameChoice {
    match kind {
        k if k == ServerNameAnswer::Context as u32 => {
            match crate::registry::tls_context(context as u64) {
                Some(c) => ServerNameChoice::Context(c),
                None => ServerNameChoice::Fail(format!(
                    "the SNI callback's context {context} is gone (its SslContext was collected)"
                )),
            }
        }
        k if k == ServerNameAnswer::Refuse as u32 => ServerNameChoice::Refuse(message),
        k if k == ServerNameAnswer::Fail as u32 => ServerNameChoice::Fail(message),
        _ => ServerNameChoice::Default,
    }
}

/// Calls `f` with the channel's `SslHandler` and its context; false if there is none.
fn with_tls(ch: &Channel, f: impl FnOnce(&SslHandler, &ChannelHandlerContext) -> bool) -> bool {
    let p = ch.pipeline();
    for name in p.names() {
        let (Some(h), Some(ctx)) = (p.get(&name), p.context(&name)) else {
            continue;
        };
        if let Some(tls) = h.as_any().and_then(|a| a.downcast_ref::<SslHandler>()) {
            return f(tls, &ctx);
        }
    }
    false
}

impl Hub {
    /// The answer about channel `id`'s ClientHello: the `SNICallback`'s (a
    /// [`ServerNameAnswer`], the chosen context's id for `Context`, the error's message for
    /// `Refuse` and `Fail`) and the `ALPNCallback`'s (a [`ProtocolAnswer`], the chosen
    /// protocol for `Select`, the message for `Invalid` and `Fail`). False when the handler no
    /// longer waits (closed, timed out, answered).
    #[allow(clippy::too_many_arguments)]
    pub fn tls_answer_client_hello(
        &self,
        id: f64,
        kind: u32,
        context: f64,
        message: String,
        protocol_kind: u32,
        protocol: String,
        protocol_message: String,
    ) -> bool {
        let Some(ch) = self.channel(id as u64) else {
            return false;
        };
        let answer = ClientHelloAnswer {
            context: choice(kind, context, message),
            protocol: protocol_choice(protocol_kind, protocol, protocol_message),
        };
        with_tls(&ch, |tls, ctx| tls.answer_client_hello(ctx, answer))
    }

    /// The `checkServerIdentity` verdict for channel `id`: accepted, or refused with the
    /// error's message. False when the handler no longer waits (closed, timed out, answered).
    pub fn tls_answer_server_identity(&self, id: f64, accepted: bool, message: String) -> bool {
        let Some(ch) = self.channel(id as u64) else {
            return false;
        };
        let verdict = if accepted { Ok(()) } else { Err(message) };
        with_tls(&ch, |tls, ctx| tls.answer_server_identity(ctx, verdict))
    }
}
