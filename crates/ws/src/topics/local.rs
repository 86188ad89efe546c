//! The loop side of topics: per (registry, loop), the subscribers of each topic on that loop,
//! in a table local to the loop's thread; and the delivery of published frames to them.
//!
//! How a message reaches the subscribers of a loop: a publish appends one [`Entry`] to the
//! topic's batch (its small plain frame copied into the batch's segment) and touches no
//! subscriber. After the loop's task batch (one tail task per loop) every subscriber of each
//! topic published to is caught up once — every entry it has not had, in publish order, written
//! as one slice of the segment where they lie together — and flushed once. So the cost per
//! subscriber is one pass per batch, not one per message, and a publish costs the same whether
//! a topic has one subscriber or thousands.
//!
//! Ground rules:
//! - Loop thread only (thread-locals; a loop's table is only touched on its thread).
//! - Order: entries carry the thread's publish sequence number; a subscriber keeps the number
//!   it has been caught up to (`seen`) and takes the entries of all its topics in that order.
//!   Its gate (`gate.rs`) catches it up before anything else is written to its channel, so its
//!   own writes keep their place among published messages. It is caught up before it joins
//!   or leaves a topic, so it gets exactly the messages published while it was in.
//! - A subscriber is walked per message only until it is settled (its WebSocket handler and
//!   gate found): one that has not upgraded yet skips the message; one without a gate
//!   (another registry's is there) is caught up at once, through that gate.
//! - No borrow of a table, list or entry vector is held while a channel is written or
//!   flushed: a write can fail and close its channel, whose close listener takes it out.
//! - Slow subscribers: a catch-up writes while the channel is writable, at most up to its high
//!   water mark plus one message at a time; past it, it flushes what it wrote and looks again;
//!   still unwritable, the rest is dropped (counted).
//! - The end-of-batch work drops the batch's entries and sealed segments once every subscriber
//!   was caught up (entries a write published re-entrantly wait for the next tail task).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use netloop_eventloop::EventLoop;
use netloop_transport::{Channel, ChannelHandlerContext, ChannelId};

use super::batch::{Entry, TopicBatch, MAX_COALESCED_FRAME};
use super::published::Published;
use super::subscriber::{Counts, Subscriber};
use super::Shared;
use crate::decoder::Role;
use crate::handler::WebSocketHandler;

/// The subscribers of one topic on one loop: positions to remove in O(1), and the batch
/// (which holds the list itself and the messages of the running batch).
#[derive(Default)]
struct TopicSubscribers {
    at: HashMap<ChannelId, usize>,
    batch: Rc<TopicBatch>,
}

/// What a loop does after its task batch: catch up and flush the subscribers of these batches,
/// flush these subscribers (written earlier by their gate), then end these batches.
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
    /// Batches to end and subscribers to flush after the loop's task batch, by loop id.
    static TO_FLUSH: RefCell<HashMap<u64, EndOfBatch>> = RefCell::new(HashMap::new());
    /// (registry, loop) pairs whose cleanup hook is registered.
    static SEEN: RefCell<HashSet<(u64, u64)>> = RefCell::new(HashSet::new());
    /// The next publish sequence number of this thread (every registry and loop).
    static SEQ: Cell<u64> = const { Cell::new(0) };
}

pub(super) fn current_seq() -> u64 {
    SEQ.with(Cell::get)
}

fn next_seq() -> u64 {
    SEQ.with(|s| {
        let seq = s.get();
        s.set(seq + 1);
        seq
    })
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

fn with_table<R>(registry: u64, loop_id: u64, f: impl FnOnce(&mut LoopTable) -> R) -> R {
    TABLES.with(|t| f(t.borrow_mut().entry((registry, loop_id)).or_default()))
}

/// True the first time (registry, loop) is seen on this thread (its cleanup hook is due).
pub(super) fn first_use(registry: u64, loop_id: u64) -> bool {
    SEEN.with(|s| s.borrow_mut().insert((registry, loop_id)))
}

/// Catches channel `id` up, if it is subscribed (before it joins or leaves a topic).
pub(super) fn catch_up_channel(registry: u64, loop_id: u64, id: ChannelId) {
    let sub = TABLES
        .try_with(|t| {
            t.borrow()
                .get(&(registry, loop_id))
                .and_then(|table| table.channels.get(&id))
                .map(|(sub, _)| sub.clone())
        })
        .ok()
        .flatten();
    if let Some(sub) = sub {
        sub.catch_up_now(false);
    }
}

/// Adds `ch` to `topic` on its loop: (newly added, the topic's key, first subscription of
/// the channel in this registry). Call [`catch_up_channel`] first: it gets what is published
/// from now on.
pub(super) fn add(
    shared: &Arc<Shared>,
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
                shared: Arc::downgrade(shared),
                ctx: RefCell::new(None),
                gate: RefCell::new(None),
                seen: Cell::new(current_seq()),
                batches: RefCell::new(Vec::new()),
                settled: Cell::new(false),
                flush_pending: Cell::new(false),
            });
            (sub, Vec::new())
        });
        if let Some(key) = topics.iter().find(|t| &***t == topic) {
            return (false, key.clone(), first_of_channel);
        }
        sub.seen.set(sub.seen.get().max(current_seq()));
        let key: Arc<str> = match table.topics.get_key_value(topic) {
            Some((key, _)) => key.clone(),
            None => Arc::from(topic),
        };
        topics.push(key.clone());
        let subs = table.topics.entry(key.clone()).or_default();
        let mut list = subs.batch.subscribers.borrow_mut();
        subs.at.insert(id, list.len());
        Rc::make_mut(&mut list).push(sub.clone());
        subs.batch.settled.set(false);
        sub.batches.borrow_mut().push(Rc::downgrade(&subs.batch));
        (true, key, first_of_channel)
    })
}

fn take_out(table: &mut LoopTable, id: ChannelId, topic: &str) {
    let Some(subs) = table.topics.get_mut(topic) else {
        return;
    };
    let empty = {
        let mut list = subs.batch.subscribers.borrow_mut();
        if let Some(i) = subs.at.remove(&id) {
            let list = Rc::make_mut(&mut list);
            let sub = list.swap_remove(i);
            let batch = Rc::downgrade(&subs.batch);
            sub.batches.borrow_mut().retain(|b| !b.ptr_eq(&batch));
            if let Some(moved) = list.get(i) {
                subs.at.insert(moved.channel.id(), i);
            }
        }
        list.is_empty()
    };
    if empty {
        table.topics.remove(topic);
    }
}

/// Takes channel `id` out of `topic`: the topic's key if it was in. Call
/// [`catch_up_channel`] first: it gets what was published while it was in.
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

/// Publishes `message` to the subscribers of `topic` on `event_loop` (this thread's) but
/// `except`: appends it to the topic's batch, written to each subscriber after the loop's task
/// batch (or before, by its gate). How many subscribers it is for.
pub(super) fn deliver(
    shared: &Shared,
    event_loop: &EventLoop,
    topic: &str,
    message: &Arc<Published>,
    except: Option<ChannelId>,
) -> usize {
    let loop_id = event_loop.id();
    let found = TABLES
        .try_with(|t| {
            t.borrow()
                .get(&(shared.id, loop_id))
                .and_then(|table| table.topics.get(topic))
                .map(|s| {
                    let left_out = except.is_some_and(|id| s.at.contains_key(&id));
                    (s.batch.clone(), left_out)
                })
        })
        .ok()
        .flatten();
    let Some((batch, left_out)) = found else {
        return 0;
    };
    let subs = batch.subscribers.borrow().clone();
    if subs.is_empty() {
        return 0;
    }
    let seq = next_seq();
    let plain = message.plain();
    let at = (plain.len() <= MAX_COALESCED_FRAME).then(|| batch.append(plain));
    if at.is_none() || except.is_some() {
        batch.irregular.set(true);
    }
    batch.entries.borrow_mut().push(Entry {
        seq,
        at,
        except,
        message: message.clone(),
    });
    let mut reached = subs.len() - usize::from(left_out);
    if !batch.settled.get() {
        let mut settled = true;
        for sub in subs.iter().filter(|s| !s.settled.get()) {
            match sub.settle() {
                Some(true) => {}
                Some(false) => {
                    // No gate of its own: written now, through the gate that is there.
                    settled = false;
                    sub.catch_up_now(false);
                }
                None => {
                    // Not upgraded yet: skipped.
                    settled = false;
                    sub.seen.set(sub.seen.get().max(seq + 1));
                    if except != Some(sub.channel.id()) {
                        reached -= 1;
                    }
                }
            }
        }
        batch.settled.set(settled);
    }
    if !batch.queued.get() {
        queue_flush(event_loop.local(), loop_id, None, Some(batch));
    }
    reached
}

/// Queues `sub`'s flush and `batch`'s end after the loop's task batch (one tail task per
/// loop gathers them).
pub(super) fn queue_flush(
    local: Option<Rc<netloop_eventloop::LocalLoop>>,
    loop_id: u64,
    sub: Option<Rc<Subscriber>>,
    batch: Option<Rc<TopicBatch>>,
) {
    let batch = batch.filter(|b| !b.queued.replace(true));
    let first = TO_FLUSH.try_with(|f| {
        let mut f = f.borrow_mut();
        let work = f.entry(loop_id).or_default();
        let first = work.subs.is_empty() && work.batches.is_empty();
        work.subs.extend(sub.iter().cloned());
        work.batches.extend(batch.iter().cloned());
        first
    });
    match first {
        Ok(true) => {}
        Ok(false) => return,
        Err(_) => {
            // The thread is exiting: do it now.
            end_batch(EndOfBatch {
                subs: sub.into_iter().collect(),
                batches: batch.into_iter().collect(),
            });
            return;
        }
    }
    let queued = local.and_then(|l| l.add_tail_task(move || flush_all(loop_id)));
    if queued.is_none() {
        // The loop is shutting down: do it now rather than never.
        flush_all(loop_id);
    }
}

fn flush_all(loop_id: u64) {
    let work = TO_FLUSH
        .try_with(|f| f.borrow_mut().remove(&loop_id).unwrap_or_default())
        .unwrap_or_default();
    end_batch(work);
}

/// Catches up and flushes every subscriber of the batches (one pass each), flushes the others
/// written, then drops the batches' entries and segments. (A publish that a write causes
/// re-entrantly queues its batch again, for a new tail task.)
fn end_batch(work: EndOfBatch) {
    let cutoff = current_seq();
    for batch in &work.batches {
        batch.queued.set(false);
    }
    let mut counts = Counts::default();
    let mut counter = None;
    for batch in &work.batches {
        let subs = batch.subscribers.borrow().clone();
        for sub in subs.iter() {
            let c = sub.catch_up(Some(batch), false);
            counts.written += c.written;
            counts.dropped += c.dropped;
            if counter.is_none() {
                counter = Some(sub.clone());
            }
            sub.flush_if_pending();
        }
    }
    if let Some(sub) = counter {
        sub.record(&counts);
    }
    work.subs.iter().for_each(|sub| sub.flush_if_pending());
    for batch in &work.batches {
        let done = {
            let mut entries = batch.entries.borrow_mut();
            let ended = entries.partition_point(|e| e.seq < cutoff);
            entries.drain(..ended);
            if entries.is_empty() {
                batch.irregular.set(false);
            }
            entries.is_empty()
        };
        // Entries published meanwhile keep their segments until their own end of batch.
        if done {
            let generation = batch.close();
            batch.forget_through(generation);
        }
    }
}
