//! One subscribed channel of a loop's topics (shared by its topics' lists) and its catch-up:
//! every entry of its topics' batches it has not had, in publish order, written as slices of
//! the batches' segments while its channel is writable (`local.rs` says when it runs and the
//! ground rules).

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use bytes::Bytes;
use netloop_transport::{Channel, ChannelHandlerContext};

use super::batch::{Span, TopicBatch};
use super::gate;
use super::local::{current_seq, find_ws_context, queue_flush};
use super::Shared;
use crate::handler::WebSocketHandler;

/// One subscribed channel (shared by its topics' lists).
pub(super) struct Subscriber {
    pub(super) channel: Channel,
    /// The registry's id (names the gate).
    pub(super) registry: u64,
    /// The registry's counters.
    pub(super) shared: std::sync::Weak<Shared>,
    /// The WebSocket handler's context, once found.
    pub(super) ctx: RefCell<Option<ChannelHandlerContext>>,
    /// The gate's context (before the WebSocket handler), once added.
    pub(super) gate: RefCell<Option<ChannelHandlerContext>>,
    /// Entries numbered below this were written to it, or were not for it.
    pub(super) seen: Cell<u64>,
    /// The batches of the topics it is in.
    pub(super) batches: RefCell<Vec<Weak<TopicBatch>>>,
    /// Its WebSocket handler and gate were found (publishes need not look at it).
    pub(super) settled: Cell<bool>,
    /// Written since the last flush; a flush after the batch is queued.
    pub(super) flush_pending: Cell<bool>,
}

/// What a catch-up did.
#[derive(Default)]
pub(super) struct Counts {
    pub(super) written: usize,
    pub(super) dropped: usize,
    /// It wrote to a subscriber that had no flush pending.
    pub(super) newly_pending: bool,
}

/// The entries a catch-up writes, as (batch, index) in publish order: one batch's run (a
/// subscriber in one topic, or in several of which one was published to), or the entries of
/// several batches merged by number.
struct Due {
    /// (batch, first, end).
    single: Option<(usize, usize, usize)>,
    /// (number, batch, index), sorted.
    merged: Vec<(u64, usize, usize)>,
}

impl Due {
    /// The entries numbered `from..upto` of `batches`.
    fn find(batches: &[Rc<TopicBatch>], from: u64, upto: u64) -> Due {
        let mut due = Due {
            single: None,
            merged: Vec::new(),
        };
        for (b, batch) in batches.iter().enumerate() {
            let entries = batch.entries.borrow();
            let first = entries.partition_point(|e| e.seq < from);
            let end = entries.partition_point(|e| e.seq < upto);
            if first == end {
                continue;
            }
            match due.single.take() {
                None if due.merged.is_empty() => due.single = Some((b, first, end)),
                other => {
                    if let Some((b0, f0, e0)) = other {
                        let earlier = batches[b0].entries.borrow();
                        due.merged.extend((f0..e0).map(|i| (earlier[i].seq, b0, i)));
                    }
                    due.merged
                        .extend((first..end).map(|i| (entries[i].seq, b, i)));
                }
            }
        }
        due.merged.sort_unstable();
        due
    }

    fn len(&self) -> usize {
        match self.single {
            Some((_, first, end)) => end - first,
            None => self.merged.len(),
        }
    }

    /// The `k`th entry due: (batch, index).
    fn at(&self, k: usize) -> (usize, usize) {
        match self.single {
            Some((b, first, _)) => (b, first + k),
            None => (self.merged[k].1, self.merged[k].2),
        }
    }
}

/// A piece of a catch-up's write: consecutive frames of a segment, or one frame of its own.
enum Piece {
    Span(Span),
    Frame(Bytes),
}

impl Subscriber {
    /// The server WebSocket handler's context, if the pipeline has one (and the gate before it
    /// added when it is found).
    pub(super) fn ws_context(self: &Rc<Self>) -> Option<ChannelHandlerContext> {
        if let Some(ctx) = self.ctx.borrow().as_ref().filter(|c| !c.is_removed()) {
            return Some(ctx.clone());
        }
        let found =
            find_ws_context(&self.channel).and_then(|(ctx, client)| (!client).then_some(ctx));
        let gate = found
            .as_ref()
            .and_then(|ws| gate::ensure(self.registry, self, ws));
        *self.gate.borrow_mut() = gate;
        self.ctx.borrow_mut().clone_from(&found);
        found
    }

    /// The gate's context, if it is in the pipeline.
    pub(super) fn gate(&self) -> Option<ChannelHandlerContext> {
        self.gate.borrow().clone().filter(|g| !g.is_removed())
    }

    /// At a publish, for a subscriber not settled yet: `None` if it has no server WebSocket
    /// handler (yet), else whether it has its gate (then it is settled).
    pub(super) fn settle(self: &Rc<Self>) -> Option<bool> {
        self.ws_context()?;
        let gated = self.gate().is_some();
        self.settled.set(gated);
        Some(gated)
    }

    /// Catches it up (see [`Subscriber::catch_up`]) outside the end-of-batch work: counts
    /// what it did and queues its flush after the batch.
    pub(super) fn catch_up_now(self: &Rc<Self>, before_own_write: bool) {
        let counts = self.catch_up(None, before_own_write);
        self.record(&counts);
        if counts.newly_pending {
            let event_loop = self.channel.event_loop();
            queue_flush(
                event_loop.local(),
                event_loop.id(),
                Some(self.clone()),
                None,
            );
        }
    }

    pub(super) fn record(&self, counts: &Counts) {
        if counts.written + counts.dropped > 0 {
            if let Some(shared) = self.shared.upgrade() {
                shared.count_delivered(counts.written, counts.dropped);
            }
        }
    }

    /// Writes every entry of its topics' batches it has not had, in publish order, towards the
    /// socket (from its gate's place). `before_own_write`: its gate asks, for something written
    /// to the channel now (perhaps the close frame): what was published before goes first even
    /// when a close is under way.
    pub(super) fn catch_up(
        self: &Rc<Self>,
        known: Option<&Rc<TopicBatch>>,
        before_own_write: bool,
    ) -> Counts {
        let mut counts = Counts::default();
        let (from, upto) = (self.seen.get(), current_seq());
        if from >= upto {
            return counts;
        }
        self.seen.set(upto);
        // `known`: a batch it is in (the end-of-batch walk's); when it is in that topic only,
        // its list of batches is not looked at.
        let one;
        let several: Vec<Rc<TopicBatch>>;
        let batches: &[Rc<TopicBatch>] = match known.filter(|_| self.batches.borrow().len() == 1) {
            Some(batch) => {
                one = [batch.clone()];
                &one
            }
            None => {
                several = self
                    .batches
                    .borrow()
                    .iter()
                    .filter_map(Weak::upgrade)
                    .collect();
                &several
            }
        };
        let due = Due::find(batches, from, upto);
        let n = due.len();
        if n == 0 {
            return counts;
        }
        let ch = &self.channel;
        let Some(ctx) = self.ws_context() else {
            return counts; // not upgraded: skipped
        };
        let handler = ctx.handler();
        let Some(ws) = handler
            .as_any()
            .and_then(|a| a.downcast_ref::<WebSocketHandler>())
            .filter(|ws| before_own_write || !ws.is_close_sent())
        else {
            return counts;
        };
        let deflating = ws.deflate().is_some_and(|a| a.server_no_context_takeover);
        let towards = self.gate().unwrap_or_else(|| ctx.clone());
        let me = Some(ch.id());
        // The usual case: one topic's frames, all in one segment, under the mark: one slice.
        if let (Some((b, first, end)), false) = (due.single, deflating) {
            let batch = &batches[b];
            let whole = (!batch.irregular.get() && ch.is_writable())
                .then(|| {
                    let entries = batch.entries.borrow();
                    Span::covering(batch, entries[first].at?, entries[end - 1].at?)
                })
                .flatten()
                .filter(|span| span.len() <= ch.bytes_before_unwritable());
            if let Some(bytes) = whole.and_then(|span| span.bytes()) {
                counts.written = n;
                counts.newly_pending = !self.flush_pending.replace(true);
                towards.write(bytes);
                return counts;
            }
        }
        let mut pieces: Vec<Piece> = Vec::new();
        let mut k = 0;
        while k < n && ch.is_active() {
            if !ch.is_writable() {
                // Past the high water mark. If frames wait unflushed, the peer may just not
                // have been given them yet: flush now, then look again.
                if self.flush_pending.get() {
                    ctx.flush();
                }
                if !ch.is_writable() || !ch.is_active() {
                    counts.dropped += (k..n)
                        .filter(|&k| {
                            let (b, i) = due.at(k);
                            batches[b].entries.borrow()[i].except != me
                        })
                        .count();
                    break;
                }
            }
            // Up to the high water mark, plus the message that crosses it.
            let budget = ch.bytes_before_unwritable();
            let mut bytes = 0;
            while k < n && bytes <= budget {
                let (b, i) = due.at(k);
                k += 1;
                let batch = &batches[b];
                let entries = batch.entries.borrow();
                let entry = &entries[i];
                if entry.except == me {
                    continue;
                }
                counts.written += 1;
                let compressed = if deflating {
                    entry.message.compressed_for(ws)
                } else {
                    None
                };
                match (compressed, entry.at) {
                    (None, Some(at)) => {
                        bytes += at.len();
                        if let Some(Piece::Span(span)) = pieces.last_mut() {
                            if span.extend(batch, at) {
                                continue;
                            }
                        }
                        pieces.push(Piece::Span(Span::new(batch, at)));
                    }
                    (compressed, _) => {
                        let frame = compressed.unwrap_or_else(|| entry.message.plain().clone());
                        bytes += frame.len();
                        pieces.push(Piece::Frame(frame));
                    }
                }
            }
            if pieces.is_empty() {
                continue;
            }
            if !self.flush_pending.replace(true) {
                counts.newly_pending = true;
            }
            for piece in pieces.drain(..) {
                let bytes = match piece {
                    Piece::Span(span) => span.bytes(),
                    Piece::Frame(frame) => Some(frame),
                };
                if let Some(bytes) = bytes {
                    towards.write(bytes);
                }
            }
        }
        counts
    }

    /// Flushes what was written to it since its last flush.
    pub(super) fn flush_if_pending(&self) {
        if !self.flush_pending.replace(false) {
            return;
        }
        let ctx = self.ctx.borrow().clone();
        if let Some(ctx) = ctx {
            ctx.flush();
        }
    }
}
