//! `SslHandler`: TLS as a pipeline handler (Netty's `SslHandler`). Inbound it turns records
//! into plaintext `Bytes`; outbound it turns plaintext writes into records, so every handler
//! behind it works unchanged.
//!
//! Ground rules:
//! - One handler per connection, used only on its channel's loop thread (`!Send`; `Rc` state).
//! - The rustls session is made when the channel becomes active (a client then knows the
//!   address it verifies when no server name was given) and the client's hello goes out then.
//! - Writes are held here, in order, until the next flush (and, before the handshake completes,
//!   until it does), counting toward the channel's water marks as plaintext. A flush encrypts
//!   everything held as one stream (full records across the writes' edges, one buffer of
//!   records per batch of up to 64 KiB) whose records carry the writes' promises, so the
//!   outbound buffer's water marks see ciphertext. A close encrypts what is held before its
//!   close_notify.
//! - File regions are written too (Netty wants a `ChunkedWriteHandler` for them): held in order
//!   with the bytes, counting nothing, then read and encrypted a batch at a time only while the
//!   channel has room, going on when it has room again (`region`). Memory stays bounded
//!   whatever the file's size.
//! - Every failure (bad records, a failed verification, the timeout) sends the alert rustls
//!   chose, fires the handshake event (if still handshaking) and `exceptionCaught`, fails held
//!   writes, and closes this channel only.
//! - With `autoRead` off, the handler still reads what the handshake needs; after it, records
//!   are read only when the application asks (`read()`), and a read that yields no plaintext
//!   asks for another. Plaintext that arrived together with the last handshake records is
//!   parked and delivered on the next `read()`, so nothing reaches the application unasked.
//! - A server whose context asks for its context by server name starts no session at
//!   activation: `server_name` reads the ClientHello and waits for the application's answer.
//! - A client whose context lets the application judge the server's identity stays
//!   handshaking after the session's handshake until the verdict (`server_identity`): writes
//!   stay held and the server's plaintext is kept meanwhile.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use netloop_eventloop::{Future, Promise, ScheduledHandle};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelInputShutdown, ChannelPromise, HandlerResult,
    Message, TransportError, UserEvent,
};

use crate::context::{Side, SslContext};
use crate::engine::{Engine, Fed};
use crate::error::TlsError;
use crate::session::{SslCloseCompletionEvent, SslHandshakeCompletionEvent, TlsSession};

mod client_hello;
mod half_close;
mod handshake;
mod region;
mod server_identity;
mod writes;

use client_hello::{AskHook, HelloStage};
pub use client_hello::{ClientHelloAnswer, ClientHelloQuestion, ProtocolChoice, ServerNameChoice};
use region::Held;
use server_identity::IdentityHook;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Added, the channel not active yet.
    Idle,
    Handshaking,
    Done,
    /// Failed or closed: writes fail.
    Finished,
}

struct State {
    context: SslContext,
    server_name: Option<String>,
    engine: RefCell<Option<Engine>>,
    phase: Cell<Phase>,
    held: RefCell<VecDeque<Held>>,
    /// Plaintext bytes held (counted toward the water marks); held regions count nothing.
    held_bytes: Cell<usize>,
    /// A held region waits for room for its next piece (region.rs).
    stalled: Cell<bool>,
    /// `encrypt_held` is running (it does not nest).
    encrypting: Cell<bool>,
    /// An empty write waits to wake a stalled region (region.rs).
    waking: Cell<bool>,
    flush_held: Cell<bool>,
    fired_read: Cell<bool>,
    /// The application asked for a read (autoRead off) that no plaintext has answered yet.
    app_read: Cell<bool>,
    /// Plaintext that arrived with handshake records while autoRead is off and no read was
    /// asked for: delivered on the next `read()` (at most one socket read's worth).
    parked: RefCell<BytesMut>,
    close_sent: Cell<bool>,
    /// The peer's close_notify was reported as the end of input (half_close.rs).
    input_ended: Cell<bool>,
    /// The output was half-closed (half_close.rs): new writes fail.
    output_shut: Cell<bool>,
    /// Half-close requests waiting for the held writes to drain (half_close.rs).
    shutdown_waiters: RefCell<Vec<ChannelPromise>>,
    timer: RefCell<Option<ScheduledHandle>>,
    handshake: Promise<Arc<TlsSession>, TlsError>,
    session: RefCell<Option<Arc<TlsSession>>>,
    /// Whom to ask about the ClientHello (client_hello.rs), until asked.
    ask: RefCell<Option<AskHook>>,
    /// Reading the ClientHello or waiting for the answer (no engine meanwhile). Boxed: the
    /// stage holds a rustls `Acceptor` (~1.2 KB), which every other handler would carry.
    hello: RefCell<Option<Box<HelloStage>>>,
    /// Whom to ask to judge the server's identity (server_identity.rs), until asked.
    identity: RefCell<Option<IdentityHook>>,
    /// Asked, and waiting for the verdict (server_identity.rs).
    judging: Cell<bool>,
}

/// TLS for one connection, made by [`SslContext::new_handler`]. Add it first in the pipeline.
pub struct SslHandler(Rc<State>);

impl SslHandler {
    pub(crate) fn new(context: SslContext, server_name: Option<&str>) -> Result<Self, TlsError> {
        let server_name = match (&context.0.side, server_name) {
            (Side::Client { .. }, Some(n)) => Some(n.to_string()),
            (Side::Client { server_name, .. }, None) => server_name.clone(),
            (Side::Server { .. }, _) => None,
        };
        Ok(SslHandler(Rc::new(State {
            context,
            server_name,
            engine: RefCell::new(None),
            phase: Cell::new(Phase::Idle),
            held: RefCell::new(VecDeque::new()),
            held_bytes: Cell::new(0),
            stalled: Cell::new(false),
            encrypting: Cell::new(false),
            waking: Cell::new(false),
            flush_held: Cell::new(false),
            fired_read: Cell::new(false),
            app_read: Cell::new(false),
            parked: RefCell::new(BytesMut::new()),
            close_sent: Cell::new(false),
            input_ended: Cell::new(false),
            output_shut: Cell::new(false),
            shutdown_waiters: RefCell::new(Vec::new()),
            timer: RefCell::new(None),
            handshake: Promise::new(),
            session: RefCell::new(None),
            ask: RefCell::new(None),
            hello: RefCell::new(None),
            identity: RefCell::new(None),
            judging: Cell::new(false),
        })))
    }

    /// Completes when the handshake does: with what it negotiated, or why it failed.
    pub fn handshake_future(&self) -> Future<Arc<TlsSession>, TlsError> {
        self.0.handshake.future()
    }

    /// What the handshake negotiated (none before it completed).
    pub fn session(&self) -> Option<Arc<TlsSession>> {
        self.0.session.borrow().clone()
    }

    /// True once the handshake completed.
    pub fn is_handshake_done(&self) -> bool {
        self.0.phase.get() == Phase::Done
    }

    /// `len` bytes of keying material exported under `label` and `context` (RFC 5705,
    /// RFC 8446 §7.5; node:tls's `exportKeyingMaterial`): both ends of a connection get the
    /// same bytes, which no one else can compute (channel bindings such as RFC 9266's
    /// `tls-exporter`). Fails before the handshake completed and after the close.
    pub fn export_keying_material(
        &self,
        len: usize,
        label: &[u8],
        context: Option<&[u8]>,
    ) -> Result<Vec<u8>, TlsError> {
        if self.0.phase.get() != Phase::Done {
            return Err(TlsError::InvalidState(
                "exportKeyingMaterial: the handshake has not completed, or the connection closed"
                    .into(),
            ));
        }
        if len == 0 {
            return Err(TlsError::InvalidState(
                "exportKeyingMaterial: a length of 0".into(),
            ));
        }
        let mut out = vec![0u8; len];
        match self.0.engine.borrow().as_ref() {
            Some(engine) => engine.export_keying_material(&mut out, label, context)?,
            None => return Err(TlsError::Closed),
        }
        Ok(out)
    }
}

impl SslHandler {
    /// Sends a TLS 1.3 KeyUpdate(update_requested) now (OpenSSL's `SSL_key_update`): this
    /// side's send key moves on, writes not yet flushed are sealed under the next key, and
    /// the peer answers with its own KeyUpdate. `ctx` is this handler's context. Fails before
    /// the handshake completed, after the close, and on TLS 1.2.
    pub fn request_key_update(&self, ctx: &ChannelHandlerContext) -> Result<(), TlsError> {
        if self.0.phase.get() != Phase::Done || self.0.close_sent.get() {
            return Err(TlsError::InvalidState(
                "a KeyUpdate needs a completed handshake and an open connection".into(),
            ));
        }
        match self.0.engine.borrow_mut().as_mut() {
            Some(engine) => engine.request_key_update()?,
            None => return Err(TlsError::Closed),
        }
        self.0.send_records(ctx);
        Ok(())
    }
}

impl State {
    /// Writes and flushes whatever records the session has to send (handshake, alerts,
    /// tickets, close_notify).
    fn send_records(&self, ctx: &ChannelHandlerContext) {
        let out = self
            .engine
            .borrow_mut()
            .as_mut()
            .and_then(Engine::take_records);
        if let Some(records) = out {
            ctx.write_with(records, ChannelPromise::void());
            ctx.flush();
        }
    }

    fn on_read(self: &Rc<Self>, ctx: &ChannelHandlerContext, data: Bytes) {
        if self.phase.get() == Phase::Idle {
            self.start(ctx);
        }
        if !matches!(self.phase.get(), Phase::Handshaking | Phase::Done) {
            return;
        }
        if self.hello.borrow().is_some() {
            return self.on_hello(ctx, data);
        }
        let result = match self.engine.borrow_mut().as_mut() {
            Some(engine) => engine.feed(data),
            None => return,
        };
        let Fed {
            plain,
            handshaking,
            peer_closed,
        } = match result {
            Ok(fed) => fed,
            Err(e) => {
                self.send_records(ctx);
                self.fail(ctx, e);
                return;
            }
        };
        if self.phase.get() == Phase::Handshaking && !handshaking {
            self.handshake_finished(ctx);
        }
        self.send_records(ctx);
        let auto = ctx.try_channel().is_some_and(|ch| ch.is_auto_read());
        if !plain.is_empty() && ((!auto && !self.app_read.get()) || self.judging()) {
            self.parked.borrow_mut().extend_from_slice(&plain);
        } else if !plain.is_empty() {
            self.fired_read.set(true);
            self.app_read.set(false);
            ctx.fire_channel_read(plain);
        }
        if peer_closed && self.phase.get() == Phase::Done {
            ctx.fire_user_event(SslCloseCompletionEvent);
            self.peer_ended(ctx);
        }
    }

    fn send_close_notify(&self, ctx: &ChannelHandlerContext) {
        if !self.close_sent.replace(true) {
            if let Some(engine) = self.engine.borrow_mut().as_mut() {
                engine.send_close_notify();
            }
            self.send_records(ctx);
        }
    }
}

impl ChannelHandler for SslHandler {
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn handler_added(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if ctx.try_channel().is_some_and(|ch| ch.is_active()) {
            self.0.start(ctx);
        }
        Ok(())
    }

    fn handler_removed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.0.cancel_timeout();
        self.0.forget_hello();
        if self.0.phase.get() != Phase::Done {
            self.0.handshake.try_failure(TlsError::Closed);
        }
        self.0.fail_held(ctx, TransportError::ChannelClosed);
        Ok(())
    }

    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.0.start(ctx);
        ctx.fire_channel_active();
        Ok(())
    }

    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        let s = &self.0;
        s.cancel_timeout();
        let was = s.phase.replace(Phase::Finished);
        let asking = s.forget_hello();
        s.fail_held(ctx, TransportError::ChannelClosed);
        if matches!(was, Phase::Handshaking | Phase::Idle)
            && (asking || s.engine.borrow().is_some())
        {
            let e = TlsError::ClosedDuringHandshake;
            s.handshake.try_failure(e.clone());
            ctx.fire_user_event(SslHandshakeCompletionEvent(Err(e)));
        }
        ctx.fire_channel_inactive();
        Ok(())
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        match msg.into_bytes() {
            Ok(bytes) => self.0.on_read(ctx, bytes),
            Err(other) => ctx.fire_channel_read(other),
        }
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        let s = &self.0;
        let auto = ctx.try_channel().is_some_and(|ch| ch.is_auto_read());
        if s.fired_read.replace(false) {
            ctx.fire_channel_read_complete();
        }
        if !auto {
            // The handshake reads what it needs; a read the application asked for goes on
            // until it yields plaintext. Nothing else is read while autoRead is off.
            match s.phase.get() {
                Phase::Handshaking => ctx.read(),
                Phase::Done if s.app_read.get() => ctx.read(),
                _ => {}
            }
        }
        Ok(())
    }

    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        self.0.hold(ctx, msg, promise);
        Ok(())
    }

    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        match self.0.phase.get() {
            Phase::Idle | Phase::Handshaking => self.0.flush_held.set(true),
            Phase::Done => {
                self.0.encrypt_held(ctx);
                ctx.flush();
            }
            Phase::Finished => ctx.flush(),
        }
        Ok(())
    }

    /// Passes the event on first (so the handlers behind see the changes in order), then lets
    /// a region that waited for room go on.
    fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_writability_changed();
        if ctx.try_channel().is_some_and(|ch| ch.is_writable()) {
            self.0.resume(ctx);
        }
        Ok(())
    }

    fn read(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        // While the server is judged, what it sent stays kept (server_identity.rs).
        let parked = if self.0.judging() {
            BytesMut::new()
        } else {
            std::mem::take(&mut *self.0.parked.borrow_mut())
        };
        if !parked.is_empty() {
            ctx.fire_channel_read(parked.freeze());
            ctx.fire_channel_read_complete();
            return Ok(());
        }
        self.0.app_read.set(true);
        ctx.read();
        Ok(())
    }

    fn shutdown_output(
        &self,
        ctx: &ChannelHandlerContext,
        promise: ChannelPromise,
    ) -> HandlerResult {
        self.0.shutdown_output(ctx, promise);
        Ok(())
    }

    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        if event.is::<ChannelInputShutdown>() && self.0.swallows_input_shutdown() {
            return Ok(()); // the peer's close_notify was this end of input, reported then
        }
        ctx.fire_user_event_triggered(event);
        Ok(())
    }

    fn close(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        let s = &self.0;
        if s.phase.get() == Phase::Done {
            s.encrypt_held(ctx);
        }
        s.send_close_notify(ctx);
        if s.phase.get() != Phase::Done {
            s.fail_held(ctx, TransportError::ChannelClosed);
        }
        ctx.close_with(promise);
        Ok(())
    }
}

impl std::fmt::Debug for SslHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SslHandler")
            .field("handshake_done", &self.is_handshake_done())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every connection carries a `State`; what only some connections use (the server-name
    /// stage, the engine's modes) is boxed or kept out, so idle TLS memory stays bounded (the
    /// inline rustls `Acceptor` of the SNI stage added 1.2 KB to every connection once).
    #[test]
    fn a_handler_state_carries_nothing_large_inline_beside_its_engine() {
        let engine = std::mem::size_of::<RefCell<Option<Engine>>>();
        let rest = std::mem::size_of::<State>() - engine;
        assert!(rest <= 512, "State holds {rest} bytes beside its engine");
    }
}
