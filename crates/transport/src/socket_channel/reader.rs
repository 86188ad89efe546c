//! The read side of a stream channel: the read loop (adaptive sizing, maxMessagesPerRead,
//! maxBytesPerRead, autoRead and explicit reads), end of input and half-closure.
//!
//! Ground rules: loop thread only; see the parent module for the edge-triggered rules.

use std::io;

use socket2::SockRef;

use super::{ChannelInputShutdown, SocketIo, State};
use crate::channel::Channel;
use crate::message::Message;
use crate::promise::ChannelPromise;

/// Smallest read asked of the socket (Netty's initial receive size).
const MIN_READ: usize = 2048;

/// Room asked beyond the largest read the channel's sizing allows, when that maximum is at
/// least `PROBED_FROM` (the default, 64 KiB, is). A read that fills exactly what it asked for
/// cannot tell a drained socket from one with more waiting, so a peer that keeps exactly the
/// maximum in flight (a writer with a 64 KiB window) cost a `WouldBlock` read after each full
/// one; with this much more asked, such a read comes back short and proves the socket drained.
/// A smaller maximum is a deliberate bound on each read and stays exact.
pub(crate) const DRAIN_PROBE: usize = 1024;

/// Smallest sizing maximum that gets the drain probe.
const PROBED_FROM: usize = 64 * 1024;

impl SocketIo {
    pub(super) fn read_ready(&self, ch: &Channel) {
        if self.input_shutdown.get() || self.state.get() != State::Connected {
            return;
        }
        if !ch.is_auto_read() && !ch.0.read_pending.get() {
            self.readable_hint.set(true);
            return;
        }
        let (max, max_bytes) = ch.with_options(|o| (o.max_messages_per_read, o.max_bytes_per_read));
        let pipeline = ch.pipeline();
        let (mut messages, mut total) = (0u32, 0usize);
        let mut eof = false;
        let mut error = None;
        loop {
            // Never ask for less than MIN_READ (unless the configured maximum is smaller): reads
            // land in the thread's chunk, so asking for more costs no memory, and a small guess
            // that a message fills exactly would look like more is waiting (one wasted read
            // per message).
            let (guess, maximum) = {
                let a = self.alloc.borrow();
                let probe = if a.maximum() >= PROBED_FROM {
                    DRAIN_PROBE
                } else {
                    0
                };
                (
                    a.guess().max(MIN_READ.min(a.maximum())),
                    a.maximum() + probe,
                )
            };
            let result = {
                let guard = self.stream.borrow();
                let Some(stream) = guard.as_ref() else { break };
                self.read_calls.set(self.read_calls.get() + 1);
                // At least the guess, and whatever more the chunk has room for (up to the
                // configured maximum and the probe): a short read then proves the socket
                // drained.
                crate::chunk::recv_up_to(SockRef::from(stream), guess, maximum)
            };
            match result {
                Ok((chunk, _)) if chunk.is_empty() => {
                    eof = true;
                    break;
                }
                Ok((chunk, asked)) => {
                    let n = chunk.len();
                    if n >= guess {
                        self.alloc.borrow_mut().record(n);
                    }
                    total += n;
                    messages += 1;
                    ch.0.read_pending.set(false);
                    pipeline.fire_channel_read(Message::Bytes(chunk));
                    if !ch.is_open() || self.input_shutdown.get() {
                        break;
                    }
                    // A short read drained the socket: with edge-triggered readiness, new
                    // data brings a new event, so reading again would only see WouldBlock
                    // (one wasted system call per message). Unless the peer's FIN came: then
                    // read on to see the end of input, which brings no new event.
                    if n < asked && !self.peer_closed.get() {
                        self.readable_hint.set(false);
                        break;
                    }
                    // The batch's limits, after the drain test: a drained socket needs no
                    // later read.
                    if !ch.is_auto_read()
                        || messages >= max
                        || (max_bytes > 0 && total >= max_bytes)
                    {
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
        } else if ch.0.read_pending.get() && ch.is_open() {
            // A `read()` asked for during this batch (autoRead off) must not be lost: the
            // data left in the socket sends no new edge, so read again in a later task.
            self.begin_read(ch);
        }
    }

    /// The peer shut its output down (EOF).
    pub(super) fn input_closed(&self, ch: &Channel) {
        self.readable_hint.set(false);
        if !ch.with_options(|o| o.allow_half_closure) {
            // Through the pipeline, as Netty's closeOnRead: outbound handlers see the close
            // after the reads before it.
            ch.pipeline().close_with(ChannelPromise::void());
            return;
        }
        if self.input_shutdown.replace(true) {
            return;
        }
        if let Some(s) = self.stream.borrow().as_ref() {
            let _ = s.shutdown(std::net::Shutdown::Read);
        }
        ch.pipeline()
            .fire_user_event_triggered(Box::new(ChannelInputShutdown));
        if self.output_shutdown.get() {
            ch.core_close(ChannelPromise::void());
        }
    }

    pub(super) fn begin_read(&self, ch: &Channel) {
        if self.input_shutdown.get()
            || !self.readable_hint.get()
            || self.read_scheduled.replace(true)
        {
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
}
