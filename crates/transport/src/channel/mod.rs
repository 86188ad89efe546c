//! The channel core shared by every kind of channel: identity, pipeline, options, outbound
//! buffer, lifecycle (register → active → close → inactive → unregistered) and the "unsafe"
//! operations the pipeline's head calls. What differs per kind (socket, listener, embedded)
//! sits behind [`ChannelIo`].
//!
//! Ground rules:
//! - A channel is created on its loop's thread and never leaves it (`Rc`, `!Send`); other
//!   threads use a [`ChannelHandle`], which turns every request into a loop task.
//! - No `RefCell` borrow is held while a handler or a promise listener runs: operations
//!   collect the promises to complete and the events to fire, release their borrows, then act.
//! - Close order: pending writes fail (flushed ones first), the close future completes, then in
//!   a later task `channel_inactive` (if it was active) and `channel_unregistered` fire.

use std::cell::{Cell, OnceCell, RefCell};
use std::fmt;
use std::net::SocketAddr;
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use netloop_eventloop::{EventLoop, IoHandler, LocalLoop, Promise, Readiness};

mod io;
mod writability;

pub(crate) use io::ChannelIo;

use crate::error::TransportError;
use crate::handle::{self, ChannelHandle};
use crate::message::Message;
use crate::options::{ChannelOption, ChannelOptions};
use crate::outbound_buffer::{OutboundBuffer, WritabilityChange, ENTRY_OVERHEAD};
use crate::pipeline::ChannelPipeline;
use crate::promise::{ChannelFuture, ChannelPromise, LocalListenerExt};
pub(crate) use writability::check_user_index;

/// A process-wide unique channel number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChannelId(pub u64);

impl fmt::Display for ChannelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08x}", self.0)
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) struct ChannelInner {
    id: ChannelId,
    pipeline: ChannelPipeline,
    pub(crate) io: Box<dyn ChannelIo>,
    local: Weak<LocalLoop>,
    event_loop: EventLoop,
    /// Shared with the channels accepted by the same server until one of them changes an
    /// option (copy on write): a connection does not carry its own copy.
    options: RefCell<Arc<ChannelOptions>>,
    pub(crate) outbound: RefCell<OutboundBuffer>,
    registered: Cell<bool>,
    ever_registered: Cell<bool>,
    closing: Cell<bool>,
    open: Cell<bool>,
    in_flush: Cell<bool>,
    /// A read was asked for and not yet carried out (also before the channel is active).
    pub(crate) read_pending: Cell<bool>,
    /// Made when somebody asks for the close future (most channels never do).
    close_promise: OnceCell<Promise<(), TransportError>>,
    /// Runs once when the channel is closed (see [`Channel::on_close`]).
    close_hook: RefCell<Option<Box<dyn FnOnce()>>>,
    /// The error that closed the channel, if one did (Netty's `initialCloseCause`).
    close_cause: RefCell<Option<TransportError>>,
    parent: Option<ChannelHandle>,
}

/// A channel: a socket (or a listener, or an embedded test channel) with its pipeline.
#[derive(Clone)]
pub struct Channel(pub(crate) Rc<ChannelInner>);

impl fmt::Debug for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Channel({}, active: {}, open: {})",
            self.id(),
            self.is_active(),
            self.is_open()
        )
    }
}

impl Channel {
    /// A new channel on the loop `local` (the calling thread's loop).
    pub(crate) fn create(
        local: &Rc<LocalLoop>,
        options: Arc<ChannelOptions>,
        parent: Option<ChannelHandle>,
        io: Box<dyn ChannelIo>,
    ) -> Channel {
        let water = options.write_buffer_water_mark;
        let inner = Rc::new_cyclic(|weak: &Weak<ChannelInner>| ChannelInner {
            id: ChannelId(NEXT_ID.fetch_add(1, Ordering::Relaxed)),
            pipeline: ChannelPipeline::new(weak.clone()),
            io,
            local: Rc::downgrade(local),
            event_loop: local.handle(),
            options: RefCell::new(options),
            outbound: RefCell::new(OutboundBuffer::new(water)),
            registered: Cell::new(false),
            ever_registered: Cell::new(false),
            closing: Cell::new(false),
            open: Cell::new(true),
            in_flush: Cell::new(false),
            read_pending: Cell::new(false),
            close_promise: OnceCell::new(),
            close_hook: RefCell::new(None),
            close_cause: RefCell::new(None),
            parent,
        });
        let ch = Channel(inner);
        handle::track(&ch);
        ch
    }

    pub(crate) fn from_inner(inner: Rc<ChannelInner>) -> Channel {
        Channel(inner)
    }

    /// The channel's process-wide id.
    pub fn id(&self) -> ChannelId {
        self.0.id
    }

    /// The channel's pipeline.
    pub fn pipeline(&self) -> ChannelPipeline {
        self.0.pipeline.clone()
    }

    /// The loop the channel is registered on.
    pub fn event_loop(&self) -> &EventLoop {
        &self.0.event_loop
    }

    pub(crate) fn local_loop(&self) -> Option<Rc<LocalLoop>> {
        self.0.local.upgrade()
    }

    /// A `Send` handle to this channel for other threads.
    pub fn handle(&self) -> ChannelHandle {
        ChannelHandle::new(self)
    }

    /// The server channel that accepted this one.
    pub fn parent(&self) -> Option<&ChannelHandle> {
        self.0.parent.as_ref()
    }

    /// True until the channel is closed.
    pub fn is_open(&self) -> bool {
        self.0.open.get()
    }

    /// True while the channel is registered on its loop.
    pub fn is_registered(&self) -> bool {
        self.0.registered.get()
    }

    /// True while the channel is open and bound or connected.
    pub fn is_active(&self) -> bool {
        self.0.open.get() && self.0.io.is_active()
    }

    /// The local address, once bound or connected.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.0.io.local_addr()
    }

    /// The peer's address, once connected.
    pub fn remote_addr(&self) -> Option<SocketAddr> {
        self.0.io.remote_addr()
    }

    /// The socket's file descriptor, while it has one.
    #[cfg(unix)]
    pub fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        self.0.io.raw_fd()
    }

    /// Completes when the channel is closed.
    pub fn close_future(&self) -> ChannelFuture {
        self.0
            .close_promise
            .get_or_init(|| {
                let p = Promise::new();
                if !self.0.open.get() {
                    p.try_success(());
                }
                p
            })
            .future()
    }

    /// True while a flush waits for the socket to become writable (write interest is set).
    pub fn is_flush_pending(&self) -> bool {
        self.0.io.is_flush_pending()
    }

    /// A snapshot of the channel's options.
    pub fn options(&self) -> ChannelOptions {
        ChannelOptions::clone(&self.0.options.borrow())
    }

    pub(crate) fn with_options<R>(&self, f: impl FnOnce(&ChannelOptions) -> R) -> R {
        f(&self.0.options.borrow())
    }

    /// Changes one option of the live channel (socket options take effect at once).
    ///
    /// # Errors
    /// `InvalidOption` for a bad value; an I/O error if the socket refused it.
    pub fn set_option(&self, opt: ChannelOption) -> Result<(), TransportError> {
        let was_auto_read = self.0.options.borrow().auto_read;
        Arc::make_mut(&mut self.0.options.borrow_mut()).set(opt.clone())?;
        self.0.io.apply_option(&opt)?;
        let water = self.0.options.borrow().write_buffer_water_mark;
        self.0.outbound.borrow_mut().set_water_mark(water);
        if let ChannelOption::AutoRead(true) = opt {
            if !was_auto_read {
                self.read();
            }
        }
        Ok(())
    }

    /// True if the channel reads whenever data arrives (the `autoRead` option).
    pub fn is_auto_read(&self) -> bool {
        self.0.options.borrow().auto_read
    }

    // ---- outbound operations through the pipeline (from the tail) ----

    /// Writes `msg` through the whole pipeline (from the tail), without flushing.
    pub fn write(&self, msg: impl Into<Message>) {
        self.0.pipeline.write(msg);
    }
    /// As [`Channel::write`], completing `promise` with the result.
    pub fn write_with(&self, msg: impl Into<Message>, promise: ChannelPromise) {
        self.0.pipeline.write_with(msg, promise);
    }
    /// As [`Channel::write`], returning the result's future.
    pub fn write_future(&self, msg: impl Into<Message>) -> ChannelFuture {
        self.0.pipeline.write_future(msg)
    }
    /// Writes `msg` through the whole pipeline and flushes.
    pub fn write_and_flush(&self, msg: impl Into<Message>) {
        self.0.pipeline.write_and_flush(msg);
    }
    /// Flushes the written messages through the whole pipeline.
    pub fn flush(&self) {
        self.0.pipeline.flush();
    }
    /// Asks for one read (when `autoRead` is off).
    pub fn read(&self) {
        self.0.pipeline.read();
    }
    /// Closes the channel through the whole pipeline.
    pub fn close(&self) -> ChannelFuture {
        self.0.pipeline.close()
    }
    /// Binds the channel to `local` through the whole pipeline.
    pub fn bind(&self, local: SocketAddr) -> ChannelFuture {
        self.0.pipeline.bind(local)
    }
    /// Connects the channel to `remote` through the whole pipeline.
    pub fn connect(&self, remote: SocketAddr) -> ChannelFuture {
        self.0.pipeline.connect(remote)
    }
    /// Connects the channel to `remote` (from `local` if given), completing `promise`.
    pub fn connect_with(
        &self,
        remote: SocketAddr,
        local: Option<SocketAddr>,
        promise: ChannelPromise,
    ) {
        self.0.pipeline.connect_with(remote, local, promise);
    }

    /// Shuts the output side down (FIN) after flushing nothing more; reads go on.
    ///
    /// # Errors
    /// An I/O error, or `UnsupportedOperation` for channels without a stream socket.
    pub fn shutdown_output(&self) -> Result<(), TransportError> {
        self.0.io.shutdown_output(self)
    }

    // ---- lifecycle ----

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
            Some(c) => TransportError::ClosedBy(std::sync::Arc::new(c.clone())),
            None => TransportError::ChannelClosed,
        }
    }

    pub(crate) fn core_register(&self, promise: ChannelPromise) {
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
            promise.try_failure(TransportError::ChannelClosed);
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

    pub(crate) fn read_if_auto_read(&self) {
        if self.is_auto_read() {
            self.read();
        }
    }

    pub(crate) fn core_bind(&self, local: SocketAddr, promise: ChannelPromise) {
        if !self.is_open() {
            promise.try_failure(TransportError::ChannelClosed);
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
        if !self.is_open() {
            promise.try_failure(TransportError::ChannelClosed);
            return;
        }
        self.0.io.do_connect(self, remote, local, promise);
    }

    fn close_if_inactive(&self) {
        if !self.is_active() {
            self.core_close(ChannelPromise::void());
        }
    }

    pub(crate) fn core_begin_read(&self) {
        self.0.read_pending.set(true);
        if self.is_active() {
            self.0.io.do_begin_read(self);
        }
    }

    pub(crate) fn core_write(&self, msg: Message, promise: ChannelPromise) {
        if self.0.closing.get() || !self.is_open() {
            promise.try_failure(self.closed_error());
            return;
        }
        let msg = match self.0.io.filter_outbound(msg) {
            Ok(m) => m,
            Err(e) => {
                promise.try_failure(e);
                return;
            }
        };
        let size = msg.estimated_size() + ENTRY_OVERHEAD;
        let change = self.0.outbound.borrow_mut().add_message(msg, size, promise);
        self.fire_writability(change);
    }

    pub(crate) fn core_flush(&self) {
        self.0.outbound.borrow_mut().add_flush();
        self.flush0();
    }

    /// Writes what is flushed, unless a flush is running or waits for writability.
    pub(crate) fn flush0(&self) {
        if self.0.in_flush.get() || self.0.outbound.borrow().flushed_len() == 0 {
            return;
        }
        if !self.is_active() {
            let err = if self.is_open() {
                TransportError::NotYetConnected
            } else {
                self.closed_error()
            };
            let failed = self.0.outbound.borrow_mut().take_flushed();
            fail_all(failed, &err);
            let change = self.0.outbound.borrow().writability().recheck_low();
            self.fire_writability(change);
            return;
        }
        if self.0.io.is_flush_pending() {
            return;
        }
        self.0.in_flush.set(true);
        self.0.io.do_write(self);
        self.0.in_flush.set(false);
    }

    /// Writes flushed data now, even if a flush is pending (the socket became writable).
    pub(crate) fn force_flush(&self) {
        if self.0.in_flush.get() {
            return;
        }
        self.0.in_flush.set(true);
        self.0.io.do_write(self);
        self.0.in_flush.set(false);
    }

    pub(crate) fn fire_writability(&self, change: WritabilityChange) {
        if change != WritabilityChange::None {
            self.0.pipeline.fire_channel_writability_changed();
        }
    }

    /// Completes the promises of written entries, then reports a writability change.
    pub(crate) fn complete_writes(
        &self,
        done: &mut Vec<ChannelPromise>,
        change: WritabilityChange,
    ) {
        for p in done.drain(..) {
            p.try_success();
        }
        self.fire_writability(change);
    }

    /// Runs `f` in a later task on this channel's loop (Netty's `invokeLater`).
    pub(crate) fn invoke_later(&self, f: impl FnOnce() + 'static) {
        if let Some(l) = self.local_loop() {
            l.execute_local(f);
        }
    }

    pub(crate) fn core_close(&self, promise: ChannelPromise) {
        self.close_with_cause(promise, None);
    }

    /// Closes the channel; flushed writes fail with `cause` if given (the write error that
    /// caused the close), everything else with `ChannelClosed`.
    pub(crate) fn close_with_cause(&self, promise: ChannelPromise, cause: Option<TransportError>) {
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
        if let Some(c) = &cause {
            *self.0.close_cause.borrow_mut() = Some(c.clone());
        }
        let (flushed, unflushed) = self.0.outbound.borrow_mut().take_all();
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

    /// The channel is closed (`open` is false): run the close hook, complete the close future
    /// if one was made.
    fn complete_close_future(&self) {
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
        if !self.0.registered.get() {
            promise.try_success();
            return;
        }
        self.0.io.do_deregister(self);
        promise.try_success();
        let ch = self.clone();
        self.invoke_later(move || {
            if ch.0.registered.replace(false) {
                ch.0.pipeline.fire_channel_unregistered();
            }
        });
    }

    /// The loop reported readiness for this channel's socket.
    pub(crate) fn ready(&self, readiness: Readiness) {
        self.0.io.ready(self, readiness);
    }

    /// The selector-table entry for this channel.
    pub(crate) fn io_handler(&self) -> Rc<dyn IoHandler> {
        Rc::new(Registration(self.clone()))
    }
}

pub(crate) fn fail_all(promises: Vec<ChannelPromise>, err: &TransportError) {
    for p in promises {
        p.try_failure(err.clone());
    }
}

/// What the loop's selector table holds for a registered channel: a strong reference, so a
/// registered channel lives as long as its registration.
struct Registration(Channel);

impl IoHandler for Registration {
    fn ready(&self, readiness: Readiness) {
        self.0.ready(readiness);
    }
    fn reregister(
        &self,
        old: &mio::Registry,
        new: &mio::Registry,
        token: mio::Token,
    ) -> std::io::Result<()> {
        self.0 .0.io.reregister(old, new, token)
    }
    /// The socket is registered nowhere after a selector rebuild: report it, then close (as
    /// Netty does when re-registering a channel fails).
    fn reregister_failed(&self, error: std::io::Error) {
        self.0.pipeline().fire_exception_caught(error.into());
        self.0.close();
    }
    fn close_on_shutdown(&self) {
        self.0.close();
    }
}

impl Drop for ChannelInner {
    fn drop(&mut self) {
        handle::untrack(self.id);
    }
}
