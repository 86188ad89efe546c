//! TCP stream channels: connect with timeout, the read loop with adaptive sizing, gathering
//! writes with the write-spin budget, write interest only while bytes remain, half-closure.
//!
//! Ground rules: loop thread only. Readiness is edge-triggered (mio), so the channel remembers
//! whether the socket may still hold data (`readable_hint`) when it stops reading before
//! `WouldBlock` (autoRead off, `maxMessagesPerRead` reached) and resumes with a loop task when
//! a read is asked for. Ready keys are processed in Netty's order: finish connect (dropping
//! connect interest), then flush, then read. A pending socket error (ERR) closes the channel.

use std::cell::{Cell, RefCell};
use std::io::{self, IoSlice, Read, Write};
use std::net::SocketAddr;
use std::rc::{Rc, Weak};

use bytes::BytesMut;
use mio::net::TcpStream;
use mio::Interest;
use netloop_eventloop::{LocalLoop, Readiness, ScheduledHandle};
use socket2::{Domain, Protocol, SockRef, Socket, Type};

use crate::channel::{Channel, ChannelInner, ChannelIo};
use crate::error::TransportError;
use crate::handle::ChannelHandle;
use crate::message::Message;
use crate::options::{apply_socket_option, ChannelOption, ChannelOptions};
use crate::promise::{ChannelPromise, LocalListenerExt};
use crate::recv_allocator::AdaptiveRecvAllocator;

/// User event fired when the peer shut its output down and `allow_half_closure` is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelInputShutdown;

/// Most slices handed to one `writev`.
const MAX_IOV: usize = 64;
/// Receive memory is carved from chunks of this size, so most reads need no allocation.
const READ_CHUNK: usize = 64 * 1024;

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
    connect_promise: RefCell<Option<ChannelPromise>>,
    connect_timer: RefCell<Option<ScheduledHandle>>,
    alloc: RefCell<AdaptiveRecvAllocator>,
    read_buf: RefCell<BytesMut>,
    readable_hint: Cell<bool>,
    read_scheduled: Cell<bool>,
    flush_scheduled: Cell<bool>,
    input_shutdown: Cell<bool>,
    output_shutdown: Cell<bool>,
    local_addr: Cell<Option<SocketAddr>>,
    remote_addr: Cell<Option<SocketAddr>>,
    write_calls: Cell<u64>,
}

/// Constructors of TCP stream channels.
pub struct SocketChannel;

impl SocketChannel {
    /// A client channel on the calling thread's loop `local`, not yet registered or connected.
    pub fn open(local: &Rc<LocalLoop>, options: ChannelOptions) -> Channel {
        let io = SocketIo::new(&options, None, State::Unconnected, None);
        Channel::create(local, options, None, Box::new(io))
    }

    /// A channel for an accepted connection (already connected, not yet registered).
    pub(crate) fn accepted(
        local: &Rc<LocalLoop>,
        stream: TcpStream,
        remote: SocketAddr,
        options: ChannelOptions,
        parent: Option<ChannelHandle>,
    ) -> Channel {
        if let Err(e) = options.apply_to_stream(SockRef::from(&stream)) {
            eprintln!("netloop: could not apply options to an accepted socket: {e}");
        }
        let io = SocketIo::new(&options, Some(stream), State::Connected, Some(remote));
        Channel::create(local, options, parent, Box::new(io))
    }

    /// How many write system calls this stream channel made (to observe `writeSpinCount`).
    pub fn write_calls(ch: &Channel) -> Option<u64> {
        ch.0.io.as_any().downcast_ref::<SocketIo>().map(|io| io.write_calls.get())
    }
}

fn loop_of(ch: &Channel) -> io::Result<Rc<LocalLoop>> {
    ch.local_loop().ok_or_else(|| io::Error::other("the channel's event loop is gone"))
}

impl SocketIo {
    fn new(options: &ChannelOptions, stream: Option<TcpStream>, state: State, remote: Option<SocketAddr>) -> Self {
        let local = stream.as_ref().and_then(|s| s.local_addr().ok());
        SocketIo {
            stream: RefCell::new(stream),
            token: Cell::new(None),
            interest: Cell::new(None),
            state: Cell::new(state),
            want_write: Cell::new(false),
            connect_promise: RefCell::new(None),
            connect_timer: RefCell::new(None),
            alloc: RefCell::new(AdaptiveRecvAllocator::new(options.recv_sizing)),
            read_buf: RefCell::new(BytesMut::new()),
            readable_hint: Cell::new(false),
            read_scheduled: Cell::new(false),
            flush_scheduled: Cell::new(false),
            input_shutdown: Cell::new(false),
            output_shutdown: Cell::new(false),
            local_addr: Cell::new(local),
            remote_addr: Cell::new(remote),
            write_calls: Cell::new(0),
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
        let Some(stream) = guard.as_mut() else { return Ok(()) };
        match self.token.get() {
            None => {
                let lp = loop_of(ch)?;
                let t = lp.register(stream, want, ch.io_handler())?;
                self.token.set(Some(t));
            }
            Some(t) if self.interest.get() != Some(want) => loop_of(ch)?.reregister(stream, t, want)?,
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

    fn fail_and_close(&self, ch: &Channel, e: TransportError) {
        ch.pipeline().fire_exception_caught(e);
        ch.core_close(ChannelPromise::void());
    }

    fn create_socket(&self, ch: &Channel, remote: SocketAddr, local: Option<SocketAddr>) -> io::Result<(Socket, bool)> {
        let socket = Socket::new(Domain::for_address(remote), Type::STREAM, Some(Protocol::TCP))?;
        socket.set_nonblocking(true)?;
        ch.with_options(|o| o.apply_to_stream(SockRef::from(&socket)))?;
        if let Some(l) = local {
            socket.bind(&l.into())?;
        }
        match socket.connect(&remote.into()) {
            Ok(()) => Ok((socket, true)),
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) || e.kind() == io::ErrorKind::WouldBlock => {
                Ok((socket, false))
            }
            Err(e) => Err(e),
        }
    }

    fn finish_connect(&self, ch: &Channel) {
        let result = {
            let guard = self.stream.borrow();
            let Some(stream) = guard.as_ref() else { return };
            match stream.take_error() {
                Ok(Some(e)) | Err(e) => Err(e),
                Ok(None) => match stream.peer_addr() {
                    Ok(a) => Ok(a),
                    Err(e) if e.kind() == io::ErrorKind::NotConnected || e.raw_os_error() == Some(libc::EINPROGRESS) => {
                        return; // spurious wake-up: still connecting
                    }
                    Err(e) => Err(e),
                },
            }
        };
        if let Some(t) = self.connect_timer.borrow_mut().take() {
            t.cancel();
        }
        let promise = self.connect_promise.borrow_mut().take().unwrap_or_default();
        match result {
            Ok(peer) => {
                self.state.set(State::Connected);
                self.remote_addr.set(Some(peer));
                self.local_addr.set(self.stream.borrow().as_ref().and_then(|s| s.local_addr().ok()));
                if let Err(e) = self.sync_interest(ch) {
                    promise.try_failure(e.into());
                    ch.core_close(ChannelPromise::void());
                    return;
                }
                if !promise.is_void() && !promise.try_success() {
                    // Cancelled meanwhile: the listener closes the channel.
                    ch.core_close(ChannelPromise::void());
                    return;
                }
                ch.became_active();
                if ch.0.outbound.borrow().flushed_len() > 0 {
                    ch.flush0();
                }
            }
            Err(e) => {
                promise.try_failure(e.into());
                ch.core_close(ChannelPromise::void());
            }
        }
    }

    fn read_ready(&self, ch: &Channel) {
        if self.input_shutdown.get() || self.state.get() != State::Connected {
            return;
        }
        if !ch.is_auto_read() && !ch.0.read_pending.get() {
            self.readable_hint.set(true);
            return;
        }
        let max = ch.with_options(|o| o.max_messages_per_read);
        let pipeline = ch.pipeline();
        let (mut messages, mut total) = (0u32, 0usize);
        let mut eof = false;
        let mut error = None;
        loop {
            let guess = self.alloc.borrow().guess();
            let result = {
                let guard = self.stream.borrow();
                let Some(stream) = guard.as_ref() else { break };
                let mut buf = self.read_buf.borrow_mut();
                if buf.len() < guess {
                    if buf.capacity() < guess {
                        *buf = BytesMut::zeroed(READ_CHUNK.max(guess));
                    } else {
                        buf.resize(guess, 0);
                    }
                }
                let mut s: &TcpStream = stream;
                s.read(&mut buf[..guess]).map(|n| buf.split_to(n).freeze())
            };
            match result {
                Ok(chunk) if chunk.is_empty() => {
                    eof = true;
                    break;
                }
                Ok(chunk) => {
                    let n = chunk.len();
                    if n == guess {
                        self.alloc.borrow_mut().record(n);
                    }
                    total += n;
                    messages += 1;
                    ch.0.read_pending.set(false);
                    pipeline.fire_channel_read(Message::Bytes(chunk));
                    if !ch.is_open() || self.input_shutdown.get() {
                        break;
                    }
                    if !ch.is_auto_read() || messages >= max {
                        self.readable_hint.set(true);
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable_hint.set(false);
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        if total > 0 {
            self.alloc.borrow_mut().record(total);
        }
        if messages > 0 {
            pipeline.fire_channel_read_complete();
        }
        if let Some(e) = error {
            self.fail_and_close(ch, e.into());
        } else if eof && ch.is_open() {
            self.input_closed(ch);
        }
    }

    /// The peer shut its output down (EOF).
    fn input_closed(&self, ch: &Channel) {
        self.readable_hint.set(false);
        if !ch.with_options(|o| o.allow_half_closure) {
            ch.core_close(ChannelPromise::void());
            return;
        }
        if self.input_shutdown.replace(true) {
            return;
        }
        if let Some(s) = self.stream.borrow().as_ref() {
            let _ = s.shutdown(std::net::Shutdown::Read);
        }
        ch.pipeline().fire_user_event_triggered(Box::new(ChannelInputShutdown));
        if self.output_shutdown.get() {
            ch.core_close(ChannelPromise::void());
        }
    }

    fn schedule_flush(&self, ch: &Channel) {
        if self.flush_scheduled.replace(true) {
            return;
        }
        let c = ch.clone();
        ch.invoke_later(move || {
            if let Some(io) = c.0.io.as_any().downcast_ref::<SocketIo>() {
                io.flush_scheduled.set(false);
            }
            c.flush0();
        });
    }

    /// One `writev` (or `write`) of the flushed front of the outbound buffer.
    fn write_once(&self, ch: &Channel) -> Option<io::Result<usize>> {
        let ob = ch.0.outbound.borrow();
        let mut iov = [IoSlice::new(&[]); MAX_IOV];
        let (n, _) = ob.gather(&mut iov);
        if n == 0 {
            return None;
        }
        let guard = self.stream.borrow();
        let mut s: &TcpStream = guard.as_ref()?;
        self.write_calls.set(self.write_calls.get() + 1);
        Some(if n == 1 { s.write(&iov[0]) } else { s.write_vectored(&iov[..n]) })
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
        Err(TransportError::UnsupportedOperation("bind a client channel: pass a local address to connect"))
    }

    fn do_connect(&self, ch: &Channel, remote: SocketAddr, local: Option<SocketAddr>, promise: ChannelPromise) {
        match self.state.get() {
            State::Unconnected => {}
            State::Closed => {
                promise.try_failure(TransportError::ChannelClosed);
                return;
            }
            _ => {
                promise.try_failure(TransportError::AlreadyConnected);
                return;
            }
        }
        let (socket, connected) = match self.create_socket(ch, remote, local) {
            Ok(s) => s,
            Err(e) => {
                promise.try_failure(e.into());
                ch.core_close(ChannelPromise::void());
                return;
            }
        };
        let std_stream: std::net::TcpStream = socket.into();
        *self.stream.borrow_mut() = Some(TcpStream::from_std(std_stream));
        self.remote_addr.set(Some(remote));
        self.state.set(State::Connecting);
        *self.connect_promise.borrow_mut() = Some(promise.clone());
        if let Err(e) = self.sync_interest(ch) {
            self.connect_promise.borrow_mut().take();
            promise.try_failure(e.into());
            ch.core_close(ChannelPromise::void());
            return;
        }
        if connected {
            self.finish_connect(ch);
            return;
        }
        let weak = Rc::downgrade(&ch.0);
        if let Some(timeout) = ch.with_options(|o| o.connect_timeout) {
            if let Ok(lp) = loop_of(ch) {
                let w = weak.clone();
                let timer = lp.schedule_local(timeout, move || {
                    let Some(ch) = upgrade(&w) else { return };
                    if let Some(io) = ch.0.io.as_any().downcast_ref::<SocketIo>() {
                        let p = io.connect_promise.borrow_mut().take();
                        if let Some(p) = p {
                            p.try_failure(TransportError::ConnectTimeout);
                            ch.core_close(ChannelPromise::void());
                        }
                    }
                });
                *self.connect_timer.borrow_mut() = Some(timer);
            }
        }
        // Cancelling = failing the promise from outside: the channel closes.
        if let Some(f) = promise.future() {
            f.add_local_listener(move |r| {
                if r.is_err() {
                    if let Some(ch) = upgrade(&weak) {
                        ch.core_close(ChannelPromise::void());
                    }
                }
            });
        }
    }

    fn do_begin_read(&self, ch: &Channel) {
        if self.input_shutdown.get() || !self.readable_hint.get() || self.read_scheduled.replace(true) {
            return;
        }
        let c = ch.clone();
        ch.invoke_later(move || {
            if let Some(io) = c.0.io.as_any().downcast_ref::<SocketIo>() {
                io.read_scheduled.set(false);
                if c.is_open() {
                    io.read_ready(&c);
                }
            }
        });
    }

    fn do_write(&self, ch: &Channel) {
        let spins = ch.with_options(|o| o.write_spin_count).max(1);
        let mut done = Vec::new();
        for _ in 0..spins {
            if !ch.is_active() {
                return;
            }
            if ch.0.outbound.borrow().flushed_len() == 0 {
                self.set_want_write(ch, false);
                return;
            }
            match self.write_once(ch) {
                None => {
                    // Only empty messages at the front: complete them.
                    let change = ch.0.outbound.borrow_mut().remove_bytes(0, &mut done);
                    ch.complete_writes(&mut done, change);
                }
                Some(Ok(0)) => {
                    self.set_want_write(ch, true);
                    return;
                }
                Some(Ok(n)) => {
                    let change = ch.0.outbound.borrow_mut().remove_bytes(n, &mut done);
                    ch.complete_writes(&mut done, change);
                }
                Some(Err(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.set_want_write(ch, true);
                    return;
                }
                Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Some(Err(e)) => {
                    ch.close_with_cause(ChannelPromise::void(), Some(e.into()));
                    return;
                }
            }
        }
        // Write budget used up: give other channels a turn, then go on from a task.
        if ch.is_active() && ch.0.outbound.borrow().flushed_len() > 0 {
            self.set_want_write(ch, false);
            self.schedule_flush(ch);
        } else {
            self.set_want_write(ch, false);
        }
    }

    fn is_flush_pending(&self) -> bool {
        self.want_write.get()
    }

    fn do_close(&self, ch: &Channel) {
        self.state.set(State::Closed);
        if let Some(t) = self.connect_timer.borrow_mut().take() {
            t.cancel();
        }
        let pending_connect = self.connect_promise.borrow_mut().take();
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
    }

    fn filter_outbound(&self, msg: Message) -> Result<Message, TransportError> {
        match msg {
            Message::Bytes(_) => Ok(msg),
            Message::User(_) => Err(TransportError::UnsupportedMessage("a socket channel writes bytes only")),
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
            let err = self.stream.borrow().as_ref().and_then(|s| s.take_error().ok().flatten());
            if let Some(e) = err {
                self.fail_and_close(ch, e.into());
                return;
            }
        }
        if r.writable && self.want_write.get() {
            ch.force_flush();
        }
        if r.readable || r.read_closed {
            self.read_ready(ch);
        }
    }

    fn reregister(&self, old: &mio::Registry, new: &mio::Registry, token: mio::Token) -> io::Result<()> {
        let mut guard = self.stream.borrow_mut();
        match (guard.as_mut(), self.interest.get()) {
            (Some(s), Some(i)) => {
                let _ = mio::event::Source::deregister(s, old);
                mio::event::Source::register(s, new, token, i)
            }
            _ => Ok(()),
        }
    }

    fn apply_option(&self, opt: &ChannelOption) -> io::Result<()> {
        match self.stream.borrow().as_ref() {
            Some(s) => apply_socket_option(SockRef::from(s), opt),
            None => Ok(()),
        }
    }

    fn shutdown_output(&self, ch: &Channel) -> Result<(), TransportError> {
        if self.state.get() != State::Connected {
            return Err(TransportError::NotYetConnected);
        }
        if let Some(s) = self.stream.borrow().as_ref() {
            s.shutdown(std::net::Shutdown::Write)?;
        }
        self.output_shutdown.set(true);
        if self.input_shutdown.get() {
            ch.core_close(ChannelPromise::void());
        }
        Ok(())
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
