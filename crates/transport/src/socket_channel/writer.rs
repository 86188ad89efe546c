//! The write side of a stream channel: gathering writes of the flushed entries, the
//! write-spin budget, write interest while bytes remain.
//!
//! Ground rules: loop thread only; see the parent module.

use std::io::{self, IoSlice, Write};

use mio::net::TcpStream;

use super::{SocketIo, State, MAX_IOV};
use crate::channel::Channel;
use crate::error::TransportError;
use crate::promise::ChannelPromise;

impl SocketIo {
    pub(super) fn schedule_flush(&self, ch: &Channel) {
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

    /// One `writev` (or `write`) of the flushed front of the outbound buffer, or one
    /// `sendfile` when a file region is at the front (a file that ended early is an error).
    pub(super) fn write_once(&self, ch: &Channel) -> Option<io::Result<usize>> {
        let ob = ch.0.outbound.borrow();
        let guard = self.stream.borrow();
        let mut s: &TcpStream = guard.as_ref()?;
        if let Some(region) = ob.front_region() {
            self.write_calls.set(self.write_calls.get() + 1);
            return Some(match region.send_to(s, usize::MAX) {
                Ok(0) => Err(region.truncated()),
                r => r,
            });
        }
        if let Some(bytes) = ob.single_flushed_bytes() {
            // One entry of bytes (no file region behind it: it is the only flushed entry):
            // one `write`, without filling a gather array (measured: the array's
            // initialisation was ~180 instructions a message in a 64-byte echo).
            self.write_calls.set(self.write_calls.get() + 1);
            return Some(s.write(bytes));
        }
        let mut iov = [IoSlice::new(&[]); MAX_IOV];
        let (n, _) = ob.gather(&mut iov);
        if n == 0 {
            return None;
        }
        self.write_calls.set(self.write_calls.get() + 1);
        if ob.region_follows_bytes(MAX_IOV) {
            // A file region comes next (an HTTP head, then its file): the kernel holds these
            // bytes for the sendfile that follows at once, instead of sending a short segment.
            return Some(
                socket2::SockRef::from(s).send_vectored_with_flags(&iov[..n], libc::MSG_MORE),
            );
        }
        Some(if n == 1 {
            s.write(&iov[0])
        } else {
            s.write_vectored(&iov[..n])
        })
    }

    /// One `write` of `data`, which is not in the outbound buffer (see
    /// [`Channel::core_write_now`]): `None` unless connected and no write failed before.
    pub(super) fn write_direct(&self, data: &[u8]) -> Option<io::Result<usize>> {
        if self.state.get() != State::Connected || self.has_write_error() {
            return None;
        }
        let guard = self.stream.borrow();
        let mut s: &TcpStream = guard.as_ref()?;
        self.write_calls.set(self.write_calls.get() + 1);
        Some(s.write(data))
    }

    /// A write failed (the peer reset the connection, or shut it: EPIPE). What the peer sent
    /// before may still be in the socket, and is often the reason: an HTTP server's 413 to an
    /// upload it refuses. So the channel reads it through the pipeline before it closes, from a
    /// loop task (a write may run inside a handler's call), as node:net's stream sees a read
    /// that came before a failed write (libuv reads first in a poll turn); Netty closes at once
    /// and loses it. Only with autoRead on: with it off the application decides when to read.
    fn write_failed(&self, ch: &Channel, e: TransportError) {
        if !ch.is_auto_read() || self.input_shutdown.get() || self.has_write_error() {
            ch.close_with_cause(ChannelPromise::void(), Some(e));
            return;
        }
        self.rare().write_error = Some(e);
        self.set_want_write(ch, false);
        let c = ch.clone();
        ch.invoke_later(move || {
            let Some(io) = c.0.io.as_any().downcast_ref::<SocketIo>() else {
                return;
            };
            if c.is_open() {
                // One read batch: up to the channel's limits, until drained, the end of input
                // or a read error (each of which closes the channel itself).
                io.read_ready(&c);
            }
            let cause = io.rare_take(|r| r.write_error.take());
            if c.is_open() {
                c.close_with_cause(ChannelPromise::void(), cause);
            }
        });
    }

    /// Writes the flushed output, then sends a FIN that waits for it to drain.
    pub(super) fn write(&self, ch: &Channel) {
        self.write_spins(ch);
        self.finish_shutdown_if_drained(ch);
    }

    fn write_spins(&self, ch: &Channel) {
        if self.has_write_error() {
            return; // closing: the writes left fail with the close
        }
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
                    self.write_failed(ch, e.into());
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
}
