//! A server handler that asks the application, once it read the ClientHello, for its context
//! by the client's server name (node:tls's `SNICallback`; contexts with
//! [`crate::SslOptions::ask_server_name`]) and for the ALPN protocol among the client's
//! (node:tls's `ALPNCallback`; [`crate::SslOptions::ask_protocol`]): one question, one answer.
//!
//! Ground rules:
//! - Loop thread only (part of the handler's `Rc` state). The stage exists from the channel's
//!   activation until the handler knows its context; no session exists meanwhile.
//! - Every byte the client sends is kept, at most [`MAX_WAITING`] (a ClientHello is at most
//!   64 KiB; a client has nothing else to send before the server's hello), and a copy is read
//!   through rustls's `Acceptor` until the ClientHello is whole.
//! - A hello asks once (the hook is taken) when it names a server and the context asks for
//!   names, or offers ALPN protocols and the context asks for protocols; any other hello, or
//!   input that is not a hello the `Acceptor` takes, goes on at once with the handler's own
//!   context, whose session judges it (and sends the alert) exactly as without the stage.
//! - The answer starts a session of the chosen context and replays every kept byte into it,
//!   so that context's configuration applies whole (certificate, SNI map, ALPN, client
//!   verification, versions, record path). An answer counts only while the handler waits
//!   (not before it asked, not twice, not after a failure, the timeout or the close).
//! - A chosen protocol must be one the client offered; the session then serves the chosen
//!   context with exactly that protocol (`SslContext::serving_protocol`).
//! - A refused name sends `unrecognized_name` (RFC 6066 §3: the server does not serve that
//!   name) and a refused protocol `no_application_protocol` (RFC 7301 §3.2); a failure of the
//!   application, or a protocol the client did not offer, `internal_error`. They are plaintext
//!   alerts (no session exists), and each fails the handshake with its own code
//!   (`ERR_TLS_SNI_CALLBACK`; `ERR_TLS_NO_COMMON_PARAMETERS`, `ERR_TLS_ALPN_CALLBACK`,
//!   `ERR_TLS_ALPN_CALLBACK_INVALID_RESULT`). A refused name is answered first: the protocol
//!   is not looked at.

use std::rc::Rc;

use bytes::{Bytes, BytesMut};
use netloop_transport::{ChannelHandlerContext, ChannelPromise};
use rustls::server::Acceptor;

use super::{Phase, SslHandler, State};
use crate::context::SslContext;
use crate::engine::Engine;
use crate::error::TlsError;

/// Most bytes kept from a client before its server name is answered: a whole ClientHello
/// (64 KiB) in records, and some room.
pub(crate) const MAX_WAITING: usize = 80 * 1024;

/// How the application answered a handler's question about a server name.
#[derive(Debug, Clone)]
pub enum ServerNameChoice {
    /// Serve the handler's own context (its default certificate and SNI map).
    Default,
    /// Serve this server context, whole.
    Context(SslContext),
    /// The name is not served: `unrecognized_name` alert (node:tls's `cb(err)`).
    Refuse(String),
    /// The application failed while choosing: `internal_error` alert.
    Fail(String),
}

/// How the application answered about the ALPN protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtocolChoice {
    /// Not asked (the client offered none, or the context does not ask), or no protocol:
    /// the chosen context's own ALPN configuration applies.
    Default,
    /// Serve this protocol; it must be one the client offered.
    Select(Vec<u8>),
    /// None of the client's protocols: `no_application_protocol` alert (node:tls's
    /// `ALPNCallback` returning `undefined`).
    Refuse,
    /// The application's answer was not one of the client's protocols (a message saying
    /// what it was): `internal_error` alert, `ERR_TLS_ALPN_CALLBACK_INVALID_RESULT`.
    Invalid(String),
    /// The application failed while choosing: `internal_error` alert, `ERR_TLS_ALPN_CALLBACK`.
    Fail(String),
}

/// A handler's question, asked once the ClientHello is whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientHelloQuestion {
    /// The server name the client asked for (SNI); asked about when the context asks for
    /// names ([`crate::SslOptions::ask_server_name`]).
    pub server_name: Option<String>,
    /// The ALPN protocols the client offered, in its order; to choose from when the context
    /// asks for protocols ([`crate::SslOptions::ask_protocol`]).
    pub protocols: Vec<Vec<u8>>,
}

/// The answer to a [`ClientHelloQuestion`].
#[derive(Debug, Clone)]
pub struct ClientHelloAnswer {
    /// The context that serves the connection (asked about or not: `Default` is the
    /// handler's own).
    pub context: ServerNameChoice,
    /// The ALPN protocol (`Default` when not asked).
    pub protocol: ProtocolChoice,
}

/// What the hook gets: the handler's context (to answer from) and the question.
pub(crate) type AskHook = Box<dyn FnOnce(&ChannelHandlerContext, &ClientHelloQuestion)>;

pub(crate) struct HelloStage {
    /// Reads a copy of the input until the ClientHello is whole; gone once it was.
    acceptor: Option<Acceptor>,
    received: BytesMut,
    /// What the context asks about.
    ask_name: bool,
    ask_protocol: bool,
    /// The protocols the client offered (what a chosen one must be among).
    offered: Vec<Vec<u8>>,
    /// Asked and waiting for the answer.
    pub(crate) asked: bool,
}

enum Hello {
    More,
    Ask(ClientHelloQuestion),
    GoOn,
}

impl HelloStage {
    pub(crate) fn new(ask_name: bool, ask_protocol: bool) -> Self {
        HelloStage {
            acceptor: Some(Acceptor::default()),
            received: BytesMut::new(),
            ask_name,
            ask_protocol,
            offered: Vec::new(),
            asked: false,
        }
    }

    /// What to ask about this hello, if anything.
    fn question(&mut self, hello: &rustls::server::ClientHello<'_>) -> Hello {
        let server_name = hello.server_name().map(str::to_string);
        let protocols: Vec<Vec<u8>> = hello
            .alpn()
            .map(|p| p.map(<[u8]>::to_vec).collect())
            .unwrap_or_default();
        let ask = (self.ask_name && server_name.is_some())
            || (self.ask_protocol && !protocols.is_empty());
        if !ask {
            return Hello::GoOn;
        }
        self.offered = protocols.clone();
        Hello::Ask(ClientHelloQuestion {
            server_name,
            protocols,
        })
    }

    fn feed(&mut self, data: &[u8]) -> Result<Hello, TlsError> {
        self.received.extend_from_slice(data);
        if self.received.len() > MAX_WAITING {
            return Err(TlsError::Protocol(format!(
                "more than {MAX_WAITING} bytes before the server's hello"
            )));
        }
        let Some(acceptor) = self.acceptor.as_mut() else {
            return Ok(Hello::More);
        };
        let mut rest = data;
        while !rest.is_empty() {
            match acceptor.read_tls(&mut rest) {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => return Ok(self.decided(Hello::GoOn)),
            }
            match acceptor.accept() {
                Ok(None) => {}
                Ok(Some(accepted)) => {
                    let hello = self.question(&accepted.client_hello());
                    return Ok(self.decided(hello));
                }
                Err(_) => return Ok(self.decided(Hello::GoOn)),
            }
        }
        Ok(Hello::More)
    }

    fn decided(&mut self, hello: Hello) -> Hello {
        self.acceptor = None;
        self.asked = matches!(hello, Hello::Ask(_));
        hello
    }
}

/// A plaintext fatal alert record (before the server's hello nothing is encrypted).
fn alert(description: u8) -> Bytes {
    Bytes::copy_from_slice(&[21, 3, 3, 0, 2, 2, description])
}
const UNRECOGNIZED_NAME: u8 = 112;
const INTERNAL_ERROR: u8 = 80;
const NO_APPLICATION_PROTOCOL: u8 = 120;

/// Protocol names in messages: as text where they are, escaped where not.
fn names(protocols: &[Vec<u8>]) -> String {
    let all: Vec<String> = protocols
        .iter()
        .map(|p| format!("{:?}", String::from_utf8_lossy(p)))
        .collect();
    format!("[{}]", all.join(", "))
}

impl State {
    /// Input while the stage decides or waits.
    pub(super) fn on_hello(self: &Rc<Self>, ctx: &ChannelHandlerContext, data: Bytes) {
        let step = match self.hello.borrow_mut().as_mut() {
            Some(stage) => stage.feed(&data),
            None => return,
        };
        match step {
            Ok(Hello::More) => {}
            Ok(Hello::GoOn) => self.go_on(ctx, &self.context.clone()),
            Ok(Hello::Ask(question)) => {
                let hook = self.ask.borrow_mut().take();
                match hook {
                    Some(hook) => hook(ctx, &question),
                    None => self.go_on(ctx, &self.context.clone()),
                }
            }
            Err(e) => self.fail(ctx, e),
        }
    }

    /// Starts the session of `context` and replays what the client sent into it.
    fn go_on(self: &Rc<Self>, ctx: &ChannelHandlerContext, context: &SslContext) {
        let Some(stage) = self.hello.borrow_mut().take() else {
            return;
        };
        let ip = ctx
            .try_channel()
            .and_then(|ch| ch.remote_addr())
            .map(|a| a.ip());
        match Engine::new(context, None, ip) {
            Ok(engine) => *self.engine.borrow_mut() = Some(engine),
            Err(e) => return self.fail(ctx, e),
        }
        if !stage.received.is_empty() {
            self.on_read(ctx, stage.received.freeze());
        }
    }

    fn answer(self: &Rc<Self>, ctx: &ChannelHandlerContext, answer: ClientHelloAnswer) -> bool {
        let offered = match self.hello.borrow().as_ref() {
            Some(s) if s.asked && self.phase.get() == Phase::Handshaking => s.offered.clone(),
            _ => return false,
        };
        let refused = |description: u8, error: TlsError| {
            ctx.write_with(alert(description), ChannelPromise::void());
            ctx.flush();
            self.hello.borrow_mut().take();
            self.fail(ctx, error);
        };
        let context = match answer.context {
            ServerNameChoice::Default => self.context.clone(),
            ServerNameChoice::Context(c) if c.is_server() => c,
            ServerNameChoice::Context(_) => {
                let m = "internal_error: the SNI callback chose a client context";
                refused(INTERNAL_ERROR, TlsError::SniCallback(m.into()));
                return true;
            }
            ServerNameChoice::Refuse(m) => {
                let m = format!("unrecognized_name: {m}");
                refused(UNRECOGNIZED_NAME, TlsError::SniCallback(m));
                return true;
            }
            ServerNameChoice::Fail(m) => {
                let m = format!("internal_error: {m}");
                refused(INTERNAL_ERROR, TlsError::SniCallback(m));
                return true;
            }
        };
        match answer.protocol {
            ProtocolChoice::Default => self.go_on(ctx, &context),
            ProtocolChoice::Select(p) if offered.contains(&p) => {
                match context.serving_protocol(&p) {
                    Some(serving) => self.go_on(ctx, &serving),
                    None => self.go_on(ctx, &context),
                }
            }
            ProtocolChoice::Select(p) => {
                let m = format!(
                    "internal_error: the ALPNCallback chose {:?}, which the client did not offer (it offered {})",
                    String::from_utf8_lossy(&p),
                    names(&offered)
                );
                refused(INTERNAL_ERROR, TlsError::AlpnInvalidResult(m));
            }
            ProtocolChoice::Refuse => {
                let m = format!(
                    "no_application_protocol: the ALPNCallback chose none of the client's protocols {}",
                    names(&offered)
                );
                refused(NO_APPLICATION_PROTOCOL, TlsError::NoCommonParameters(m));
            }
            ProtocolChoice::Invalid(m) => {
                let m = format!("internal_error: {m}");
                refused(INTERNAL_ERROR, TlsError::AlpnInvalidResult(m));
            }
            ProtocolChoice::Fail(m) => {
                let m = format!("internal_error: {m}");
                refused(INTERNAL_ERROR, TlsError::AlpnCallback(m));
            }
        }
        true
    }
}

impl SslHandler {
    /// Sets whom a handler of an [`crate::SslOptions::ask_server_name`] context asks: `hook`
    /// is called once, with the handler's context and the name, when the client's hello names
    /// a server; the handler then waits (keeping what the client sends, bounded) for
    /// [`SslHandler::answer_server_name`], or the handshake timeout. Set it before the channel
    /// is active; without it the handler serves its own context. (The name-only form of
    /// [`SslHandler::on_client_hello`].)
    pub fn on_server_name(&self, hook: impl FnOnce(&ChannelHandlerContext, &str) + 'static) {
        self.on_client_hello(move |ctx, q| hook(ctx, q.server_name.as_deref().unwrap_or("")));
    }

    /// Sets whom a handler of an [`crate::SslOptions::ask_server_name`] or
    /// [`crate::SslOptions::ask_protocol`] context asks: `hook` is called once, with the
    /// handler's context and the question, when the ClientHello names a server (contexts that
    /// ask for names) or offers ALPN protocols (contexts that ask for protocols); the handler
    /// then waits (keeping what the client sends, bounded) for
    /// [`SslHandler::answer_client_hello`], or the handshake timeout. Set it before the
    /// channel is active; without it the handler serves its own context.
    pub fn on_client_hello(
        &self,
        hook: impl FnOnce(&ChannelHandlerContext, &ClientHelloQuestion) + 'static,
    ) {
        *self.0.ask.borrow_mut() = Some(Box::new(hook));
    }

    /// True if this handler asks for its context by server name.
    pub fn asks_server_name(&self) -> bool {
        self.0.context.asks_server_name()
    }

    /// True if this handler asks about the ClientHello (for the context by server name, or
    /// for the ALPN protocol).
    pub fn asks_client_hello(&self) -> bool {
        self.0.context.asks_server_name() || self.0.context.asks_protocol()
    }

    /// Answers the question the hook was asked about the server name (the protocol:
    /// [`ProtocolChoice::Default`]); see [`SslHandler::answer_client_hello`].
    pub fn answer_server_name(
        &self,
        ctx: &ChannelHandlerContext,
        choice: ServerNameChoice,
    ) -> bool {
        let answer = ClientHelloAnswer {
            context: choice,
            protocol: ProtocolChoice::Default,
        };
        self.0.answer(ctx, answer)
    }

    /// Answers the question the hook was asked (on the loop thread; `ctx` is this handler's
    /// context). Returns false, and does nothing, when the handler is not waiting for an
    /// answer (answered already, failed, timed out or closed).
    pub fn answer_client_hello(
        &self,
        ctx: &ChannelHandlerContext,
        answer: ClientHelloAnswer,
    ) -> bool {
        self.0.answer(ctx, answer)
    }
}
