//! A channel's lifecycle: register → active (bind, connect) → close → inactive → unregistered,
//! and deregistration. Ground rules as in the parent module; close order: pending writes fail
//! (flushed ones first), the close hook runs and the close future completes, then in a later
//! task `channel_inactive` (if it was active) and `channel_unregistered` fire.
//!
//! Every operation first makes its promise uncancellable and does nothing if it was already
//! cancelled (Netty's `if (!promise.setUncancellable()) return`).

use std::net::SocketAddr;
use std::rc::Rc;

use netloop_eventloop::LocalLoop;

use super::outbound::fail_all;
use super::Channel;
use crate::error::TransportError;
use crate::promise::{ChannelFuture, ChannelPromise, LocalListenerExt};

impl Channel {
    /// Registers the channel on its loop: queued `handler_added` callbacks run, then
    /// `channel_registered` fires, then `channel_active` if the channel is already active.
    pub fn register(&self) -> ChannelFuture {
        let p = ChannelPromise::new();
        let f = p.future_or_never();
        self.core_register(p);
        f
    }

    /// The error operations on the closed channel fail with: `ChannelClosed`, carrying the
    /// error that closed the channel as its cause if one did.
    pub(crate) fn closed_error(&self) -> TransportError {
        match self.0.close_cause.borrow().as_ref() {
            Some(c) => TransportError::ClosedBy(std::sync::Arc::new((**c).clone())),
            None => TransportError::ChannelClosed,
        }
    }

    /// The I/O error that closed the channel, if one did (Netty's `initialCloseCause`): a
    /// failed write, or a failed read (ECONNRESET). Operations on the closed channel fail with
    /// `ERR_CHANNEL_CLOSED` and this as [`TransportError::cause`].
    pub fn close_cause(&self) -> Option<TransportError> {
        self.0.close_cause.borrow().as_deref().cloned()
    }

    /// Registers the channel on `local`, another loop of this thread, or its own (Netty's
    /// `eventLoop.register(channel)` after a `deregister`): the channel and its pipeline move
    /// to that loop, `channel_registered` fires again, and an active channel reads on if
    /// `autoRead` is on (`channel_active` fires only on the first registration). Fails with
    /// `UnsupportedOperation` while the channel is registered: deregister first and register
    /// when the deregistration completed. `ChannelHandle`s made before keep sending their
    /// requests through the old loop, which must stay alive for them.
    pub fn register_on(&self, local: &Rc<LocalLoop>) -> ChannelFuture {
        let p = ChannelPromise::new();
        let f = p.future_or_never();
        if self.0.registered.get() {
            p.try_failure(TransportError::UnsupportedOperation(
                "register: already registered",
            ));
            return f;
        }
        self.set_loop(local);
        self.core_register(p);
        f
    }

    pub(crate) fn core_register(&self, promise: ChannelPromise) {
        if !promise.set_uncancellable() {
            return;
        }
        if self.event_loop().is_shutdown() {
            // Netty: the registration task is rejected; close the channel, fail the promise.
            self.close_forcibly();
            promise.try_failure(TransportError::Rejected);
            return;
        }
        if self.0.registered.get() {
            promise.try_failure(TransportError::UnsupportedOperation(
                "register: already registered",
            ));
            return;
        }
        if !self.is_open() {
            promise.try_failure(self.closed_error());
            return;
        }
        if let Err(e) = self.0.io.do_register(self) {
            self.close_forcibly();
            promise.try_failure(e);
            return;
        }
        let first = !self.0.ever_registered.replace(true);
        self.0.registered.set(true);
        self.0.pipeline.on_registered();
        promise.try_success();
        self.0.pipeline.fire_channel_registered();
        if self.is_active() {
            if first {
                self.became_active();
            } else if self.is_auto_read() {
                self.core_begin_read();
            }
        }
    }

    /// The channel became active (connected or bound): fire `channel_active`, and carry out
    /// a read asked for before.
    pub(crate) fn became_active(&self) {
        self.0.pipeline.fire_channel_active();
        if !self.is_auto_read() && self.0.read_pending.get() {
            self.0.io.do_begin_read(self);
        }
    }

    pub(crate) fn core_bind(&self, local: SocketAddr, promise: ChannelPromise) {
        if !promise.set_uncancellable() {
            return;
        }
        if !self.is_open() {
            promise.try_failure(self.closed_error());
            return;
        }
        let was_active = self.is_active();
        if let Err(e) = self.0.io.do_bind(self, local) {
            promise.try_failure(e);
            self.close_if_inactive();
            return;
        }
        if !was_active && self.is_active() {
            let ch = self.clone();
            self.invoke_later(move || ch.became_active());
        }
        promise.try_success();
    }

    pub(crate) fn core_connect(
        &self,
        remote: SocketAddr,
        local: Option<SocketAddr>,
        promise: ChannelPromise,
    ) {
        if !promise.set_uncancellable() {
            return;
        }
        if !self.is_open() {
            promise.try_failure(self.closed_error());
            return;
        }
        self.0.io.do_connect(self, remote, local, promise);
    }

    fn close_if_inactive(&self) {
        if !self.is_active() {
            self.core_close(ChannelPromise::void());
        }
    }

    pub(crate) fn core_close(&self, promise: ChannelPromise) {
        self.close_with_cause(promise, None);
    }

    /// Closes the channel; flushed writes fail with `cause` if given (the write error that
    /// caused the close), everything else with `ChannelClosed`.
    pub(crate) fn close_with_cause(&self, promise: ChannelPromise, cause: Option<TransportError>) {
        if !promise.set_uncancellable() {
            return;
        }
        if self.0.closing.replace(true) {
            if promise.is_void() {
                return;
            }
            self.close_future().add_local_listener(move |_| {
                promise.try_success();
            });
            return;
        }
        let was_active = self.is_active();
        let (flushed, unflushed) = self.0.outbound.borrow_mut().take_all();
        // Flushed writes left when the channel closes for another reason (the peer's FIN, a
        // user's close) fail with what broke the socket, if something did.
        let cause = match cause {
            None if !flushed.is_empty() => self.0.io.broken_by(),
            c => c,
        };
        if let Some(c) = &cause {
            *self.0.close_cause.borrow_mut() = Some(Box::new(c.clone()));
        }
        self.0.io.do_close(self);
        self.0.open.set(false);
        let closed = self.closed_error();
        fail_all(flushed, cause.as_ref().unwrap_or(&closed));
        fail_all(unflushed, &closed);
        self.complete_close_future();
        promise.try_success();
        let ch = self.clone();
        self.invoke_later(move || ch.fire_inactive_and_unregistered(was_active));
    }

    /// The channel is closed (`open` is false): free its place in its server's connection
    /// count, run the close hook, complete the close future if one was made.
    fn complete_close_future(&self) {
        let permit = self.0.permit.borrow_mut().take();
        drop(permit);
        let hook = self.0.close_hook.borrow_mut().take();
        if let Some(hook) = hook {
            hook();
        }
        if let Some(p) = self.0.close_promise.get() {
            p.try_success(());
        }
    }

    /// Sets the one function run (on the loop thread) when the channel is closed, before its
    /// close future completes; replaces any earlier one. For the channel's owner (a binding's
    /// bookkeeping): cheaper than a listener on [`Channel::close_future`], which makes a
    /// promise. Never runs if set after the close.
    pub fn on_close(&self, hook: impl FnOnce() + 'static) {
        if self.0.open.get() {
            *self.0.close_hook.borrow_mut() = Some(Box::new(hook));
        }
    }

    fn fire_inactive_and_unregistered(&self, was_active: bool) {
        if was_active {
            self.0.pipeline.fire_channel_inactive();
        }
        if self.0.registered.replace(false) {
            self.0.pipeline.fire_channel_unregistered();
        }
    }

    /// Closes without events (registration failed).
    fn close_forcibly(&self) {
        self.0.closing.set(true);
        self.0.io.do_close(self);
        self.0.open.set(false);
        let (f, u) = self.0.outbound.borrow_mut().take_all();
        fail_all(f, &TransportError::ChannelClosed);
        fail_all(u, &TransportError::ChannelClosed);
        self.complete_close_future();
    }

    pub(crate) fn core_deregister(&self, promise: ChannelPromise) {
        if !promise.set_uncancellable() {
            return;
        }
        if !self.0.registered.get() {
            promise.try_success();
            return;
        }
        self.0.io.do_deregister(self);
        // Netty: the promise completes in the later task, after `channel_unregistered`, so
        // that its listener can register the channel again.
        let ch = self.clone();
        let done = move || {
            if ch.0.registered.replace(false) {
                ch.0.pipeline.fire_channel_unregistered();
            }
            promise.try_success();
        };
        match self.local_loop() {
            Some(l) if !l.handle().is_shutdown() => l.execute_local(done),
            _ => done(), // no later task will run: finish now
        }
    }
}
