//! Coalescing of the small published frames of one batch: per (loop, topic), the plain frames
//! published during the loop's task batch are copied once, one after the other, into one
//! buffer (a segment); a subscriber that gets consecutive frames of it keeps a [`Span`] (its
//! first and last byte) instead of one outbound entry per frame, and the span becomes one
//! `Bytes` slice of the sealed segment — one outbound entry, one refcount — when the subscriber
//! is written (its flush after the batch, or earlier, see `gate.rs`). The kernel copies every
//! subscriber's bytes out of the same few cache-hot kilobytes.
//!
//! Ground rules:
//! - Loop thread only (`Rc`, `RefCell`); no borrow is held outside these methods.
//! - A segment is sealed (frozen into `Bytes`) the first time a span in it is asked for, when
//!   it would pass [`SEGMENT_LIMIT`], and at the end of the batch ([`TopicBatch::close`]).
//!   Sealed segments are kept until the end of the batch ([`TopicBatch::forget_through`]),
//!   when every span of theirs has been written.
//! - Generations tell segments apart: a span names the generation it lies in; frames are only
//!   coalesced into a span of the open generation.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use netloop_transport::ChannelId;

use super::published::Published;
use super::subscriber::Subscriber;

/// Frames larger than this are written as their own shared `Bytes` (a copy would cost more
/// than an outbound entry).
pub(super) const MAX_COALESCED_FRAME: usize = 4 * 1024;

/// A segment is sealed before it would grow past this (a subscriber's pending span is written
/// to its channel earlier if it would take the channel past its high water mark: `local.rs`).
pub(super) const SEGMENT_LIMIT: usize = 32 * 1024;

/// What a segment's first allocation reserves (it grows as a `BytesMut` does).
const SEGMENT_START: usize = 2048;

/// One (loop, topic): its subscribers, the messages of the running batch not yet written to
/// all of them, and the segments their small frames are copied into.
#[derive(Default)]
pub(super) struct TopicBatch {
    inner: RefCell<Segments>,
    /// Listed in the loop's end-of-batch work (see `local.rs`).
    pub(super) queued: Cell<bool>,
    /// The subscribers on this loop (shared with the deliveries under way: copied when
    /// changed meanwhile).
    pub(super) subscribers: RefCell<Rc<Vec<Rc<Subscriber>>>>,
    /// Every subscriber's WebSocket handler and gate were found: a publish only appends an
    /// [`Entry`] (no walk of the subscribers per message).
    pub(super) settled: Cell<bool>,
    /// The messages of this batch, in publish order (ascending `seq`).
    pub(super) entries: RefCell<Vec<Entry>>,
    /// One of `entries` leaves a subscriber out or has its own frame (not in a segment): a
    /// catch-up looks at each entry, not only at the first and the last.
    pub(super) irregular: Cell<bool>,
}

/// One published message of the running batch, as each subscriber's catch-up reads it.
pub(super) struct Entry {
    /// The loop thread's publish sequence number (orders the entries of different topics).
    pub(super) seq: u64,
    /// Where its plain frame lies in a segment (`None`: too large, written as its own `Bytes`).
    pub(super) at: Option<Placed>,
    /// A subscriber left out (`publish_from`'s sender).
    pub(super) except: Option<ChannelId>,
    pub(super) message: Arc<Published>,
}

#[derive(Default)]
struct Segments {
    open: BytesMut,
    /// The generation of `open`.
    generation: u64,
    /// Sealed segments of this batch, by generation.
    sealed: Vec<(u64, Bytes)>,
}

impl Segments {
    fn seal(&mut self) {
        // The whole buffer, its spare capacity too: an idle topic keeps no memory.
        let segment = std::mem::take(&mut self.open).freeze();
        self.sealed.push((self.generation, segment));
        self.generation += 1;
    }
}

/// Consecutive frames of one segment that a subscriber has yet to be written.
pub(super) struct Span {
    batch: Rc<TopicBatch>,
    generation: u64,
    start: usize,
    end: usize,
}

/// Where an appended frame lies: (generation, start, end).
#[derive(Clone, Copy)]
pub(super) struct Placed {
    generation: u64,
    start: usize,
    end: usize,
}

impl Placed {
    /// The frame's length.
    pub(super) fn len(&self) -> usize {
        self.end - self.start
    }
}

impl TopicBatch {
    /// Copies `frame` at the end of the open segment.
    pub(super) fn append(&self, frame: &[u8]) -> Placed {
        let mut s = self.inner.borrow_mut();
        if !s.open.is_empty() && s.open.len() + frame.len() > SEGMENT_LIMIT {
            s.seal();
        }
        if s.open.capacity() - s.open.len() < frame.len() {
            s.open.reserve(frame.len().max(SEGMENT_START));
        }
        let start = s.open.len();
        s.open.extend_from_slice(frame);
        Placed {
            generation: s.generation,
            start,
            end: s.open.len(),
        }
    }

    /// Ends the batch's open segment (sealed if it holds anything): the generation every span
    /// made so far is at or below.
    pub(super) fn close(&self) -> u64 {
        let mut s = self.inner.borrow_mut();
        let cutoff = s.generation;
        if s.open.is_empty() {
            s.generation += 1;
        } else {
            s.seal();
        }
        cutoff
    }

    /// Drops the sealed segments of generations up to `cutoff` (their spans were written).
    pub(super) fn forget_through(&self, cutoff: u64) {
        self.inner
            .borrow_mut()
            .sealed
            .retain(|(generation, _)| *generation > cutoff);
    }

    /// The bytes of a span of this batch: a slice of its sealed segment (sealed now if open).
    fn bytes(&self, generation: u64, start: usize, end: usize) -> Option<Bytes> {
        let mut s = self.inner.borrow_mut();
        if generation == s.generation {
            s.seal();
        }
        s.sealed
            .iter()
            .rev()
            .find(|(g, _)| *g == generation)
            .map(|(_, segment)| segment.slice(start..end))
    }
}

impl Span {
    /// A span of one frame placed in `batch`.
    pub(super) fn new(batch: &Rc<TopicBatch>, at: Placed) -> Span {
        Span {
            batch: batch.clone(),
            generation: at.generation,
            start: at.start,
            end: at.end,
        }
    }

    /// The frames from `first` to `last` (placed in that order in `batch`), if they lie in one
    /// segment (then they follow each other there).
    pub(super) fn covering(batch: &Rc<TopicBatch>, first: Placed, last: Placed) -> Option<Span> {
        (first.generation == last.generation).then(|| Span {
            batch: batch.clone(),
            generation: first.generation,
            start: first.start,
            end: last.end,
        })
    }

    /// How many bytes it spans.
    pub(super) fn len(&self) -> usize {
        self.end - self.start
    }

    /// Takes in the frame placed at `at` if it follows this span in the same segment.
    pub(super) fn extend(&mut self, batch: &Rc<TopicBatch>, at: Placed) -> bool {
        let follows = at.generation == self.generation
            && at.start == self.end
            && Rc::ptr_eq(&self.batch, batch);
        if follows {
            self.end = at.end;
        }
        follows
    }

    /// The span's bytes, one slice (`None` only if its segment is gone: its batch ended
    /// without it being written, which the loop's end-of-batch work rules out).
    pub(super) fn bytes(&self) -> Option<Bytes> {
        self.batch.bytes(self.generation, self.start, self.end)
    }
}
