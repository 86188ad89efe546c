//! The loop side of topics: per (registry, loop), the subscribers of each topic on that loop,
//! in a table local to the loop's thread; and the delivery of one shared frame to them.
//!
//! Ground rules:
//! - Loop thread only (thread-locals; a loop's table is only touched on its thread).
//! - No borrow of a table is held while a channel is written or flushed: a write can fail
//!   and close its channel, whose close listener takes the channel out of the table. The
//!   subscribers of a delivery are copied out first (`Rc`s).
//! - A subscriber's WebSocket context is looked up once and cached; it is looked up again
//!   when that context left the pipeline (a handler replaced).
//! - Flushes: each subscriber written is flushed once after the loop's task batch (one tail
//!   task per loop gathers them), however many publishes wrote to it meanwhile: inside an
//!   iteration after the running batch, outside one (JS between iterations) after the next,
//!   which adding the tail task asks for.
//! - Coalescing: a small plain frame is copied once per (loop, topic) into the batch's
//!   segment and a subscriber's consecutive frames stay one pending span (`batch.rs`), written
//!   as one slice at its flush, or earlier by its gate (`gate.rs`) when anything else is
//!   written to the channel. The end-of-batch work writes every span before it drops the
//!   batch's sealed segments.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use netloop_eventloop::EventLoop;
use netloop_transport::{Channel, ChannelHandlerContext, ChannelId};

use super::batch::{Span, TopicBatch, MAX_COALESCED_FRAME};
use super::gate;
use super::published::Published;
use super::Shared;
use crate::decoder::Role;
use crate::handler::WebSocketHandler;

/// One subscribed channel (shared by its topics' lists).
pub(super) struct Subscriber {
    channel: Channel,
    /// The registry's id (names the gate).
    registry: u64,
    /// The WebSocket handler's context, once found.
    ctx: RefCell<Option<ChannelHandlerContext>>,
    /// The gate's context (before the WebSocket handler), once added.
    gate: RefCell<Option<ChannelHandlerContext>>,
    /// Published frames of this batch not written to the channel yet.
    span: RefCell<Option<Span>>,
    /// Written since the last flush; a flush after the batch is queued.
    flush_pending: Cell<bool>,
}

/// The subscribers of one topic on one loop: a list to deliver to, positions to remove in O(1),
/// and the batch their small frames are coalesced in.
#[derive(Default)]
struct TopicSubscribers {
    /// Shared with the deliveries under way (copied when changed meanwhile).
    list: Rc<Vec<Rc<Subscriber>>>,
    at: HashMap<ChannelId, usize>,
    batch: Rc<TopicBatch>,
}

/// What a loop does after its task batch: flush these subscribers, then close these batches.
#[derive(Default)]
struct EndOfBatch {
    subs: Vec<Rc<Subscriber>>,
    batches: Vec<Rc<TopicBatch>>,
}

/// What one loop's thread knows of one registry.
#[derive(Default)]
struct LoopTable {
    topics: HashMap<Arc<str>, TopicSubscribers>,
    /// Each subscribed channel and its topics (kept, empty, until the channel closes: its
    /// close listener is added once).
    channels: HashMap<ChannelId, (Rc<Subscriber>, Vec<Arc<str>>)>,
}

thread_local! {
    static TABLES: RefCell<HashMap<(u64, u64), LoopTable>> = RefCell::new(HashMap::new());
    /// Subscribers written inside an iteration, to flush after the batch, by loop id.
    static TO_FLUSH: RefCell<HashMap<u64, EndOfBatch>> = RefCell::new(HashMap::new());
    /// (registry, loop) pairs whose cleanup hook is registered.
    static SEEN: RefCell<HashSet<(u64, u64)>> = RefCell::new(HashSet::new());
}

/// The context of `ch`'s WebSocket handler and whether it is a client's.
pub(super) fn find_ws_context(ch: &Channel) -> Option<(ChannelHandlerContext, bool)> {
    let pipeline = ch.pipeline();
    pipeline.names().iter().find_map(|name| {
        let ctx = pipeline.context(name)?;
        let handler = ctx.handler();
        let ws = handler.as_any()?.downcast_ref::<WebSocketHandler>()?;
        let client = ws.config().role == Role::Client;
        Some((ctx, client))
    })
}

impl Subscriber {
    /// The server WebSocket handler's context, if the pipeline has one (and the gate before it
    /// added when it is found).
    fn ws_context(self: &Rc<Self>) -> Option<ChannelHandlerContext> {
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
    fn gate(&self) -> Option<ChannelHandlerContext> {
        self.gate.borrow().clone().filter(|g| !g.is_removed())
    }

    /// The bytes of the pending span.
    fn span_len(&self) -> usize {
        self.span.borrow().as_ref().map_or(0, Span::len)
    }

    /// Writes the pending span through `ctx` (the gate's: towards the socket).
    pub(super) fn write_span(&self, ctx: &ChannelHandlerContext) {
        let span = self.span.borrow_mut().take();
        if let Some(bytes) = span.and_then(|s| s.bytes()) {
            ctx.write(bytes);
        }
    }

    /// Adds the frame placed at `at` of `batch` to the pending span, writing the span first
    /// through `gate` if the frame does not follow it.
    fn coalesce(
        &self,
        gate: &ChannelHandlerContext,
        batch: &Rc<TopicBatch>,
        at: super::batch::Placed,
    ) {
        let mut span = self.span.borrow_mut();
        if let Some(s) = span.as_mut() {
            if s.extend(batch, at) {
                return;
            }
        }
        let before = span.replace(Span::new(batch, at));
        drop(span);
        if let Some(bytes) = before.and_then(|s| s.bytes()) {
            gate.write(bytes);
        }
    }
}

fn with_table<R>(registry: u64, loop_id: u64, f: impl FnOnce(&mut LoopTable) -> R) -> R {
    TABLES.with(|t| f(t.borrow_mut().entry((registry, loop_id)).or_default()))
}

/// True the first time (registry, loop) is seen on this thread (its cleanup hook is due).
pub(super) fn first_use(registry: u64, loop_id: u64) -> bool {
    SEEN.with(|s| s.borrow_mut().insert((registry, loop_id)))
}

/// Adds `ch` to `topic` on its loop: (newly added, the topic's key, first subscription of
/// the channel in this registry).
pub(super) fn add(
    shared: &Shared,
    loop_id: u64,
    ch: &Channel,
    topic: &str,
) -> (bool, Arc<str>, bool) {
    with_table(shared.id, loop_id, |table| {
        let id = ch.id();
        let first_of_channel = !table.channels.contains_key(&id);
        let (sub, topics) = table.channels.entry(id).or_insert_with(|| {
            let sub = Rc::new(Subscriber {
                channel: ch.clone(),
                registry: shared.id,
                ctx: RefCell::new(None),
                gate: RefCell::new(None),
                span: RefCell::new(None),
                flush_pending: Cell::new(false),
            });
            (sub, Vec::new())
        });
        if let Some(key) = topics.iter().find(|t| &***t == topic) {
            return (false, key.clone(), first_of_channel);
        }
        let key: Arc<str> = match table.topics.get_key_value(topic) {
            Some((key, _)) => key.clone(),
            None => Arc::from(topic),
        };
        topics.push(key.clone());
        let subs = table.topics.entry(key.clone()).or_default();
        subs.at.insert(id, subs.list.len());
        Rc::make_mut(&mut subs.list).push(sub.clone());
        (true, key, first_of_channel)
    })
}

fn take_out(table: &mut LoopTable, id: ChannelId, topic: &str) {
    let Some(subs) = table.topics.get_mut(topic) else {
        return;
    };
    if let Some(i) = subs.at.remove(&id) {
        Rc::make_mut(&mut subs.list).swap_remove(i);
        if let Some(moved) = subs.list.get(i) {
            subs.at.insert(moved.channel.id(), i);
        }
    }
    if subs.list.is_empty() {
        table.topics.remove(topic);
    }
}

/// Takes channel `id` out of `topic`: the topic's key if it was in.
pub(super) fn remove(registry: u64, loop_id: u64, id: ChannelId, topic: &str) -> Option<Arc<str>> {
    with_table(registry, loop_id, |table| {
        let (_, topics) = table.channels.get_mut(&id)?;
        let i = topics.iter().position(|t| &**t == topic)?;
        let key = topics.swap_remove(i);
        take_out(table, id, topic);
        Some(key)
    })
}

/// Takes channel `id` out of every topic and forgets it: the topics it was in.
pub(super) fn remove_channel(registry: u64, loop_id: u64, id: ChannelId) -> Vec<Arc<str>> {
    // `try_with`: a close listener may run while the thread exits.
    let removed = TABLES
        .try_with(|t| {
            let mut t = t.borrow_mut();
            let table = t.get_mut(&(registry, loop_id))?;
            let (sub, topics) = table.channels.remove(&id)?;
            for topic in &topics {
                take_out(table, id, topic);
            }
            Some((sub, topics))
        })
        .ok()
        .flatten();
    // The subscriber (its channel) drops here, after the borrow.
    removed.map(|(_, topics)| topics).unwrap_or_default()
}

/// The topics channel `id` is in.
pub(super) fn topics_of(registry: u64, loop_id: u64, id: ChannelId) -> Vec<String> {
    TABLES.with(|t| {
        t.borrow()
            .get(&(registry, loop_id))
            .and_then(|table| table.channels.get(&id))
            .map(|(_, topics)| topics.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default()
    })
}

/// Forgets a terminated loop's table.
pub(super) fn drop_table(registry: u64, loop_id: u64) {
    // `try_with`: the loop may terminate while its thread exits.
    let table = TABLES
        .try_with(|t| t.borrow_mut().remove(&(registry, loop_id)))
        .ok()
        .flatten();
    let _ = SEEN.try_with(|s| s.borrow_mut().remove(&(registry, loop_id)));
    drop(table);
}

/// Writes `frame` to the subscribers of `topic` on `event_loop` (this thread's) but
/// `except`; how many it was written to.
pub(super) fn deliver(
    shared: &Shared,
    event_loop: &EventLoop,
    topic: &str,
    message: &Published,
    except: Option<ChannelId>,
) -> usize {
    let loop_id = event_loop.id();
    let (subs, batch): (Rc<Vec<Rc<Subscriber>>>, Option<Rc<TopicBatch>>) = TABLES
        .try_with(|t| {
            t.borrow()
                .get(&(shared.id, loop_id))
                .and_then(|table| table.topics.get(topic))
                .map(|s| (s.list.clone(), Some(s.batch.clone())))
                .unwrap_or_default()
        })
        .unwrap_or_default();
    let Some(batch) = batch.filter(|_| !subs.is_empty()) else {
        return 0;
    };
    let plain = message.plain();
    // Where the plain frame lies in the batch's segment, once copied there (at the first
    // subscriber that takes it coalesced).
    let coalesce = plain.len() <= MAX_COALESCED_FRAME;
    let mut placed = None;
    let (mut written, mut dropped) = (0, 0);
    let mut to_flush = Vec::new();
    for sub in subs.iter() {
        let ch = &sub.channel;
        if !ch.is_active() || except == Some(ch.id()) {
            continue;
        }
        let Some(ctx) = sub.ws_context() else {
            continue;
        };
        let handler = ctx.handler();
        let Some(ws) = handler
            .as_any()
            .and_then(|a| a.downcast_ref::<WebSocketHandler>())
            .filter(|ws| !ws.is_close_sent())
        else {
            continue;
        };
        if !ch.is_writable() {
            // Past the high water mark. If frames of this batch wait unflushed, the peer may
            // just not have been given them yet: flush now, then look again.
            if sub.flush_pending.get() {
                ctx.flush();
            }
            if !ch.is_writable() || !ch.is_active() {
                dropped += 1;
                continue;
            }
        }
        let compressed = message.compressed_for(ws);
        match sub.gate() {
            Some(gate) if coalesce && compressed.is_none() => {
                let at = *placed.get_or_insert_with(|| batch.append(plain));
                sub.coalesce(&gate, &batch, at);
                // The span is not in the channel's pending count: once it would take the
                // channel past its high water mark it goes there, so that the slow-subscriber
                // rule above sees it.
                if sub.span_len() > ch.bytes_before_unwritable() {
                    sub.write_span(&gate);
                }
            }
            // Through the gate too: a pending span goes out first.
            _ => ctx.write(compressed.unwrap_or_else(|| plain.clone())),
        }
        written += 1;
        if !sub.flush_pending.replace(true) {
            to_flush.push(sub.clone());
        }
    }
    shared.count_delivered(written, dropped);
    let batch = placed.is_some().then_some(batch);
    if !to_flush.is_empty() || batch.is_some() {
        queue_flush(event_loop.local(), loop_id, to_flush, batch);
    }
    written
}

/// Flushes `subs` and closes `batch` after the loop's task batch (one tail task per loop
/// gathers every delivery's).
fn queue_flush(
    local: Option<Rc<netloop_eventloop::LocalLoop>>,
    loop_id: u64,
    subs: Vec<Rc<Subscriber>>,
    batch: Option<Rc<TopicBatch>>,
) {
    let batch = batch.filter(|b| !b.queued.replace(true));
    let first = TO_FLUSH.try_with(|f| {
        let mut f = f.borrow_mut();
        let work = f.entry(loop_id).or_default();
        let first = work.subs.is_empty() && work.batches.is_empty();
        work.subs.extend(subs.iter().cloned());
        work.batches.extend(batch.iter().cloned());
        first
    });
    match first {
        Ok(true) => {}
        Ok(false) => return,
        Err(_) => {
            // The thread is exiting: flush these now.
            end_batch(EndOfBatch {
                subs,
                batches: batch.into_iter().collect(),
            });
            return;
        }
    }
    let queued = local.and_then(|l| l.add_tail_task(move || flush_all(loop_id)));
    if queued.is_none() {
        // The loop is shutting down: flush now rather than never.
        flush_all(loop_id);
    }
}

fn flush_all(loop_id: u64) {
    let work = TO_FLUSH
        .try_with(|f| f.borrow_mut().remove(&loop_id).unwrap_or_default())
        .unwrap_or_default();
    end_batch(work);
}

/// Writes and flushes every subscriber's span, then drops the segments they were in. (A
/// delivery that a write causes re-entrantly lands in a new generation and a new tail task.)
fn end_batch(work: EndOfBatch) {
    let cutoffs: Vec<u64> = work
        .batches
        .iter()
        .map(|b| {
            b.queued.set(false);
            b.close()
        })
        .collect();
    work.subs.iter().for_each(|sub| sub.flush());
    for (batch, cutoff) in work.batches.iter().zip(cutoffs) {
        batch.forget_through(cutoff);
    }
}

impl Subscriber {
    /// Writes the pending span and flushes what deliveries wrote to it.
    fn flush(&self) {
        self.flush_pending.set(false);
        let ctx = self.ctx.borrow().clone();
        // Through the gate; were it taken out, from the WebSocket handler's place.
        if let Some(towards_socket) = self.gate().or_else(|| ctx.clone()) {
            self.write_span(&towards_socket);
        }
        if let Some(ctx) = ctx {
            ctx.flush();
        }
    }
}
