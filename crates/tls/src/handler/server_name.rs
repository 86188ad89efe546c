//! A server handler that asks the application for its context by the client's server name
//! (node:tls's `SNICallback`; contexts with [`crate::SslOptions::ask_server_name`]).
//!
//! Ground rules:
//! - Loop thread only (part of the handler's `Rc` state). The stage exists from the channel's
//!   activation until the handler knows its context; no session exists meanwhile.
//! - Every byte the client sends is kept, at most [`MAX_WAITING`] (a ClientHello is at most
//!   64 KiB; a client has nothing else to send before the server's hello), and a copy is read
//!   through rustls's `Acceptor` until the ClientHello is whole.
//! - A hello naming a server asks once (the hook is taken); a hello naming none, or input that
//!   is not a hello the `Acceptor` takes, goes on at once with the handler's own context, whose
//!   session judges it (and sends the alert) exactly as without the stage.
//! - The answer starts a session of the chosen context and replays every kept byte into it,
//!   so that context's configuration applies whole (certificate, SNI map, ALPN, client
//!   verification, versions, record path). An answer counts only while the handler waits
//!   (not before it asked, not twice, not after a failure, the timeout or the close).
//! - A refusal sends `unrecognized_name` (RFC 6066 §3: the server does not serve that name), a
//!   failure of the application `internal_error`, as plaintext alerts (no session exists), and
//!   both fail the handshake with `ERR_TLS_SNI_CALLBACK`.

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

/// What the hook gets: the handler's context (to answer from) and the server name.
pub(crate) type AskHook = Box<dyn FnOnce(&ChannelHandlerContext, &str)>;

pub(crate) struct HelloStage {
    /// Reads a copy of the input until the ClientHello is whole; gone once it was.
    acceptor: Option<Acceptor>,
    received: BytesMut,
    /// Asked and waiting for the answer.
    pub(crate) asked: bool,
}

enum Hello {
    More,
    Ask(String),
    GoOn,
}

impl HelloStage {
    pub(crate) fn new() -> Self {
        HelloStage {
            acceptor: Some(Acceptor::default()),
            received: BytesMut::new(),
            asked: false,
        }
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
                    let hello = match accepted.client_hello().server_name() {
                        Some(name) => Hello::Ask(name.to_string()),
                        None => Hello::GoOn,
                    };
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
            Ok(Hello::Ask(name)) => {
                let hook = self.ask.borrow_mut().take();
                match hook {
                    Some(hook) => hook(ctx, &name),
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

    fn answer(self: &Rc<Self>, ctx: &ChannelHandlerContext, choice: ServerNameChoice) -> bool {
        let waiting = self.phase.get() == Phase::Handshaking
            && self.hello.borrow().as_ref().is_some_and(|s| s.asked);
        if !waiting {
            return false;
        }
        let refused = |description: u8, message: String| {
            ctx.write_with(alert(description), ChannelPromise::void());
            ctx.flush();
            self.hello.borrow_mut().take();
            self.fail(ctx, TlsError::SniCallback(message));
        };
        match choice {
            ServerNameChoice::Default => self.go_on(ctx, &self.context.clone()),
            ServerNameChoice::Context(c) if c.is_server() => self.go_on(ctx, &c),
            ServerNameChoice::Context(_) => refused(
                INTERNAL_ERROR,
                "internal_error: the SNI callback chose a client context".into(),
            ),
            ServerNameChoice::Refuse(m) => {
                refused(UNRECOGNIZED_NAME, format!("unrecognized_name: {m}"))
            }
            ServerNameChoice::Fail(m) => refused(INTERNAL_ERROR, format!("internal_error: {m}")),
        }
        true
    }
}

impl SslHandler {
    /// Sets whom a handler of an [`crate::SslOptions::ask_server_name`] context asks: `hook`
    /// is called once, with the handler's context and the name, when the client's hello names
    /// a server; the handler then waits (keeping what the client sends, bounded) for
    /// [`SslHandler::answer_server_name`], or the handshake timeout. Set it before the channel
    /// is active; without it the handler serves its own context.
    pub fn on_server_name(&self, hook: impl FnOnce(&ChannelHandlerContext, &str) + 'static) {
        *self.0.ask.borrow_mut() = Some(Box::new(hook));
    }

    /// True if this handler asks for its context by server name.
    pub fn asks_server_name(&self) -> bool {
        self.0.context.asks_server_name()
    }

    /// Answers the question the hook was asked (on the loop thread; `ctx` is this handler's
    /// context). Returns false, and does nothing, when the handler is not waiting for an
    /// answer (answered already, failed, timed out or closed).
    pub fn answer_server_name(
        &self,
        ctx: &ChannelHandlerContext,
        choice: ServerNameChoice,
    ) -> bool {
        self.0.answer(ctx, choice)
    }
}
