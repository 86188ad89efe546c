//! The handshake's life in an `SslHandler`: the session made at activation (or the
//! server-name stage), the handshake timeout, completion (the event every handler sees, the
//! promise, then the writes held through it) and failure (alert, events, held writes failed,
//! this channel closed).
//!
//! Same thread and ground rules as the handler (handler.rs).

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use netloop_transport::ChannelHandlerContext;

use super::client_hello::HelloStage;
use super::{Phase, State};
use crate::engine::Engine;
use crate::error::TlsError;
use crate::session::SslHandshakeCompletionEvent;

impl State {
    pub(super) fn start(self: &Rc<Self>, ctx: &ChannelHandlerContext) {
        if self.phase.get() != Phase::Idle {
            return;
        }
        let Some(ch) = ctx.try_channel() else { return };
        let remote = ch.remote_addr();
        let (names, protocols) = (
            self.context.asks_server_name(),
            self.context.asks_protocol(),
        );
        if (names || protocols) && self.ask.borrow().is_some() {
            *self.hello.borrow_mut() = Some(Box::new(HelloStage::new(names, protocols)));
        } else {
            match Engine::new(
                &self.context,
                self.server_name.as_deref(),
                remote.map(|a: SocketAddr| a.ip()),
            ) {
                Ok(engine) => *self.engine.borrow_mut() = Some(engine),
                Err(e) => {
                    self.phase.set(Phase::Handshaking);
                    self.fail(ctx, e);
                    return;
                }
            }
        }
        self.phase.set(Phase::Handshaking);
        self.arm_timeout(ctx);
        self.send_records(ctx);
        if !ch.is_auto_read() {
            ctx.read();
        }
    }

    pub(super) fn arm_timeout(self: &Rc<Self>, ctx: &ChannelHandlerContext) {
        let Some(timeout) = self.context.handshake_timeout() else {
            return;
        };
        let Some(event_loop) = ctx.try_channel().and_then(|ch| ch.event_loop().local()) else {
            return;
        };
        let weak = Rc::downgrade(self);
        let c = ctx.clone();
        let handle = event_loop.schedule_local(timeout, move || {
            if let Some(s) = weak.upgrade() {
                if s.phase.get() == Phase::Handshaking {
                    s.fail(&c, TlsError::HandshakeTimeout(timeout));
                }
            }
        });
        *self.timer.borrow_mut() = Some(handle);
    }

    pub(super) fn cancel_timeout(&self) {
        if let Some(t) = self.timer.borrow_mut().take() {
            t.cancel();
        }
    }

    /// Completes the handshake; `denied`: the application refused the server's identity and
    /// `rejectUnauthorized` is off, so the session is reported as not authorized, for that.
    pub(super) fn complete_handshake(
        self: &Rc<Self>,
        ctx: &ChannelHandlerContext,
        denied: Option<TlsError>,
    ) {
        self.cancel_timeout();
        let session = {
            let engine = self.engine.borrow();
            let Some(engine) = engine.as_ref() else {
                return;
            };
            let mut session = engine.describe();
            if let Some(e) = denied {
                session.authorized = false;
                session.authorization_error = Some(e);
            }
            Arc::new(session)
        };
        // Records the session made at completion (TLS 1.3 session tickets that our own record
        // layer sealed at the hand-over) go before any application data, whose records follow
        // theirs in sequence: a write held through the handshake, or one made on the event.
        self.send_records(ctx);
        self.phase.set(Phase::Done);
        *self.session.borrow_mut() = Some(session.clone());
        self.handshake.try_success(session.clone());
        ctx.fire_user_event(SslHandshakeCompletionEvent(Ok(session)));
        if self.phase.get() != Phase::Done {
            return; // a handler closed the channel in reaction to the event
        }
        self.encrypt_held(ctx);
        if self.flush_held.replace(false) {
            ctx.flush();
        }
    }

    /// The handshake (or the session) failed: alert already queued by `feed`, so send it,
    /// report, and close this channel.
    pub(super) fn fail(self: &Rc<Self>, ctx: &ChannelHandlerContext, error: TlsError) {
        let was = self.phase.replace(Phase::Finished);
        self.cancel_timeout();
        self.forget_hello();
        self.send_records(ctx);
        self.fail_held(ctx, error.clone().into_transport());
        if was == Phase::Handshaking {
            self.handshake.try_failure(error.clone());
            ctx.fire_user_event(SslHandshakeCompletionEvent(Err(error.clone())));
        }
        ctx.fire_exception_caught(error.into_transport());
        self.close_sent.set(true);
        ctx.close();
    }

    /// Drops the server-name stage and the hook (no answer counts any more). Returns whether
    /// the stage was there.
    pub(super) fn forget_hello(&self) -> bool {
        self.ask.borrow_mut().take();
        self.hello.borrow_mut().take().is_some()
    }
}
