//! The channel core shared by every kind of channel: identity, pipeline, options and the
//! operations users start from the tail. The head's "unsafe" operations live by concept in
//! `lifecycle` (register, bind, connect, close, deregister), `outbound` (write, flush,
//! writability) and `registration` (the selector's entry). What differs per kind (socket,
//! listener, embedded) sits behind [`ChannelIo`].
//!
//! Ground rules:
//! - A channel is created on its loop's thread and never leaves it (`Rc`, `!Send`); other
//!   threads use a [`ChannelHandle`], which turns every request into a loop task.
//! - No `RefCell` borrow is held while a handler or a promise listener runs: operations
//!   collect the promises to complete and the events to fire, release their borrows, then act.
//! - Close order: see `lifecycle`.

use std::cell::{Cell, OnceCell, RefCell};
use std::fmt;
use std::net::SocketAddr;
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use netloop_eventloop::{EventLoop, LocalLoop, Promise};

mod io;
mod lifecycle;
mod outbound;
pub use outbound::WrittenNow;
mod registration;
mod writability;

pub(crate) use io::ChannelIo;
pub(crate) use outbound::fail_all;

use crate::error::TransportError;
use crate::handle::{self, ChannelHandle};
use crate::message::Message;
use crate::options::{ChannelOption, ChannelOptions};
use crate::outbound_buffer::OutboundBuffer;
use crate::pipeline::ChannelPipeline;
use crate::promise::{ChannelFuture, ChannelPromise};
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
    /// The loop the channel is (or will be) registered on: changes only while unregistered
    /// (`register_on`), to another loop of the same thread.
    local: RefCell<Weak<LocalLoop>>,
    event_loop: RefCell<EventLoop>,
    /// Shared with the channels accepted by the same server until one of them changes an
    /// option (copy on write): a connection does not carry its own copy.
    options: RefCell<Arc<ChannelOptions>>,
    /// `autoRead`, kept apart from the shared options: a codec that pauses reading (an HTTP
    /// upgrade, a pipelining limit) turns it off and on again, and a copy of the options for
    /// that would stay with the connection for good.
    auto_read: Cell<bool>,
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
    /// The error that closed the channel, if one did (Netty's `initialCloseCause`); boxed,
    /// as most channels close without one (8 bytes here, not 48).
    close_cause: RefCell<Option<Box<TransportError>>>,
    /// The server's handle, one `Arc` shared by all its children (not a 96-byte copy each).
    parent: Option<Arc<ChannelHandle>>,
    /// An accepted channel's place in its server's connection count, freed at the close.
    pub(crate) permit: RefCell<Option<crate::ConnectionPermit>>,
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
        parent: Option<Arc<ChannelHandle>>,
        io: Box<dyn ChannelIo>,
    ) -> Channel {
        let water = options.write_buffer_water_mark;
        let inner = Rc::new_cyclic(|weak: &Weak<ChannelInner>| ChannelInner {
            id: ChannelId(NEXT_ID.fetch_add(1, Ordering::Relaxed)),
            pipeline: ChannelPipeline::new(weak.clone()),
            io,
            local: RefCell::new(Rc::downgrade(local)),
            event_loop: RefCell::new(local.handle()),
            auto_read: Cell::new(options.auto_read),
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
            permit: RefCell::new(None),
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

    /// The loop the channel is registered on (or was last, or will be).
    pub fn event_loop(&self) -> EventLoop {
        self.0.event_loop.borrow().clone()
    }

    pub(crate) fn local_loop(&self) -> Option<Rc<LocalLoop>> {
        self.0.local.borrow().upgrade()
    }

    /// Moves the unregistered channel to `local` (see `register_on`).
    pub(crate) fn set_loop(&self, local: &Rc<LocalLoop>) {
        *self.0.local.borrow_mut() = Rc::downgrade(local);
        *self.0.event_loop.borrow_mut() = local.handle();
    }

    /// A `Send` handle to this channel for other threads.
    pub fn handle(&self) -> ChannelHandle {
        ChannelHandle::new(self)
    }

    /// The server channel that accepted this one.
    pub fn parent(&self) -> Option<&ChannelHandle> {
        self.0.parent.as_deref()
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
        let mut o = ChannelOptions::clone(&self.0.options.borrow());
        o.auto_read = self.0.auto_read.get();
        o
    }

    pub(crate) fn with_options<R>(&self, f: impl FnOnce(&ChannelOptions) -> R) -> R {
        f(&self.0.options.borrow())
    }

    /// Changes one option of the live channel (socket options take effect at once).
    ///
    /// # Errors
    /// `InvalidOption` for a bad value; an I/O error if the socket refused it.
    pub fn set_option(&self, opt: ChannelOption) -> Result<(), TransportError> {
        let was_auto_read = self.0.auto_read.get();
        if let ChannelOption::AutoRead(on) = opt {
            self.0.auto_read.set(on); // (not a socket option; the shared options stay shared)
        } else {
            Arc::make_mut(&mut self.0.options.borrow_mut()).set(opt.clone())?;
            self.0.io.apply_option(&opt)?;
            let water = self.0.options.borrow().write_buffer_water_mark;
            self.0.outbound.borrow_mut().set_water_mark(water);
        }
        match opt {
            ChannelOption::AutoRead(true) if !was_auto_read => self.read(),
            // Netty's autoReadCleared(): turning autoRead off also withdraws a read already
            // asked for (e.g. the one autoRead asked after the last batch), so no further
            // batch is read until read() is called or autoRead is turned on again.
            ChannelOption::AutoRead(false) if was_auto_read => self.0.read_pending.set(false),
            _ => {}
        }
        Ok(())
    }

    /// True if the channel reads whenever data arrives (the `autoRead` option).
    pub fn is_auto_read(&self) -> bool {
        self.0.auto_read.get()
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
    /// Deregisters the channel from its loop through the whole pipeline (it stays open; see
    /// [`Channel::register_on`]).
    pub fn deregister(&self) -> ChannelFuture {
        self.0.pipeline.deregister()
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

    /// Half-close (Netty's `shutdownOutput`): the FIN goes out once the output flushed so far
    /// is written; reads go on. From now on writes fail with `ERR_OUTPUT_SHUTDOWN`, and so do
    /// the writes still unflushed when the FIN goes out. The future completes when the FIN
    /// went out (`UnsupportedOperation` for channels without a stream socket). Unlike Netty,
    /// which fails the pending writes at once, the flushed output is not lost.
    ///
    /// Unlike Netty's, the request goes through the pipeline from its tail (a handler's
    /// `shutdown_output`), so the handlers that frame the stream end it first: an `SslHandler`
    /// sends close_notify before the FIN, a flush consolidator flushes what it held back.
    pub fn shutdown_output(&self) -> ChannelFuture {
        let p = ChannelPromise::new();
        let f = p.future_or_never();
        self.shutdown_output_with(p);
        f
    }

    /// As [`Channel::shutdown_output`], completing `promise`.
    pub fn shutdown_output_with(&self, promise: ChannelPromise) {
        self.0.pipeline.shutdown_output_with(promise);
    }

    /// The socket's half-close, at the head of the pipeline.
    pub(crate) fn core_shutdown_output(&self, promise: ChannelPromise) {
        self.0.io.shutdown_output(self, promise);
    }

    pub(crate) fn read_if_auto_read(&self) {
        if self.is_auto_read() {
            self.read();
        }
    }

    pub(crate) fn core_begin_read(&self) {
        self.0.read_pending.set(true);
        if self.is_active() {
            self.0.io.do_begin_read(self);
        }
    }

    /// Runs `f` in a later task on this channel's loop (Netty's `invokeLater`).
    pub(crate) fn invoke_later(&self, f: impl FnOnce() + 'static) {
        if let Some(l) = self.local_loop() {
            l.execute_local(f);
        }
    }
}

impl Drop for ChannelInner {
    fn drop(&mut self) {
        handle::untrack(self.id);
    }
}
