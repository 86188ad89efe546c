//! `ChannelHandle`: a `Send + Sync` reference to a channel, for other threads.
//!
//! Ground rules: every channel is listed, while it exists, in a table local to its loop's
//! thread (by id, weakly). A handle is the channel's id plus its loop; each request becomes a
//! task on that loop which looks the channel up and acts, or runs at once when already there.

use std::net::SocketAddr;

use netloop_eventloop::{EventLoop, Promise};

use crate::channel::{Channel, ChannelId};
use crate::error::TransportError;
use crate::message::Message;
use crate::promise::{ChannelFuture, ChannelPromise};
use crate::thread_context;

/// Lists `ch` in its thread's table (the thread context's `channels`).
pub(crate) fn track(ch: &Channel) {
    thread_context::with(|c| c.track(ch.id(), std::rc::Rc::downgrade(&ch.0)));
}

/// Unlists the channel `id` (it is dropping).
pub(crate) fn untrack(id: ChannelId) {
    thread_context::with(|c| c.untrack(id));
}

/// The channel with this id, if it lives on the calling thread.
fn lookup(id: ChannelId) -> Option<Channel> {
    thread_context::with(|c| c.channel(id)).map(Channel::from_inner)
}

/// A thread-safe reference to a channel.
#[derive(Clone)]
pub struct ChannelHandle {
    id: ChannelId,
    event_loop: EventLoop,
    local_addr: Option<SocketAddr>,
    remote_addr: Option<SocketAddr>,
    close_future: ChannelFuture,
    /// The channel's pending total and writability bits (writes count at submission).
    writability: std::sync::Arc<crate::outbound_buffer::Writability>,
}

impl std::fmt::Debug for ChannelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ChannelHandle({}, local: {:?}, remote: {:?})",
            self.id, self.local_addr, self.remote_addr
        )
    }
}

impl ChannelHandle {
    pub(crate) fn new(ch: &Channel) -> Self {
        ChannelHandle {
            id: ch.id(),
            event_loop: ch.event_loop().clone(),
            local_addr: ch.local_addr(),
            remote_addr: ch.remote_addr(),
            close_future: ch.close_future(),
            writability: ch.0.outbound.borrow().writability(),
        }
    }

    /// The channel's id.
    pub fn id(&self) -> ChannelId {
        self.id
    }

    /// The loop the channel lives on.
    pub fn event_loop(&self) -> &EventLoop {
        &self.event_loop
    }

    /// The local address when the handle was made (a bound server's address).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr
    }

    /// The peer's address, as known when the handle was made.
    pub fn remote_addr(&self) -> Option<SocketAddr> {
        self.remote_addr
    }

    /// Completes when the channel closed.
    pub fn close_future(&self) -> ChannelFuture {
        self.close_future.clone()
    }

    /// Runs `f` with the channel on its loop (now, if called there). `f` does not run if the
    /// channel no longer exists.
    ///
    /// # Errors
    /// `Rejected` if the loop no longer accepts tasks.
    pub fn run(&self, f: impl FnOnce(&Channel) + Send + 'static) -> Result<(), TransportError> {
        self.run_or_missing(move |ch| {
            if let Some(ch) = ch {
                f(ch);
            }
        })
    }

    /// Runs `f` on the channel's loop with the channel, or with `None` if it is gone.
    fn run_or_missing(
        &self,
        f: impl FnOnce(Option<&Channel>) + Send + 'static,
    ) -> Result<(), TransportError> {
        let id = self.id;
        if self.event_loop.in_event_loop() {
            f(lookup(id).as_ref());
            return Ok(());
        }
        self.event_loop.execute(move || f(lookup(id).as_ref()))?;
        Ok(())
    }

    /// Closes the channel; the future completes when it is closed.
    pub fn close(&self) -> ChannelFuture {
        let done = self.close_future.clone();
        if let Err(e) = self.run(|ch| {
            ch.close();
        }) {
            return Promise::completed(Err(e));
        }
        done
    }

    /// True unless the channel's pending bytes (counting writes submitted from other threads
    /// that have not reached the loop yet) are above the high water mark, or a user-defined
    /// writability flag is off. Any thread.
    pub fn is_writable(&self) -> bool {
        self.writability.is_writable()
    }

    /// [`Channel::set_user_defined_writability`] from any thread (Netty's setter is
    /// thread-safe): the flag changes at once; if the combined writability flipped,
    /// `channel_writability_changed` fires on the channel's loop.
    ///
    /// # Errors
    /// `InvalidOption` for an index outside 1..=31; `Rejected` if the loop no longer accepts
    /// tasks (the flag is changed all the same).
    pub fn set_user_defined_writability(
        &self,
        index: u32,
        writable: bool,
    ) -> Result<(), TransportError> {
        crate::channel::check_user_index(index)?;
        let change = self.writability.set_bit(index, writable);
        if change == crate::WritabilityChange::None {
            return Ok(());
        }
        self.run(move |ch| ch.fire_writability(change))
    }

    /// The user-defined writability flag `index` (1..=31; `false` outside that range).
    pub fn user_defined_writability(&self, index: u32) -> bool {
        crate::channel::check_user_index(index).is_ok() && self.writability.bit(index)
    }

    /// The channel's pending outbound bytes, writes still on their way to the loop included.
    pub fn pending_outbound_bytes(&self) -> usize {
        self.writability.pending()
    }

    /// Writes and flushes bytes from any thread. The bytes count towards the channel's
    /// pending total (and writability) at once, not when the loop gets to the write
    /// (Netty's `WriteTask`); a write that makes the channel unwritable fires
    /// `channel_writability_changed` on the loop.
    pub fn write_and_flush(&self, bytes: bytes::Bytes) -> ChannelFuture {
        let p = Promise::new();
        let f = p.future();
        if self.event_loop.in_event_loop() {
            if let Some(ch) = lookup(self.id) {
                ch.write_with(Message::Bytes(bytes), ChannelPromise::from_promise(p));
                ch.flush();
            } else {
                p.try_failure(TransportError::ChannelClosed);
            }
            return f;
        }
        let size = bytes.len() + crate::outbound_buffer::ENTRY_OVERHEAD;
        let became_unwritable =
            self.writability.add(size) == crate::WritabilityChange::BecameUnwritable;
        let p2 = p.clone();
        let counter = self.writability.clone();
        let id = self.id;
        let r = self.event_loop.execute(move || {
            use crate::WritabilityChange;
            let Some(ch) = lookup(id) else {
                counter.sub_quiet(size);
                p2.try_failure(TransportError::ChannelClosed);
                return;
            };
            if became_unwritable {
                ch.fire_writability(WritabilityChange::BecameUnwritable);
            }
            // The write counts itself again on the way in: hand the submission's count over
            // without a writability flip in between, then look at the low mark once.
            counter.sub_quiet(size);
            ch.write_with(Message::Bytes(bytes), ChannelPromise::from_promise(p2));
            ch.flush();
            ch.fire_writability(counter.recheck_low());
        });
        if let Err(e) = r {
            self.writability.sub_quiet(size);
            p.try_failure(e.into());
        }
        f
    }
}
