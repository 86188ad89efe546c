//! WebSocket topics across the JS boundary (src/ws-topics.ts): subscribe and unsubscribe a
//! channel of this hub, publish from any JS thread. The registry is
//! `netloop_ws::TopicRegistry::global()`, one per process: every worker thread of every
//! group shares it, so a publish on one worker reaches the subscribers of every loop.
//!
//! Ground rules: subscribe/unsubscribe on the hub's JS thread (as every `NativeChannels`
//! method), after the ops JS buffered are applied (`enter`). A publish writes at once to the
//! subscribers on this thread's loops and sends one task to each other loop with
//! subscribers; the events those writes cause here (a channel turning unwritable, a write
//! error) are delivered by the hub's next round, which the publish asks for. crates/node's
//! `channel/topics.rs` exports these to JS.

use std::rc::Rc;

use netloop_transport::Channel;
use netloop_ws::{TopicError, TopicRegistry};
use netloop_ws_upgrade::WebSocketServerProtocolHandler;

use crate::error::{invalid_arg, WireError, WireResult};
use crate::hub::Hub;
use crate::protocol::{TopicStatSlot, WsFrameKind};

fn topic_error(e: TopicError) -> WireError {
    WireError::new(e.code(), e.to_string())
}

/// Subscribes `ch`: a WebSocket connection, or one whose `WebSocketServerProtocolHandler`
/// has not upgraded it yet (messages reach it once it has).
fn subscribe_channel(ch: &Channel, topic: &str) -> WireResult<bool> {
    let topics = TopicRegistry::global();
    match topics.subscribe(ch, topic) {
        Err(TopicError::NotWebSocket)
            if ch
                .pipeline()
                .find_handler::<WebSocketServerProtocolHandler, ()>(|_| Some(()))
                .is_some() =>
        {
            topics.subscribe_when_upgraded(ch, topic)
        }
        other => other,
    }
    .map_err(topic_error)
}

/// Whether a `kind` message is binary (`WsFrameKind::Binary`) or text (`Text`, which must be
/// UTF-8).
fn binary(kind: u32, data: &[u8]) -> WireResult<bool> {
    match kind {
        k if k == WsFrameKind::Binary as u32 => Ok(true),
        k if k == WsFrameKind::Text as u32 => match std::str::from_utf8(data) {
            Ok(_) => Ok(false),
            Err(_) => Err(invalid_arg("a text message must be UTF-8")),
        },
        other => Err(invalid_arg(format!("not a message kind: {other}"))),
    }
}

/// A count for JS.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// After a publish that wrote `n` messages: the events of this thread's loops that its writes
/// queued go to JS in the hub's next round (a loop asleep is woken for them).
fn published(n: usize) -> u32 {
    if n > 0 {
        let hubs: Vec<Rc<Hub>> = crate::thread_context::with(|c| {
            c.hubs
                .borrow()
                .values()
                .filter_map(std::rc::Weak::upgrade)
                .collect()
        })
        .unwrap_or_default();
        for hub in hubs {
            hub.schedule_delivery();
        }
    }
    count(n)
}

impl Hub {
    /// Subscribes channel `id` to `topic`; false if it was subscribed already.
    /// `ERR_INVALID_STATE` for a channel without a (server) WebSocket handler,
    /// `ERR_CHANNEL_CLOSED` for a closed one.
    pub fn ws_subscribe(&self, id: f64, topic: &str) -> WireResult<bool> {
        self.with_channel(id, |ch| subscribe_channel(ch, topic))
    }

    /// Publishes `data` to `topic` as a `kind` message (as [`publish`]) to every subscriber
    /// but channel `id`. A channel no longer here leaves nobody out.
    pub fn ws_publish_from(&self, id: f64, topic: &str, data: &[u8], kind: u32) -> WireResult<u32> {
        let binary = binary(kind, data)?;
        let topics = TopicRegistry::global();
        let n = self
            .with_channel(id, |ch| Ok(topics.publish_from(ch, topic, binary, data)))
            .unwrap_or_else(|_| match binary {
                true => topics.publish_binary(topic, data),
                // Checked above.
                false => topics.publish_text(topic, std::str::from_utf8(data).unwrap_or("")),
            });
        Ok(published(n))
    }

    /// Takes channel `id` out of `topic`; whether it was in (false for a closed channel:
    /// closing took it out of every topic).
    pub fn ws_unsubscribe(&self, id: f64, topic: &str) -> bool {
        self.with_channel(id, |ch| Ok(TopicRegistry::global().unsubscribe(ch, topic)))
            .unwrap_or(false)
    }
}

/// Publishes `data` to `topic` as a `kind` message (`WsFrameKind::Text`, UTF-8 checked, or
/// `Binary`). Returns the subscribers written on this thread's loops plus those of other
/// loops its tasks go to.
pub fn publish(topic: &str, data: &[u8], kind: u32) -> WireResult<u32> {
    let topics = TopicRegistry::global();
    let n = if binary(kind, data)? {
        topics.publish_binary(topic, data)
    } else {
        topics.publish_text(topic, std::str::from_utf8(data).unwrap_or(""))
    };
    Ok(published(n))
}

/// Publishes a text message to `topic`; as [`publish`].
pub fn publish_text(topic: &str, text: &str) -> u32 {
    published(TopicRegistry::global().publish_text(topic, text))
}

/// Subscribers of `topic` on every loop of the process.
pub fn subscriber_count(topic: &str) -> u32 {
    count(TopicRegistry::global().subscriber_count(topic))
}

/// The process-wide topic counters, indexed by [`TopicStatSlot`].
pub fn stats() -> Vec<f64> {
    let s = TopicRegistry::global().stats();
    let mut out = vec![0.0; TopicStatSlot::Length as usize];
    out[TopicStatSlot::Published as usize] = s.published as f64;
    out[TopicStatSlot::Encoded as usize] = s.encoded as f64;
    out[TopicStatSlot::Delivered as usize] = s.delivered as f64;
    out[TopicStatSlot::Dropped as usize] = s.dropped as f64;
    out
}
