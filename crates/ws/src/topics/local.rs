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

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use netloop_eventloop::EventLoop;
use netloop_transport::{Channel, ChannelHandlerContext, ChannelId};

use super::published::Published;
use super::Shared;
use crate::decoder::Role;
use crate::handler::WebSocketHandler;

/// One subscribed channel (shared by its topics' lists).
struct Subscriber {
    channel: Channel,
    /// The WebSocket handler's context, once found.
    ctx: RefCell<Option<ChannelHandlerContext>>,
    /// Written since the last flush; a flush after the batch is queued.
    flush_pending: Cell<bool>,
}

/// The subscribers of one topic on one loop: a list to deliver to, positions to remove in O(1).
#[derive(Default)]
struct TopicSubscribers {
    list: Vec<Rc<Subscriber>>,
    at: HashMap<ChannelId, usize>,
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
    static TO_FLUSH: RefCell<HashMap<u64, Vec<Rc<Subscriber>>>> = RefCell::new(HashMap::new());
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
    /// The server WebSocket handler's context, if the pipeline has one.
    fn ws_context(&self) -> Option<ChannelHandlerContext> {
        if let Some(ctx) = self.ctx.borrow().as_ref().filter(|c| !c.is_removed()) {
            return Some(ctx.clone());
        }
        let found =
            find_ws_context(&self.channel).and_then(|(ctx, client)| (!client).then_some(ctx));
        self.ctx.borrow_mut().clone_from(&found);
        found
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
                ctx: RefCell::new(None),
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
        subs.list.push(sub.clone());
        (true, key, first_of_channel)
    })
}

fn take_out(table: &mut LoopTable, id: ChannelId, topic: &str) {
    let Some(subs) = table.topics.get_mut(topic) else {
        return;
    };
    if let Some(i) = subs.at.remove(&id) {
        subs.list.swap_remove(i);
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
    let subs: Vec<Rc<Subscriber>> = TABLES
        .try_with(|t| {
            t.borrow()
                .get(&(shared.id, loop_id))
                .and_then(|table| table.topics.get(topic))
                .map(|s| s.list.clone())
                .unwrap_or_default()
        })
        .unwrap_or_default();
    if subs.is_empty() {
        return 0;
    }
    let (mut written, mut dropped) = (0, 0);
    let mut to_flush = Vec::new();
    for sub in subs {
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
        ctx.write(message.frame_for(ws));
        written += 1;
        if !sub.flush_pending.replace(true) {
            to_flush.push(sub);
        }
    }
    shared.count_delivered(written, dropped);
    if !to_flush.is_empty() {
        queue_flush(event_loop.local(), loop_id, to_flush);
    }
    written
}

/// Flushes `subs` after the batch (one tail task per loop gathers every delivery's).
fn queue_flush(
    local: Option<Rc<netloop_eventloop::LocalLoop>>,
    loop_id: u64,
    subs: Vec<Rc<Subscriber>>,
) {
    let first = TO_FLUSH.try_with(|f| {
        let mut f = f.borrow_mut();
        let list = f.entry(loop_id).or_default();
        let first = list.is_empty();
        list.extend(subs.iter().cloned());
        first
    });
    match first {
        Ok(true) => {}
        Ok(false) => return,
        Err(_) => {
            // The thread is exiting: flush these now.
            subs.iter().for_each(|sub| sub.flush());
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
    let subs = TO_FLUSH
        .try_with(|f| f.borrow_mut().remove(&loop_id).unwrap_or_default())
        .unwrap_or_default();
    subs.iter().for_each(|sub| sub.flush());
}

impl Subscriber {
    /// Flushes what deliveries wrote to it.
    fn flush(&self) {
        self.flush_pending.set(false);
        let ctx = self.ctx.borrow().clone();
        if let Some(ctx) = ctx {
            ctx.flush();
        }
    }
}
