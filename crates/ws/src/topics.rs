//! Topics (publish/subscribe, as Bun's and uWebSockets' `subscribe`/`publish`): a WebSocket
//! channel subscribes to named topics; [`TopicRegistry::publish_text`] /
//! [`TopicRegistry::publish_binary`] encode the message into a server frame **once** (one
//! refcounted `Bytes`) and write that same frame to every subscriber on every loop.
//!
//! ```
//! use std::rc::Rc;
//! use netloop_ws::{TopicRegistry, WebSocketHandler, WsConfig};
//! use netloop_transport::EmbeddedChannel;
//!
//! let topics = TopicRegistry::new();
//! let ws = || Rc::new(WebSocketHandler::new(WsConfig::default()).unwrap());
//! let (a, b) = (EmbeddedChannel::new(vec![("ws", ws())]), EmbeddedChannel::new(vec![("ws", ws())]));
//! topics.subscribe(a.channel(), "news").unwrap();
//! topics.subscribe(b.channel(), "news").unwrap();
//! assert_eq!(topics.publish_text("news", "hi"), 2);
//! a.run_pending_tasks(); // the flush, after the loop's task batch
//! b.run_pending_tasks();
//! assert_eq!(&a.read_outbound().unwrap().as_bytes().unwrap()[..], b"\x81\x02hi");
//! assert_eq!(&b.read_outbound().unwrap().as_bytes().unwrap()[..], b"\x81\x02hi");
//! assert_eq!(topics.stats().encoded, 1);
//! ```
//!
//! Scope: a [`TopicRegistry`] is a cheap `Send + Sync` handle (an `Arc`); every channel of
//! every loop of the process that subscribed through it (or a clone) receives what is
//! published through it. [`TopicRegistry::global`] is the process-wide one (the Node
//! binding's: every worker thread of a worker group shares it, as statics are shared by all
//! threads of a process); [`TopicRegistry::new`] makes a separate namespace.
//!
//! How a publish travels: the shared table (a mutex) lists, per topic, the loops that have
//! subscribers and how many. On loops that run on the calling thread the message is queued at
//! once; every other loop with subscribers gets **one** task (`EventLoop::execute`) carrying
//! the same `Bytes`, which queues it there. A publish from a thread without a loop sends a task
//! to every such loop. Queued means: appended to the topic's batch on that loop (a frame of at
//! most 4 KiB copied once into the batch's segment, topics/batch.rs), touching no subscriber.
//! After the loop's task batch (a tail task: inside an iteration after the running batch,
//! outside one after the next, which it asks for) each subscriber of the topics published to
//! is caught up **once**: every message it has not had, in publish order (across its topics
//! too), written as one slice of the segment they lie in (one outbound entry, one refcount),
//! then flushed once (one `writev`). So the publishes of one batch — a JS handler publishing
//! each message of a read, tasks arriving together — cost one pass and one flush per
//! subscriber, as uWebSockets drains its topics once per iteration, and a publish costs the
//! same for one subscriber or thousands.
//!
//! Order with a channel's own writes: a gate (topics/gate.rs) sits just before a subscriber's
//! WebSocket handler and catches it up before anything else goes out, so its own messages,
//! pongs and close frame keep their place between published messages. A channel is caught up
//! before it subscribes or unsubscribes, so it gets exactly the messages published while it
//! was in.
//!
//! Slow subscribers: a catch-up writes while the subscriber's channel is writable (its pending
//! outbound bytes under the high water mark, until they drain below the low one), at most up
//! to the mark plus one message at a time; past it, it flushes what it wrote and looks again;
//! still unwritable, the rest of the batch is skipped for it, counted in
//! [`TopicStats::dropped`]. What one slow subscriber holds is therefore bounded by its high
//! water mark plus one message, whatever the publish rate (Bun and uWebSockets drop likewise
//! past their `maxBackpressure`), and nothing is held per subscriber while a batch runs: the
//! bytes are shared, a subscriber's queue holds a reference to the segment or the frame.
//!
//! Ground rules:
//! - `subscribe`/`unsubscribe` run on the channel's loop thread (a `Channel` never leaves
//!   it); `publish` and `subscriber_count` from any thread.
//! - Lock order: the shared table's mutex is never held while a channel is written, a task
//!   submitted or a thread-local table borrowed (see `local.rs` for the loop side).
//! - A channel leaves every topic when it closes (a listener on its close future), and a
//!   loop's entries go when it terminates (a cleanup hook): nothing outlives either.
//! - Only server-role connections subscribe (client frames are masked per frame, so one
//!   shared frame cannot serve them).
//!
//! - permessage-deflate: a message is compressed at most once per publish (per window size
//!   in use) for the subscribers that agreed `server_no_context_takeover`, and those share
//!   the compressed frame; the others get the plain one (topics/published.rs).
//! - [`TopicRegistry::publish_from`] leaves the sender out (Bun's and uWebSockets.js'
//!   `ws.publish`).

mod batch;
mod gate;
mod local;
mod published;
mod subscriber;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use netloop_eventloop::EventLoop;
use netloop_transport::{Channel, ChannelId, LocalListenerExt};

use crate::frame::Opcode;
use published::Published;

/// Why a subscription was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicError {
    /// The channel's pipeline has no WebSocket handler (`ERR_INVALID_STATE`).
    NotWebSocket,
    /// The WebSocket handler is a client's: its frames are masked one by one
    /// (`ERR_INVALID_STATE`).
    ClientRole,
    /// The channel is closed (`ERR_CHANNEL_CLOSED`).
    ChannelClosed,
}

impl TopicError {
    /// The stable Node-style code.
    pub fn code(&self) -> &'static str {
        match self {
            TopicError::NotWebSocket | TopicError::ClientRole => "ERR_INVALID_STATE",
            TopicError::ChannelClosed => "ERR_CHANNEL_CLOSED",
        }
    }
}

impl std::fmt::Display for TopicError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TopicError::NotWebSocket => {
                "only a WebSocket channel can subscribe (its pipeline has no WebSocket handler)"
            }
            TopicError::ClientRole => "only a server's WebSocket channel can subscribe",
            TopicError::ChannelClosed => "the channel is closed",
        })
    }
}

impl std::error::Error for TopicError {}

/// Counters of a registry, since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TopicStats {
    /// Publish calls.
    pub published: u64,
    /// Frames encoded (one per publish that found a subscriber).
    pub encoded: u64,
    /// Frame writes to subscribers.
    pub delivered: u64,
    /// Messages not written to a subscriber that was not writable (slow).
    pub dropped: u64,
}

/// The loops with subscribers of one topic.
#[derive(Debug)]
struct LoopCount {
    event_loop: EventLoop,
    count: usize,
}

#[derive(Debug, Default)]
struct Counters {
    published: AtomicU64,
    encoded: AtomicU64,
    delivered: AtomicU64,
    dropped: AtomicU64,
}

#[derive(Debug)]
pub(crate) struct Shared {
    /// Tells this registry's thread-local tables apart from another's.
    id: u64,
    topics: Mutex<HashMap<Arc<str>, Vec<LoopCount>>>,
    counters: Counters,
}

/// A namespace of topics shared by every thread of the process (see the module docs).
#[derive(Debug, Clone)]
pub struct TopicRegistry {
    shared: Arc<Shared>,
}

impl Default for TopicRegistry {
    fn default() -> Self {
        Self::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The table holds counts and loop handles; a panic while it was held cannot leave it
    // half-updated in a way that matters more than losing the update.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl TopicRegistry {
    /// A registry of its own (a separate namespace).
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        TopicRegistry {
            shared: Arc::new(Shared {
                id: NEXT.fetch_add(1, Ordering::Relaxed),
                topics: Mutex::new(HashMap::new()),
                counters: Counters::default(),
            }),
        }
    }

    /// The process-wide registry (what the Node binding uses: every worker thread shares it).
    pub fn global() -> &'static TopicRegistry {
        static GLOBAL: OnceLock<TopicRegistry> = OnceLock::new();
        GLOBAL.get_or_init(TopicRegistry::new)
    }

    /// Subscribes `ch` (a server WebSocket connection: its pipeline has a
    /// [`WebSocketHandler`](crate::WebSocketHandler)) to `topic`. `Ok(false)` if it was
    /// subscribed already.
    ///
    /// # Errors
    /// [`TopicError`]: no WebSocket handler, a client's, or the channel is closed.
    pub fn subscribe(&self, ch: &Channel, topic: &str) -> Result<bool, TopicError> {
        if !ch.is_open() {
            return Err(TopicError::ChannelClosed);
        }
        match local::find_ws_context(ch) {
            None => return Err(TopicError::NotWebSocket),
            Some((_, true)) => return Err(TopicError::ClientRole),
            Some((_, false)) => {}
        }
        self.subscribe_when_upgraded(ch, topic)
    }

    /// As [`TopicRegistry::subscribe`], for a channel whose WebSocket handler is not in its
    /// pipeline yet (its handshake has not happened): messages reach it once a server
    /// [`WebSocketHandler`](crate::WebSocketHandler) is there, and are skipped before.
    ///
    /// # Errors
    /// [`TopicError::ChannelClosed`].
    pub fn subscribe_when_upgraded(&self, ch: &Channel, topic: &str) -> Result<bool, TopicError> {
        if !ch.is_open() {
            return Err(TopicError::ChannelClosed);
        }
        let event_loop = ch.event_loop();
        let loop_id = event_loop.id();
        local::catch_up_channel(self.shared.id, loop_id, ch.id());
        let (added, topic, first_of_channel) = local::add(&self.shared, loop_id, ch, topic);
        if added {
            let mut topics = lock(&self.shared.topics);
            let loops = topics.entry(topic).or_default();
            match loops.iter_mut().find(|l| l.event_loop.id() == loop_id) {
                Some(l) => l.count += 1,
                None => loops.push(LoopCount {
                    event_loop: event_loop.clone(),
                    count: 1,
                }),
            }
        }
        if first_of_channel {
            let weak = Arc::downgrade(&self.shared);
            let id = ch.id();
            ch.close_future().add_local_listener(move |_| {
                if let Some(shared) = weak.upgrade() {
                    let left = local::remove_channel(shared.id, loop_id, id);
                    shared.uncount(loop_id, &left);
                }
            });
        }
        if local::first_use(self.shared.id, loop_id) {
            let weak = Arc::downgrade(&self.shared);
            // The loop terminates: its channels closed (their listeners ran), so this only
            // takes out what a thread that died without closing them left behind.
            let _ = event_loop.add_cleanup_hook(move || {
                if let Some(shared) = weak.upgrade() {
                    local::drop_table(shared.id, loop_id);
                    shared.forget_loop(loop_id);
                }
            });
        }
        Ok(added)
    }

    /// Takes `ch` out of `topic`; whether it was subscribed.
    pub fn unsubscribe(&self, ch: &Channel, topic: &str) -> bool {
        let loop_id = ch.event_loop().id();
        local::catch_up_channel(self.shared.id, loop_id, ch.id());
        match local::remove(self.shared.id, loop_id, ch.id(), topic) {
            Some(topic) => {
                self.shared.uncount(loop_id, &[topic]);
                true
            }
            None => false,
        }
    }

    /// Takes `ch` out of every topic; how many it was in. (Closing does this by itself.)
    pub fn unsubscribe_all(&self, ch: &Channel) -> usize {
        let loop_id = ch.event_loop().id();
        local::catch_up_channel(self.shared.id, loop_id, ch.id());
        let left = local::remove_channel(self.shared.id, loop_id, ch.id());
        self.shared.uncount(loop_id, &left);
        left.len()
    }

    /// The topics `ch` is subscribed to.
    pub fn topics_of(&self, ch: &Channel) -> Vec<String> {
        local::topics_of(self.shared.id, ch.event_loop().id(), ch.id())
    }

    /// Subscribers of `topic`, on every loop.
    pub fn subscriber_count(&self, topic: &str) -> usize {
        lock(&self.shared.topics)
            .get(topic)
            .map_or(0, |loops| loops.iter().map(|l| l.count).sum())
    }

    /// Publishes a text message to `topic`; see [`TopicRegistry::publish_binary`].
    pub fn publish_text(&self, topic: &str, message: &str) -> usize {
        self.publish(topic, Opcode::Text, message.as_bytes(), None)
    }

    /// Publishes a binary message to `topic` from any thread. Returns the subscribers it
    /// goes to: those of loops of the calling thread with a WebSocket handler, plus those of
    /// other loops as counted now (their task queues it). It is written to them after their
    /// loop's task batch; a slow one drops it then, counted in [`TopicStats::dropped`].
    pub fn publish_binary(&self, topic: &str, message: &[u8]) -> usize {
        self.publish(topic, Opcode::Binary, message, None)
    }

    /// Publishes `message` (text when `binary` is false: UTF-8 the caller checked) to every
    /// subscriber of `topic` but `sender` (Bun's and uWebSockets.js' `ws.publish`: the
    /// publishing connection does not get its own message). Otherwise as
    /// [`TopicRegistry::publish_binary`].
    pub fn publish_from(
        &self,
        sender: &Channel,
        topic: &str,
        binary: bool,
        message: &[u8],
    ) -> usize {
        let opcode = if binary { Opcode::Binary } else { Opcode::Text };
        let except = (sender.event_loop().id(), sender.id());
        self.publish(topic, opcode, message, Some(except))
    }

    /// `except`: a subscriber left out (its loop's id, its channel's id).
    fn publish(
        &self,
        topic: &str,
        opcode: Opcode,
        payload: &[u8],
        except: Option<(u64, ChannelId)>,
    ) -> usize {
        let c = &self.shared.counters;
        c.published.fetch_add(1, Ordering::Relaxed);
        let (key, targets) = {
            let topics = lock(&self.shared.topics);
            let Some((key, loops)) = topics.get_key_value(topic) else {
                return 0;
            };
            let targets: Vec<(EventLoop, usize)> = loops
                .iter()
                .map(|l| (l.event_loop.clone(), l.count))
                .collect();
            (key.clone(), targets)
        };
        let frame = Arc::new(Published::new(opcode, payload));
        c.encoded.fetch_add(1, Ordering::Relaxed);
        let mut reached = 0;
        for (event_loop, count) in targets {
            let skip = except
                .filter(|&(l, _)| l == event_loop.id())
                .map(|(_, id)| id);
            if event_loop.in_event_loop() {
                reached += local::deliver(&self.shared, &event_loop, &key, &frame, skip);
                continue;
            }
            let shared = Arc::downgrade(&self.shared);
            let (key, frame, el) = (key.clone(), frame.clone(), event_loop.clone());
            let task = move || {
                if let Some(shared) = Weak::upgrade(&shared) {
                    local::deliver(&shared, &el, &key, &frame, skip);
                }
            };
            if event_loop.execute(task).is_ok() {
                reached += count; // the sender, if it is one of them, included
            }
        }
        reached
    }

    /// The counters.
    pub fn stats(&self) -> TopicStats {
        let c = &self.shared.counters;
        TopicStats {
            published: c.published.load(Ordering::Relaxed),
            encoded: c.encoded.load(Ordering::Relaxed),
            delivered: c.delivered.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
        }
    }
}

impl Shared {
    /// One subscription fewer on `loop_id` for each of `topics`.
    fn uncount(&self, loop_id: u64, topics: &[Arc<str>]) {
        if topics.is_empty() {
            return;
        }
        let mut table = lock(&self.topics);
        for topic in topics {
            let Some(loops) = table.get_mut(&**topic) else {
                continue;
            };
            if let Some(i) = loops.iter().position(|l| l.event_loop.id() == loop_id) {
                loops[i].count -= 1;
                if loops[i].count == 0 {
                    loops.swap_remove(i);
                }
            }
            if loops.is_empty() {
                table.remove(&**topic);
            }
        }
    }

    /// Every entry of a terminated loop.
    fn forget_loop(&self, loop_id: u64) {
        lock(&self.topics).retain(|_, loops| {
            loops.retain(|l| l.event_loop.id() != loop_id);
            !loops.is_empty()
        });
    }

    pub(crate) fn count_delivered(&self, delivered: usize, dropped: usize) {
        let c = &self.counters;
        if delivered > 0 {
            c.delivered.fetch_add(delivered as u64, Ordering::Relaxed);
        }
        if dropped > 0 {
            c.dropped.fetch_add(dropped as u64, Ordering::Relaxed);
        }
    }
}
