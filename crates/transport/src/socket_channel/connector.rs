//! Connecting a stream channel: socket creation with the channel's options, the connect
//! timeout, cancellation through the promise, and finishing the connect on readiness.
//!
//! Ground rules: loop thread only; see the parent module.

use std::io;
use std::net::SocketAddr;
use std::rc::Rc;

use mio::net::TcpStream;
use socket2::{Domain, Protocol, SockRef, Socket, Type};

use super::{loop_of, upgrade, SocketIo, State};
use crate::channel::Channel;
use crate::error::TransportError;
use crate::promise::{ChannelPromise, LocalListenerExt};

impl SocketIo {
    pub(super) fn create_socket(
        &self,
        ch: &Channel,
        remote: SocketAddr,
        local: Option<SocketAddr>,
    ) -> io::Result<(Socket, bool)> {
        let socket = Socket::new(
            Domain::for_address(remote),
            Type::STREAM,
            Some(Protocol::TCP),
        )?;
        socket.set_nonblocking(true)?;
        ch.with_options(|o| o.apply_to_stream(SockRef::from(&socket)))?;
        if let Some(l) = local {
            socket.bind(&l.into())?;
        }
        match socket.connect(&remote.into()) {
            Ok(()) => Ok((socket, true)),
            Err(e)
                if crate::sys::is_connect_in_progress(&e)
                    || e.kind() == io::ErrorKind::WouldBlock =>
            {
                Ok((socket, false))
            }
            Err(e) => Err(e),
        }
    }

    pub(super) fn finish_connect(&self, ch: &Channel) {
        let result = {
            let guard = self.stream.borrow();
            let Some(stream) = guard.as_ref() else { return };
            match stream.take_error() {
                Ok(Some(e)) | Err(e) => Err(e),
                Ok(None) => match stream.peer_addr() {
                    Ok(a) => Ok(a),
                    Err(e)
                        if e.kind() == io::ErrorKind::NotConnected
                            || crate::sys::is_connect_in_progress(&e) =>
                    {
                        return; // spurious wake-up: still connecting
                    }
                    Err(e) => Err(e),
                },
            }
        };
        if let Some(t) = self.rare_take(|r| r.connect_timer.take()) {
            t.cancel();
        }
        let promise = self
            .rare_take(|r| r.connect_promise.take())
            .unwrap_or_default();
        self.tidy_rare();
        match result {
            Ok(peer) => {
                self.state.set(State::Connected);
                self.remote_addr.set(Some(peer));
                self.local_addr.set(
                    self.stream
                        .borrow()
                        .as_ref()
                        .and_then(|s| s.local_addr().ok()),
                );
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

    pub(super) fn connect(
        &self,
        ch: &Channel,
        remote: SocketAddr,
        local: Option<SocketAddr>,
        promise: ChannelPromise,
    ) {
        match self.state.get() {
            State::Unconnected => {}
            State::Closed => {
                promise.try_failure(ch.closed_error());
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
        self.rare().connect_promise = Some(promise.clone());
        if let Err(e) = self.sync_interest(ch) {
            self.rare_take(|r| r.connect_promise.take());
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
                        let p = io.rare_take(|r| r.connect_promise.take());
                        if let Some(p) = p {
                            p.try_failure(TransportError::ConnectTimeout);
                            ch.core_close(ChannelPromise::void());
                        }
                    }
                });
                self.rare().connect_timer = Some(timer);
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
}
