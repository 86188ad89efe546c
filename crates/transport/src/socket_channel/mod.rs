//! TCP stream channels: connect with timeout, the read loop with adaptive sizing, gathering
//! writes with the write-spin budget, write interest only while bytes remain, half-closure.
//!
//! Ground rules: loop thread only. Readiness is edge-triggered (mio), so the channel remembers
//! whether the socket may still hold data (`readable_hint`) when it stops reading before
//! `WouldBlock` (autoRead off, `maxMessagesPerRead` reached) and resumes with a loop task when
//! a read is asked for. Ready keys are processed in Netty's order: finish connect (dropping
//! connect interest), then flush, then read. A pending socket error (ERR) closes the channel.

use std::cell::{Cell, RefCell};
use std::io;
use std::net::SocketAddr;
use std::rc::{Rc, Weak};
use std::sync::Arc;

use mio::net::TcpStream;
use mio::Interest;
use netloop_eventloop::{LocalLoop, Readiness, ScheduledHandle};
use socket2::SockRef;

mod connector;
mod half_close;
mod reader;
pub(crate) use reader::DRAIN_PROBE;
mod writer;

use crate::channel::{Channel, ChannelInner, ChannelIo};
use crate::error::TransportError;
use crate::handle::ChannelHandle;
use crate::message::Message;
use crate::options::{apply_socket_option, ChannelOption, ChannelOptions};
use crate::promise::ChannelPromise;
use crate::recv_allocator::AdaptiveRecvAllocator;
use crate::server_channel::AcceptedSocket;

/// User event fired when the peer shut its output down and `allow_half_closure` is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelInputShutdown;

/// Most slices handed to one `writev`.
const MAX_IOV: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Unconnected,
    Connecting,
    Connected,
    Closed,
}

pub(crate) struct SocketIo {
    stream: RefCell<Option<TcpStream>>,
    token: Cell<Option<mio::Token>>,
    interest: Cell<Option<Interest>>,
    state: Cell<State>,
    want_write: Cell<bool>,
    alloc: RefCell<AdaptiveRecvAllocator>,
    readable_hint: Cell<bool>,
    read_scheduled: Cell<bool>,
    flush_scheduled: Cell<bool>,
    input_shutdown: Cell<bool>,
    /// The FIN went out.
    output_shutdown: Cell<bool>,
    /// `shutdown_output` was asked for: writes are refused, the FIN waits for the flushed
    /// output (see `half_close`).
    shutdown_requested: Cell<bool>,
    /// What few connections need (see `Rare`), made on first need.
    rare: RefCell<Option<Box<Rare>>>,
    local_addr: Cell<Option<SocketAddr>>,
    remote_addr: Cell<Option<SocketAddr>>,
    write_calls: Cell<u64>,
    read_calls: Cell<u64>,
    /// The peer's FIN was reported (RDHUP): read until EOF even after a short read.
    peer_closed: Cell<bool>,
}

/// What few connections need, boxed apart so that an idle accepted connection carries none of
/// it (docs/decisions/0017-websocket.md, "Memory per idle connection").
#[derive(Default)]
struct Rare {
    /// A client's connect under way, and its timeout.
    connect_promise: Option<ChannelPromise>,
    connect_timer: Option<ScheduledHandle>,
    /// A write failed; the close waits for one read of what the peer sent before (writer.rs).
    write_error: Option<TransportError>,
    /// `shutdown_output` promises waiting for the FIN (half_close.rs).
    shutdown_waiters: Vec<ChannelPromise>,
}

impl SocketIo {
    /// The rare state, made on first need (no other borrow of it may be held).
    fn rare(&self) -> std::cell::RefMut<'_, Rare> {
        std::cell::RefMut::map(self.rare.borrow_mut(), |r| {
            &mut **r.get_or_insert_with(Box::default)
        })
    }

    /// `f` over the rare state if there is one (without making it).
    fn rare_take<T>(&self, f: impl FnOnce(&mut Rare) -> Option<T>) -> Option<T> {
        self.rare.borrow_mut().as_deref_mut().and_then(f)
    }

    /// Frees the rare state once it holds nothing (a client's connect finished).
    fn tidy_rare(&self) {
        let mut r = self.rare.borrow_mut();
        if r.as_deref().is_some_and(|x| {
            x.connect_promise.is_none()
                && x.connect_timer.is_none()
                && x.write_error.is_none()
                && x.shutdown_waiters.is_empty()
        }) {
            *r = None;
        }
    }

    fn has_write_error(&self) -> bool {
        self.rare
            .borrow()
            .as_deref()
            .is_some_and(|r| r.write_error.is_some())
    }

    fn take_shutdown_waiters(&self) -> Vec<ChannelPromise> {
        self.rare_take(|r| Some(std::mem::take(&mut r.shutdown_waiters)))
            .unwrap_or_default()
    }
}

/// Constructors of TCP stream channels.
pub struct SocketChannel;

impl SocketChannel {
    /// A client channel on the calling thread's loop `local`, not yet registered or connected.
    pub fn open(local: &Rc<LocalLoop>, options: ChannelOptions) -> Channel {
        let io = SocketIo::new(&options, None, State::Unconnected, None);
        Channel::create(local, Arc::new(options), None, Box::new(io))
    }

    /// A channel for an accepted connection (already connected, not yet registered). Pass the
    /// server's child options and its handle as one `Arc` each to share them between its
    /// connections.
    pub fn accepted(
        local: &Rc<LocalLoop>,
        stream: TcpStream,
        remote: SocketAddr,
        options: impl Into<Arc<ChannelOptions>>,
        parent: Option<Arc<ChannelHandle>>,
    ) -> Channel {
        let options = options.into();
        if let Err(e) = options.apply_to_stream(SockRef::from(&stream)) {
            netloop_eventloop::log::warn(&format!(
                "netloop: could not apply options to an accepted socket: {e}"
            ));
        }
        let io = SocketIo::new(&options, Some(stream), State::Connected, Some(remote));
        Channel::create(local, options, parent, Box::new(io))
    }

    /// The channel of a socket a server channel accepted: as [`SocketChannel::accepted`],
    /// and the channel holds the socket's place in its server's connection count until it
    /// closes (dropped unregistered, it frees it too).
    pub fn accepted_socket(
        local: &Rc<LocalLoop>,
        socket: AcceptedSocket,
        options: impl Into<Arc<ChannelOptions>>,
        parent: Option<Arc<ChannelHandle>>,
    ) -> Channel {
        let AcceptedSocket {
            stream,
            remote,
            permit,
        } = socket;
        let ch = Self::accepted(local, stream, remote, options, parent);
        *ch.0.permit.borrow_mut() = Some(permit);
        ch
    }

    /// How many read system calls this stream channel made (to observe short-read handling).
    pub fn read_calls(ch: &Channel) -> Option<u64> {
        ch.0.io
            .as_any()
            .downcast_ref::<SocketIo>()
            .map(|io| io.read_calls.get())
    }

    /// How many write system calls this stream channel made (to observe `writeSpinCount`).
    pub fn write_calls(ch: &Channel) -> Option<u64> {
        ch.0.io
            .as_any()
            .downcast_ref::<SocketIo>()
            .map(|io| io.write_calls.get())
    }
}

fn loop_of(ch: &Channel) -> io::Result<Rc<LocalLoop>> {
    ch.local_loop()
        .ok_or_else(|| io::Error::other("the channel's event loop is gone"))
}

impl SocketIo {
    fn new(
        options: &ChannelOptions,
        stream: Option<TcpStream>,
        state: State,
        remote: Option<SocketAddr>,
    ) -> Self {
        let local = stream.as_ref().and_then(|s| s.local_addr().ok());
        SocketIo {
            stream: RefCell::new(stream),
            token: Cell::new(None),
            interest: Cell::new(None),
            state: Cell::new(state),
            want_write: Cell::new(false),
            alloc: RefCell::new(AdaptiveRecvAllocator::new(options.recv_sizing)),
            readable_hint: Cell::new(false),
            read_scheduled: Cell::new(false),
            flush_scheduled: Cell::new(false),
            input_shutdown: Cell::new(false),
            output_shutdown: Cell::new(false),
            shutdown_requested: Cell::new(false),
            rare: RefCell::new(None),
            local_addr: Cell::new(local),
            remote_addr: Cell::new(remote),
            write_calls: Cell::new(0),
            read_calls: Cell::new(0),
            peer_closed: Cell::new(false),
        }
    }

    fn wanted_interest(&self) -> Interest {
        match self.state.get() {
            State::Connecting => Interest::WRITABLE,
            _ if self.want_write.get() => Interest::READABLE | Interest::WRITABLE,
            _ => Interest::READABLE,
        }
    }

    /// Registers the stream, or updates its interest if it changed.
    fn sync_interest(&self, ch: &Channel) -> io::Result<()> {
        let want = self.wanted_interest();
        let mut guard = self.stream.borrow_mut();
        let Some(stream) = guard.as_mut() else {
            return Ok(());
        };
        match self.token.get() {
            None => {
                let lp = loop_of(ch)?;
                let t = lp.register(stream, want, ch.io_handler())?;
                self.token.set(Some(t));
            }
            Some(t) if self.interest.get() != Some(want) => {
                loop_of(ch)?.reregister(stream, t, want)?
            }
            Some(_) => return Ok(()),
        }
        self.interest.set(Some(want));
        Ok(())
    }

    fn set_want_write(&self, ch: &Channel, v: bool) {
        if self.want_write.replace(v) != v {
            if let Err(e) = self.sync_interest(ch) {
                self.fail_and_close(ch, e.into());
            }
        }
    }

    /// An I/O error ends the channel: `exception_caught`, then a close that keeps `e` as the
    /// close cause (operations on the closed channel fail with it as their cause).
    fn fail_and_close(&self, ch: &Channel, e: TransportError) {
        ch.pipeline().fire_exception_caught(e.clone());
        ch.close_with_cause(ChannelPromise::void(), Some(e));
    }
}

fn upgrade(weak: &Weak<ChannelInner>) -> Option<Channel> {
    weak.upgrade().map(Channel::from_inner)
}

impl ChannelIo for SocketIo {
    fn is_active(&self) -> bool {
        self.state.get() == State::Connected
    }
    fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr.get()
    }
    fn remote_addr(&self) -> Option<SocketAddr> {
        self.remote_addr.get()
    }

    fn do_register(&self, ch: &Channel) -> Result<(), TransportError> {
        // An unconnected socket is registered by connect: epoll reports HUP for it.
        if self.state.get() == State::Connected {
            self.sync_interest(ch)?;
        }
        Ok(())
    }

    fn do_deregister(&self, ch: &Channel) {
        if let (Some(t), Some(stream)) = (self.token.take(), self.stream.borrow_mut().as_mut()) {
            if let Ok(lp) = loop_of(ch) {
                let _ = lp.deregister(stream, t);
            }
        }
        self.interest.set(None);
    }

    fn do_bind(&self, _: &Channel, _: SocketAddr) -> Result<(), TransportError> {
        Err(TransportError::UnsupportedOperation(
            "bind a client channel: pass a local address to connect",
        ))
    }

    fn do_connect(
        &self,
        ch: &Channel,
        remote: SocketAddr,
        local: Option<SocketAddr>,
        promise: ChannelPromise,
    ) {
        self.connect(ch, remote, local, promise);
    }

    fn do_begin_read(&self, ch: &Channel) {
        self.begin_read(ch);
    }

    fn do_write(&self, ch: &Channel) {
        self.write(ch);
    }

    fn write_now(&self, data: &[u8]) -> Option<std::io::Result<usize>> {
        self.write_direct(data)
    }

    fn is_flush_pending(&self) -> bool {
        self.want_write.get()
    }

    fn broken_by(&self) -> Option<TransportError> {
        if let Some(e) = self.rare_take(|r| r.write_error.clone()) {
            return Some(e);
        }
        let stream = self.stream.borrow();
        match stream.as_ref()?.take_error() {
            Ok(Some(e)) => Some(e.into()),
            _ => None,
        }
    }

    fn do_close(&self, ch: &Channel) {
        self.state.set(State::Closed);
        if let Some(t) = self.rare_take(|r| r.connect_timer.take()) {
            t.cancel();
        }
        let pending_connect = self.rare_take(|r| r.connect_promise.take());
        if let Some(mut stream) = self.stream.borrow_mut().take() {
            if let Some(t) = self.token.take() {
                if let Ok(lp) = loop_of(ch) {
                    let _ = lp.deregister(&mut stream, t);
                }
            }
        }
        if let Some(p) = pending_connect {
            p.try_failure(TransportError::ChannelClosed);
        }
        self.fail_shutdown_waiters(&ch.closed_error());
    }

    fn filter_outbound(&self, msg: Message) -> Result<Message, TransportError> {
        match msg {
            Message::Bytes(_) | Message::File(_) => Ok(msg),
            Message::User(_) => Err(TransportError::UnsupportedMessage(
                "a socket channel writes bytes and file regions only",
            )),
        }
    }

    fn ready(&self, ch: &Channel, r: Readiness) {
        if self.state.get() == State::Connecting {
            if r.writable || r.error || r.write_closed || r.read_closed {
                self.finish_connect(ch);
            }
            if self.state.get() != State::Connected {
                return;
            }
        }
        if self.state.get() != State::Connected {
            return;
        }
        if r.error {
            // What the peer sent before the error (a reset) is still readable, and is often
            // the reason for it: read it first, as libuv does on POLLERR; the read that meets
            // the error closes the channel. Not with autoRead off (the application reads).
            if r.readable && ch.is_auto_read() && !self.input_shutdown.get() {
                self.read_ready(ch);
                if self.state.get() != State::Connected {
                    return;
                }
            }
            let err = self
                .stream
                .borrow()
                .as_ref()
                .and_then(|s| s.take_error().ok().flatten());
            if let Some(e) = err {
                self.fail_and_close(ch, e.into());
                return;
            }
        }
        if r.writable && self.want_write.get() {
            ch.force_flush();
        }
        if r.read_closed {
            self.peer_closed.set(true);
        }
        if r.readable || r.read_closed {
            self.read_ready(ch);
        }
    }

    fn reregister(
        &self,
        old: &mio::Registry,
        new: &mio::Registry,
        token: mio::Token,
    ) -> io::Result<()> {
        let mut guard = self.stream.borrow_mut();
        match (guard.as_mut(), self.interest.get()) {
            (Some(s), Some(i)) => netloop_eventloop::move_source(s, old, new, token, i),
            _ => Ok(()),
        }
    }

    fn apply_option(&self, opt: &ChannelOption) -> io::Result<()> {
        match self.stream.borrow().as_ref() {
            Some(s) => apply_socket_option(SockRef::from(s), opt),
            None => Ok(()),
        }
    }

    fn shutdown_output(&self, ch: &Channel, promise: ChannelPromise) {
        self.request_shutdown_output(ch, promise);
    }

    fn is_output_shutdown(&self) -> bool {
        self.shutdown_requested.get() || self.output_shutdown.get()
    }

    #[cfg(unix)]
    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.stream.borrow().as_ref().map(|s| s.as_raw_fd())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl std::fmt::Debug for SocketChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SocketChannel")
    }
}
