//! TCP server channels: bind with backlog and SO_REUSEADDR, accept until `WouldBlock`, and
//! fire each accepted socket down the server pipeline as an [`AcceptedSocket`] message (the
//! bootstrap's acceptor hands it to a child loop).
//!
//! Ground rules: loop thread only; edge-triggered like stream channels. Accept errors:
//! transient ones (aborted handshakes, EINTR, EPROTO, …) are skipped; resource exhaustion
//! (EMFILE, ENFILE, ENOBUFS, ENOMEM) is reported to `exception_caught` and the listener stays
//! open; anything else is a programming error (EBADF, EINVAL, ENOTSOCK, …): reported, then
//! the listener closes.
//!
//! Descriptor exhaustion (EMFILE, ENFILE), as libuv does: a bound listener keeps one reserve
//! descriptor (`/dev/null`). When accept runs out of descriptors, the reserve is closed, the
//! pending connections are accepted and closed at once (their clients see the connection
//! closed instead of hanging in the backlog), and the reserve is opened again. Only when that
//! is impossible (or for ENOBUFS/ENOMEM) does accepting pause for a back-off, doubling from
//! 50 ms up to 1 s, that any successful accept resets. The back-off timer holds the channel
//! weakly, so a cancelled timer waiting in the heap keeps no closed channel alive.
//!
//! Connection limit (`max_connections`): every accepted socket carries a permit of the
//! server's count until its channel closes; with the limit reached, a newly accepted socket is
//! closed at once (the client sees the connection closed) and counted as refused, on the
//! channel and on its loop (`EventLoop::refused_connections`).

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use mio::net::{TcpListener, TcpStream};
use mio::Interest;
use netloop_eventloop::{LocalLoop, Readiness, ScheduledHandle};
use socket2::{Domain, Protocol, SockRef, Socket, Type};

use crate::accept_error::{classify, is_fd_exhaustion, AcceptFailure};
use crate::channel::{Channel, ChannelIo};
use crate::connection_limit::{ConnectionCount, ConnectionPermit};
use crate::error::TransportError;
use crate::message::Message;
use crate::options::ChannelOptions;
use crate::promise::ChannelPromise;

/// The message a server channel reads: one accepted connection, not yet a channel.
#[derive(Debug)]
pub struct AcceptedSocket {
    /// The connected socket.
    pub stream: TcpStream,
    /// The peer's address.
    pub remote: SocketAddr,
    /// Its place in the server's connection count: keep it as long as the connection is
    /// open ([`crate::SocketChannel::accepted_socket`] hands it to the channel).
    pub permit: ConnectionPermit,
}

const BACKOFF_MIN: Duration = Duration::from_millis(50);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

pub(crate) struct ServerIo {
    listener: RefCell<Option<TcpListener>>,
    token: Cell<Option<mio::Token>>,
    local_addr: Cell<Option<SocketAddr>>,
    readable_hint: Cell<bool>,
    read_scheduled: Cell<bool>,
    backoff: Cell<Duration>,
    backoff_timer: RefCell<Option<ScheduledHandle>>,
    accept_calls: Cell<u64>,
    /// The reserve descriptor, closed to accept-and-close under EMFILE.
    reserve: RefCell<Option<File>>,
    reserve_enabled: Cell<bool>,
    refused: Cell<u64>,
    connections: ConnectionCount,
    over_limit: Cell<u64>,
}

fn open_reserve() -> Option<File> {
    File::open("/dev/null").ok()
}

/// Constructors and statistics of TCP server channels.
pub struct ServerSocketChannel;

impl ServerSocketChannel {
    /// A server channel on the calling thread's loop `local`, not yet registered or bound.
    pub fn open(local: &Rc<LocalLoop>, options: ChannelOptions) -> Channel {
        let io = ServerIo {
            listener: RefCell::new(None),
            token: Cell::new(None),
            local_addr: Cell::new(None),
            readable_hint: Cell::new(false),
            read_scheduled: Cell::new(false),
            backoff: Cell::new(BACKOFF_MIN),
            backoff_timer: RefCell::new(None),
            accept_calls: Cell::new(0),
            reserve: RefCell::new(None),
            reserve_enabled: Cell::new(true),
            refused: Cell::new(0),
            connections: ConnectionCount::default(),
            over_limit: Cell::new(0),
        };
        Channel::create(local, Arc::new(options), None, Box::new(io))
    }

    /// How many times `accept` was called on this server channel (to show it never spins).
    pub fn accept_calls(ch: &Channel) -> Option<u64> {
        ch.0.io
            .as_any()
            .downcast_ref::<ServerIo>()
            .map(|io| io.accept_calls.get())
    }

    /// Connections accepted and closed at once because descriptors ran out.
    pub fn refused_connections(ch: &Channel) -> Option<u64> {
        io_of(ch).map(|io| io.refused.get())
    }

    /// Connections accepted and closed at once because `max_connections` were open.
    pub fn connections_over_limit(ch: &Channel) -> Option<u64> {
        io_of(ch).map(|io| io.over_limit.get())
    }

    /// Accepted connections open now (their channels are not closed yet).
    pub fn open_connections(ch: &Channel) -> Option<usize> {
        io_of(ch).map(|io| io.connections.open())
    }

    /// The pause the next accept back-off would take (50 ms after any successful accept).
    pub fn next_backoff(ch: &Channel) -> Option<Duration> {
        io_of(ch).map(|io| io.backoff.get())
    }

    /// Tests: keep (the default) or give up the reserve descriptor, to exercise the
    /// back-off path under EMFILE.
    #[doc(hidden)]
    pub fn set_fd_reserve(ch: &Channel, enabled: bool) {
        if let Some(io) = io_of(ch) {
            io.reserve_enabled.set(enabled);
            let reserve = if enabled && io.listener.borrow().is_some() {
                open_reserve()
            } else {
                None
            };
            *io.reserve.borrow_mut() = reserve;
        }
    }
}

fn io_of(ch: &Channel) -> Option<&ServerIo> {
    ch.0.io.as_any().downcast_ref::<ServerIo>()
}

impl ServerIo {
    fn register(&self, ch: &Channel) -> io::Result<()> {
        let mut guard = self.listener.borrow_mut();
        let (Some(l), None) = (guard.as_mut(), self.token.get()) else {
            return Ok(());
        };
        let lp = ch
            .local_loop()
            .ok_or_else(|| io::Error::other("the channel's event loop is gone"))?;
        self.token
            .set(Some(lp.register(l, Interest::READABLE, ch.io_handler())?));
        Ok(())
    }

    fn accept_ready(&self, ch: &Channel) {
        if self.backoff_timer.borrow().is_some() || !ch.is_active() {
            return;
        }
        if !ch.is_auto_read() && !ch.0.read_pending.get() {
            self.readable_hint.set(true);
            return;
        }
        let (max, limit) = ch.with_options(|o| (o.max_messages_per_read, o.max_connections));
        let pipeline = ch.pipeline();
        let mut accepted = 0u32;
        let mut delivered = false;
        let mut failure = None;
        loop {
            self.accept_calls.set(self.accept_calls.get() + 1);
            let result = {
                let guard = self.listener.borrow();
                let Some(l) = guard.as_ref() else { break };
                l.accept()
            };
            match result {
                Ok((stream, remote)) => {
                    accepted += 1;
                    self.backoff.set(BACKOFF_MIN);
                    ch.0.read_pending.set(false);
                    match self.connections.try_acquire(limit) {
                        Some(permit) => {
                            delivered = true;
                            let socket = AcceptedSocket {
                                stream,
                                remote,
                                permit,
                            };
                            pipeline.fire_channel_read(Message::user(socket));
                        }
                        None => {
                            drop(stream); // refused: closed at once
                            self.over_limit.set(self.over_limit.get() + 1);
                            ch.event_loop().record_refused_connection();
                        }
                    }
                    if !ch.is_open() {
                        break;
                    }
                    if !ch.is_auto_read() || accepted >= max {
                        self.readable_hint.set(true);
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable_hint.set(false);
                    self.backoff.set(BACKOFF_MIN);
                    break;
                }
                Err(e) => match classify(&e) {
                    AcceptFailure::Skip => continue,
                    AcceptFailure::BackOff if is_fd_exhaustion(&e) && self.refuse_pending(ch) => {
                        self.readable_hint.set(false);
                        failure = Some((e, false));
                        break;
                    }
                    AcceptFailure::BackOff => {
                        self.readable_hint.set(true);
                        self.start_backoff(ch);
                        failure = Some((e, false));
                        break;
                    }
                    AcceptFailure::Fatal => {
                        failure = Some((e, true));
                        break;
                    }
                },
            }
        }
        if delivered {
            pipeline.fire_channel_read_complete();
        }
        if let Some((e, fatal)) = failure {
            pipeline.fire_exception_caught(e.into());
            if fatal {
                ch.core_close(ChannelPromise::void());
            }
        }
    }

    /// Descriptors ran out: closes the reserve, accepts and closes every pending connection,
    /// reopens the reserve. `true` if the backlog was drained and the reserve is back.
    fn refuse_pending(&self, ch: &Channel) -> bool {
        let Some(reserve) = self.reserve.borrow_mut().take() else {
            return false;
        };
        drop(reserve);
        let drained = loop {
            self.accept_calls.set(self.accept_calls.get() + 1);
            let result = {
                let guard = self.listener.borrow();
                let Some(l) = guard.as_ref() else { break false };
                l.accept()
            };
            match result {
                Ok((stream, _)) => {
                    self.refused.set(self.refused.get() + 1);
                    ch.event_loop().record_refused_connection();
                    drop(stream);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break true,
                Err(e) if matches!(classify(&e), AcceptFailure::Skip) => {}
                Err(_) => break false,
            }
        };
        let reserve = open_reserve();
        let restored = reserve.is_some();
        *self.reserve.borrow_mut() = reserve;
        drained && restored
    }

    /// Pauses accepting, then tries again (the pending connections stay in the backlog and
    /// edge-triggered readiness will not report them again).
    fn start_backoff(&self, ch: &Channel) {
        let Some(lp) = ch.local_loop() else { return };
        let delay = self.backoff.get();
        self.backoff.set((delay * 2).min(BACKOFF_MAX));
        let weak = std::rc::Rc::downgrade(&ch.0);
        let timer = lp.schedule_local(delay, move || {
            let Some(inner) = weak.upgrade() else { return };
            let c = Channel(inner);
            if let Some(io) = io_of(&c) {
                io.backoff_timer.borrow_mut().take();
                if c.is_open() {
                    io.accept_ready(&c);
                }
            }
        });
        *self.backoff_timer.borrow_mut() = Some(timer);
    }
}

impl ChannelIo for ServerIo {
    fn is_active(&self) -> bool {
        self.listener.borrow().is_some()
    }
    fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr.get()
    }
    fn remote_addr(&self) -> Option<SocketAddr> {
        None
    }

    fn do_register(&self, ch: &Channel) -> Result<(), TransportError> {
        Ok(self.register(ch)?)
    }

    fn do_deregister(&self, ch: &Channel) {
        if let (Some(t), Some(l)) = (self.token.take(), self.listener.borrow_mut().as_mut()) {
            if let Some(lp) = ch.local_loop() {
                let _ = lp.deregister(l, t);
            }
        }
    }

    fn do_bind(&self, ch: &Channel, local: SocketAddr) -> Result<(), TransportError> {
        if self.listener.borrow().is_some() {
            return Err(TransportError::UnsupportedOperation("bind: already bound"));
        }
        let socket = Socket::new(
            Domain::for_address(local),
            Type::STREAM,
            Some(Protocol::TCP),
        )?;
        socket.set_nonblocking(true)?;
        let (reuse, reuse_port, backlog) =
            ch.with_options(|o| (o.so_reuseaddr, o.so_reuseport, o.so_backlog));
        socket.set_reuse_address(reuse)?;
        if reuse_port {
            socket.set_reuse_port(true)?;
        }
        ch.with_options(|o| o.apply_buffers(&SockRef::from(&socket)))?;
        socket.bind(&local.into())?;
        socket.listen(backlog)?;
        let std_listener: std::net::TcpListener = socket.into();
        if self.reserve_enabled.get() {
            *self.reserve.borrow_mut() = open_reserve();
        }
        self.local_addr.set(std_listener.local_addr().ok());
        *self.listener.borrow_mut() = Some(TcpListener::from_std(std_listener));
        if ch.is_registered() {
            self.register(ch)?;
        }
        Ok(())
    }

    fn do_connect(
        &self,
        _: &Channel,
        _: SocketAddr,
        _: Option<SocketAddr>,
        promise: ChannelPromise,
    ) {
        promise.try_failure(TransportError::UnsupportedOperation(
            "connect a server channel",
        ));
    }

    fn do_begin_read(&self, ch: &Channel) {
        if !self.readable_hint.get()
            || self.backoff_timer.borrow().is_some()
            || self.read_scheduled.replace(true)
        {
            return;
        }
        let c = ch.clone();
        ch.invoke_later(move || {
            if let Some(io) = io_of(&c) {
                io.read_scheduled.set(false);
                if c.is_open() {
                    io.accept_ready(&c);
                }
            }
        });
    }

    fn do_write(&self, ch: &Channel) {
        let failed = ch.0.outbound.borrow_mut().take_flushed();
        crate::channel::fail_all(
            failed,
            &TransportError::UnsupportedOperation("write to a server channel"),
        );
    }

    fn do_close(&self, ch: &Channel) {
        if let Some(t) = self.backoff_timer.borrow_mut().take() {
            t.cancel();
        }
        let reserve = self.reserve.borrow_mut().take();
        drop(reserve);
        if let Some(mut l) = self.listener.borrow_mut().take() {
            if let (Some(t), Some(lp)) = (self.token.take(), ch.local_loop()) {
                let _ = lp.deregister(&mut l, t);
            }
        }
    }

    fn filter_outbound(&self, _: Message) -> Result<Message, TransportError> {
        Err(TransportError::UnsupportedOperation(
            "write to a server channel",
        ))
    }

    fn ready(&self, ch: &Channel, r: Readiness) {
        if r.readable || r.error || r.read_closed {
            self.accept_ready(ch);
        }
    }

    fn reregister(
        &self,
        old: &mio::Registry,
        new: &mio::Registry,
        token: mio::Token,
    ) -> io::Result<()> {
        match self.listener.borrow_mut().as_mut() {
            Some(l) => netloop_eventloop::move_source(l, old, new, token, Interest::READABLE),
            None => Ok(()),
        }
    }

    #[cfg(unix)]
    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.listener.borrow().as_ref().map(|l| l.as_raw_fd())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl std::fmt::Debug for ServerSocketChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerSocketChannel")
    }
}
