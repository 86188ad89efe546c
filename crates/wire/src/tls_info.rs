//! `channel.tls`: what the `SslHandler` in a channel's pipeline negotiated, as a JS object;
//! and the JS `SNICallback`'s side of a handler that asks for its context by server name.
//!
//! Ground rules (the ClientHello): loop thread only. A handler of a context with
//! `ask_server_name` or `ask_protocol` asks through a [`WireKind::TlsClientHello`] record (the
//! name and the protocols in the batch's strings, a protocol's bytes as chars U+0000–U+00FF);
//! JS answers with `tlsAnswerClientHello`, a direct call (once per connection; JS applies its
//! buffered ops first), which finds the handler in the channel's pipeline. Nothing is kept here
//! between the two: an answer for a channel or handler that is gone is dropped.
//! A client handler of a context with `checkServerIdentity` asks the same way
//! ([`WireKind::TlsServerIdentity`], answered by `tlsAnswerServerIdentity`).

use std::rc::Rc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use netloop_tls::{
    ClientHelloAnswer, ClientHelloQuestion, ProtocolChoice, ServerNameChoice, SslHandler,
};
use netloop_transport::{Channel, ChannelHandlerContext};

use super::hub::Hub;
use super::NativeChannels;
use crate::error::{throw, Code};
use crate::protocol::{ProtocolAnswer, ServerNameAnswer, WireKind};

/// For a handler of a context with an `SNICallback` or an `ALPNCallback`: asks JS about the
/// ClientHello (the context by server name, the protocol among the client's).
pub(super) fn ask_js_for_client_hellos(hub: &Rc<Hub>, id: f64, tls: &SslHandler) {
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
pub(super) fn ask_js_for_server_identity(hub: &Rc<Hub>, id: f64, tls: &SslHandler) {
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
        k if k == ServerNameAnswer::Context as u32 => match crate::tls::context(context as u64) {
            Some(c) => ServerNameChoice::Context(c),
            None => ServerNameChoice::Fail(format!(
                "the SNI callback's context {context} is gone (its SslContext was collected)"
            )),
        },
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

/// A completed handshake's parameters (src/tls.ts turns it into `TlsInfo`).
#[napi(object)]
pub struct TlsSessionInfo {
    pub protocol: String,
    /// The suite's IANA name (`getCipher().standardName`).
    pub cipher: String,
    /// The suite's OpenSSL name (`getCipher().name`).
    pub cipher_name: String,
    pub alpn_protocol: Option<String>,
    pub servername: Option<String>,
    pub authorized: bool,
    pub authorization_error_code: Option<String>,
    pub authorization_error: Option<String>,
    pub resumed: bool,
    /// The peer's chain, DER, leaf first.
    pub peer_certificates: Vec<Buffer>,
    /// Client: the OCSP response the server stapled (DER).
    pub ocsp_response: Option<Buffer>,
    /// The key exchange group (OpenSSL's name) and its size in bits.
    pub key_exchange_name: Option<String>,
    pub key_exchange_bits: Option<u32>,
}

#[napi]
impl NativeChannels {
    /// The answer about channel `id`'s ClientHello: the `SNICallback`'s (a
    /// [`ServerNameAnswer`], the chosen context's id for `Context`, the error's message for
    /// `Refuse` and `Fail`) and the `ALPNCallback`'s (a [`ProtocolAnswer`], the chosen
    /// protocol for `Select`, the message for `Invalid` and `Fail`). False when the handler no
    /// longer waits (closed, timed out, answered).
    #[napi]
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
        self.enter();
        let Some(ch) = self.hub.channel(id as u64) else {
            return false;
        };
        let answer = ClientHelloAnswer {
            context: choice(kind, context, message),
            protocol: protocol_choice(protocol_kind, protocol, protocol_message),
        };
        let answered = with_tls(&ch, |tls, ctx| tls.answer_client_hello(ctx, answer));
        // What the handler did (records sent, a failure's events) is delivered by the next
        // iteration, also when JS answered outside one (after a timer or a promise).
        self.rearm();
        answered
    }

    /// The `checkServerIdentity` verdict for channel `id`: accepted, or refused with the
    /// error's message. False when the handler no longer waits (closed, timed out, answered).
    #[napi]
    pub fn tls_answer_server_identity(&self, id: f64, accepted: bool, message: String) -> bool {
        self.enter();
        let Some(ch) = self.hub.channel(id as u64) else {
            return false;
        };
        let verdict = if accepted { Ok(()) } else { Err(message) };
        let answered = with_tls(&ch, |tls, ctx| tls.answer_server_identity(ctx, verdict));
        self.rearm();
        answered
    }

    /// `length` bytes of keying material from the session of the channel's `SslHandler`,
    /// exported under `label` and `context` (node:tls's `exportKeyingMaterial`; the arguments
    /// checked in src/tls-info.ts).
    #[napi]
    pub fn tls_export_keying_material(
        &self,
        env: Env,
        id: f64,
        length: u32,
        label: String,
        context: Option<Buffer>,
    ) -> Result<Buffer> {
        self.enter();
        self.with_channel(id, |ch| {
            let exported = ch.pipeline().find_handler(|h: &SslHandler| {
                Some(h.export_keying_material(
                    length as usize,
                    label.as_bytes(),
                    context.as_deref(),
                ))
            });
            match exported {
                Some(Ok(bytes)) => Ok(Buffer::from(bytes)),
                Some(Err(e)) => Err(napi::Error::new(Code(e.code()), e.to_string())),
                None => Err(napi::Error::new(
                    Code("ERR_TLS_INVALID_STATE"),
                    "exportKeyingMaterial: the channel has no SslHandler".to_string(),
                )),
            }
        })
        .map_err(|e| throw(&env, e))
    }

    /// The session of the channel's `SslHandler` (none: no handler, or no handshake yet).
    #[napi]
    pub fn tls_session(&self, env: Env, id: f64) -> Result<Option<TlsSessionInfo>> {
        self.enter();
        self.with_channel(id, |ch| {
            Ok(ch
                .pipeline()
                .find_handler(|h: &SslHandler| h.session())
                .map(|s| TlsSessionInfo {
                    protocol: s.protocol.to_string(),
                    cipher: s.cipher.clone(),
                    cipher_name: s.cipher_openssl_name().to_string(),
                    alpn_protocol: s.alpn_protocol.clone(),
                    servername: s.server_name.clone(),
                    authorized: s.authorized,
                    authorization_error_code: s
                        .authorization_error
                        .as_ref()
                        .map(|e| e.code().to_string()),
                    authorization_error: s.authorization_error.as_ref().map(|e| e.to_string()),
                    resumed: s.resumed,
                    peer_certificates: s
                        .peer_certificates
                        .iter()
                        .map(|c| Buffer::from(c.to_vec()))
                        .collect(),
                    ocsp_response: s.ocsp_response.as_ref().map(|r| Buffer::from(r.to_vec())),
                    key_exchange_name: s.key_exchange.map(|(name, _)| name.to_string()),
                    key_exchange_bits: s.key_exchange.map(|(_, bits)| bits),
                }))
        })
        .map_err(|e| throw(&env, e))
    }
}

impl std::fmt::Debug for TlsSessionInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSessionInfo")
            .field("protocol", &self.protocol)
            .field("cipher", &self.cipher)
            .field("alpn_protocol", &self.alpn_protocol)
            .field("servername", &self.servername)
            .field("authorized", &self.authorized)
            .field("resumed", &self.resumed)
            .finish_non_exhaustive()
    }
}
