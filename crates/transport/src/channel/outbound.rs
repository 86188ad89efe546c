//! A channel's write path: writes queue in the outbound buffer, a flush hands what is flushed
//! to the channel's I/O, written entries complete their promises, crossings of the water marks
//! fire `channel_writability_changed`. Ground rules as in the parent module.
//!
//! Writes on their way (reserved bytes): a binding that queues writes before handing them to
//! the channel (the Node binding batches them) counts them towards the pending total first
//! (`reserve_pending_outbound`, as Netty counts a write task's size when it is created), then
//! gives each count back as its write arrives (`release_pending_outbound`, without a
//! writability change: the write counts itself), then looks at the low mark once
//! (`recheck_writability`). A binding that decides a crossing itself (it saw the queued
//! writes cross the high mark and reported it) marks the channel unwritable without an event
//! (`mark_unwritable_above`).

use super::Channel;
use crate::error::TransportError;
use crate::message::Message;
use crate::options::WaterMark;
use crate::outbound_buffer::{WritabilityChange, ENTRY_OVERHEAD};
use crate::promise::ChannelPromise;

impl Channel {
    pub(crate) fn core_write(&self, msg: Message, promise: ChannelPromise) {
        if self.0.closing.get() || !self.is_open() {
            promise.try_failure(self.closed_error());
            return;
        }
        if self.0.io.is_output_shutdown() {
            promise.try_failure(TransportError::OutputShutdown);
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

    /// A write of `data` followed by a flush, when nothing of the channel waits to be written:
    /// one `write` straight from `data` (no message made, no entry queued), as node:net tries
    /// a write at once. Taken only when its outcome cannot differ from the queued path's:
    /// the channel is active and not closing, its output is not shut, no flush is running and
    /// the outbound buffer is empty (so no earlier write is passed, and the water marks see
    /// nothing: bytes that leave at once never count as pending). Anything else, or what the
    /// socket does not take, is the caller's to write the usual way ([`WrittenNow::Part`]).
    pub(crate) fn core_write_now(&self, data: &[u8], promise: ChannelPromise) -> WrittenNow {
        if data.is_empty()
            || self.0.closing.get()
            || self.0.in_flush.get()
            || !self.0.outbound.borrow().is_empty()
            || self.0.io.is_output_shutdown()
            || !self.is_active()
        {
            return WrittenNow::Part(0, promise);
        }
        if !promise.set_uncancellable() {
            // Cancelled before the write left: it never happens (the queued path drops it at
            // the flush).
            return WrittenNow::All;
        }
        match self.0.io.write_now(data) {
            Some(Ok(n)) if n == data.len() => {
                promise.try_success();
                WrittenNow::All
            }
            Some(Ok(n)) => WrittenNow::Part(n, promise),
            // WouldBlock, Interrupted, or an error the queued write meets again and handles
            // (the socket's error stays: EPIPE, ECONNRESET once and EPIPE after).
            Some(Err(_)) | None => WrittenNow::Part(0, promise),
        }
    }

    pub(crate) fn core_flush(&self) {
        let change = self.0.outbound.borrow_mut().add_flush();
        self.fire_writability(change);
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
            let change = self.0.outbound.borrow().writability_ref().recheck_low();
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

    /// The channel's write buffer water marks.
    pub fn write_buffer_water_mark(&self) -> WaterMark {
        self.0.options.borrow().write_buffer_water_mark
    }

    /// Counts `n` bytes of writes on their way to the channel towards its pending total; a
    /// crossing of the high mark fires `channel_writability_changed`.
    pub fn reserve_pending_outbound(&self, n: usize) {
        let change = self.0.outbound.borrow().writability_ref().add(n);
        self.fire_writability(change);
    }

    /// Gives back `n` reserved bytes without a writability change (the write arrives and counts
    /// itself, or it went elsewhere: call `recheck_writability` once after).
    pub fn release_pending_outbound(&self, n: usize) {
        self.0.outbound.borrow().writability_ref().sub_quiet(n);
    }

    /// Turns the channel writable (firing `channel_writability_changed`) if its pending total
    /// fell below the low mark while nothing reported it.
    pub fn recheck_writability(&self) {
        let change = self.0.outbound.borrow().writability_ref().recheck_low();
        self.fire_writability(change);
    }

    /// If the pending total plus `queued` bytes (writes counted elsewhere until they arrive)
    /// is above the high mark, marks the channel unwritable *without* an event: the caller
    /// reports the crossing. True if that made the channel unwritable.
    pub fn mark_unwritable_above(&self, queued: usize) -> bool {
        let w = self.0.outbound.borrow().writability();
        let high = self.write_buffer_water_mark().high;
        w.bit(0)
            && w.pending().saturating_add(queued) > high
            && w.set_bit(0, false) == WritabilityChange::BecameUnwritable
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
}

/// What [`Channel::core_write_now`] (and the context's `write_and_flush_now`) did with the
/// bytes it was given.
#[must_use]
pub enum WrittenNow {
    /// All of them went to the socket; the promise succeeded.
    All,
    /// The first `n` of them (perhaps none) went: the rest is to be written and flushed the
    /// usual way, from the same context, with this promise.
    Part(usize, ChannelPromise),
}

impl std::fmt::Debug for WrittenNow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WrittenNow::All => f.write_str("All"),
            WrittenNow::Part(n, _) => f.debug_tuple("Part").field(n).field(&"promise").finish(),
        }
    }
}

pub(crate) fn fail_all(promises: Vec<ChannelPromise>, err: &TransportError) {
    for p in promises {
        p.try_failure(err.clone());
    }
}
