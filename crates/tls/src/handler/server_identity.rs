//! A client handler that asks the application to judge the server's identity (node:tls's
//! `checkServerIdentity`; contexts with [`crate::SslOptions::check_server_identity`]).
//!
//! Ground rules:
//! - Loop thread only (part of the handler's `Rc` state).
//! - The question is asked once, when the session's handshake finished and the server's chain
//!   verified (its name was not: that is the application's to judge). A resumed session is not
//!   judged again, nor is a chain that failed with `rejectUnauthorized` off (node:tls's
//!   rules). The session is readable meanwhile ([`SslHandler::session`]), so the application
//!   can read the certificate it judges.
//! - Until the answer the handler stays handshaking: writes stay held (nothing the application
//!   wrote reaches an unjudged server), plaintext the server sends is kept, the handshake
//!   timeout still runs, and nobody sees the completion.
//! - Approval completes the handshake as usual, then delivers what was kept (when reads are
//!   wanted). A refusal fails the handshake with `ERR_TLS_SERVER_IDENTITY` and closes this
//!   channel (without close_notify, as node:tls destroys the socket), unless
//!   `rejectUnauthorized` is off: then the handshake completes, reported as not authorized.
//! - A context that asks but a handler without a hook fails closed: nothing is accepted
//!   unjudged.

use std::rc::Rc;
use std::sync::Arc;

use netloop_transport::ChannelHandlerContext;

use super::{Phase, SslHandler, State};
use crate::context::Side;
use crate::error::TlsError;

/// What the hook gets: the handler's context (to answer from) and the name to judge.
pub(crate) type IdentityHook = Box<dyn FnOnce(&ChannelHandlerContext, &str)>;

impl State {
    /// The session finished its handshake: complete it, or first ask the application.
    pub(super) fn handshake_finished(self: &Rc<Self>, ctx: &ChannelHandlerContext) {
        if self.judging.get() {
            return;
        }
        if !self.context.checks_server_identity() {
            return self.complete_handshake(ctx, None);
        }
        let session = match self.engine.borrow().as_ref() {
            Some(engine) => engine.describe(),
            None => return,
        };
        if session.resumed || !session.authorized {
            return self.complete_handshake(ctx, None);
        }
        let Some(hook) = self.identity.borrow_mut().take() else {
            let e = TlsError::ServerIdentity(
                "no application was asked to judge the server's identity (checkServerIdentity)"
                    .into(),
            );
            return self.fail(ctx, e);
        };
        let name = session.server_name.clone().unwrap_or_default();
        *self.session.borrow_mut() = Some(Arc::new(session));
        self.judging.set(true);
        hook(ctx, &name);
    }

    fn judge(self: &Rc<Self>, ctx: &ChannelHandlerContext, verdict: Result<(), String>) -> bool {
        if self.phase.get() != Phase::Handshaking || !self.judging.replace(false) {
            return false;
        }
        let reject = match &self.context.0.side {
            Side::Client {
                reject_unauthorized,
                ..
            } => *reject_unauthorized,
            Side::Server { .. } => true,
        };
        match verdict {
            Ok(()) => self.complete_handshake(ctx, None),
            Err(m) if reject => {
                self.session.borrow_mut().take();
                self.fail(ctx, TlsError::ServerIdentity(m));
                return true;
            }
            Err(m) => self.complete_handshake(ctx, Some(TlsError::ServerIdentity(m))),
        }
        if self.phase.get() == Phase::Done {
            self.deliver_kept(ctx);
        }
        true
    }

    /// True while the application judges the server: plaintext is kept, not delivered.
    pub(super) fn judging(&self) -> bool {
        self.judging.get()
    }

    /// Delivers the plaintext kept while the server was judged, if reads are wanted now.
    fn deliver_kept(&self, ctx: &ChannelHandlerContext) {
        let auto = ctx.try_channel().is_some_and(|ch| ch.is_auto_read());
        if !(auto || self.app_read.get()) || self.parked.borrow().is_empty() {
            return;
        }
        let kept = std::mem::take(&mut *self.parked.borrow_mut());
        self.app_read.set(false);
        ctx.fire_channel_read(kept.freeze());
        ctx.fire_channel_read_complete();
    }
}

impl SslHandler {
    /// Sets whom a handler of a [`crate::SslOptions::check_server_identity`] context asks:
    /// `hook` is called once, with the handler's context and the name to judge (the server
    /// name, or the address, verified), when the session's handshake finished and the chain
    /// verified; the handler then waits for [`SslHandler::answer_server_identity`] (or the
    /// handshake timeout). Set it before the channel is active.
    pub fn on_server_identity(&self, hook: impl FnOnce(&ChannelHandlerContext, &str) + 'static) {
        *self.0.identity.borrow_mut() = Some(Box::new(hook));
    }

    /// True if this handler asks the application to judge the server's identity.
    pub fn checks_server_identity(&self) -> bool {
        self.0.context.checks_server_identity()
    }

    /// Answers the question the hook was asked (on the loop thread; `ctx` is this handler's
    /// context): `Ok` accepts the server, `Err` refuses it with the application's reason.
    /// Returns false, and does nothing, when the handler is not waiting for an answer.
    pub fn answer_server_identity(
        &self,
        ctx: &ChannelHandlerContext,
        verdict: Result<(), String>,
    ) -> bool {
        self.0.judge(ctx, verdict)
    }
}
