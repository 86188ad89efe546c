//! WebSocket topics across the JS boundary (src/ws-topics.ts): subscribe and unsubscribe a
//! channel of this hub, publish from any JS thread. The registry is
//! `netloop_ws::TopicRegistry::global()`, one per process: every worker thread of every
//! group shares it, so a publish on one worker reaches the subscribers of every loop.
//!
//! Ground rules: subscribe/unsubscribe on the hub's JS thread (as every `NativeChannels`
//! method), after the ops JS buffered are applied (`enter`). A publish writes at once to the
//! subscribers on this thread's loops and sends one task to each other loop with
//! subscribers; the events those writes cause here (a channel turning unwritable, a write
//! error) are delivered by the hub's next round, which the publish asks for.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use netloop_transport::Channel;
use netloop_ws::{TopicError, TopicRegistry};
use netloop_ws_upgrade::WebSocketServerProtocolHandler;

use super::NativeChannels;
use crate::error::{invalid_arg, throw, Code, JsResult};
use crate::protocol::{TopicStatSlot, WsFrameKind};

fn topic_error(e: TopicError) -> napi::Error<Code> {
    napi::Error::new(Code(e.code()), e.to_string())
}

/// Subscribes `ch`: a WebSocket connection, or one whose `WebSocketServerProtocolHandler`
/// has not upgraded it yet (messages reach it once it has).
fn subscribe(ch: &Channel, topic: &str) -> JsResult<bool> {
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

#[napi]
impl NativeChannels {
    /// Subscribes channel `id` to `topic`; false if it was subscribed already. Throws
    /// `ERR_INVALID_STATE` for a channel without a (server) WebSocket handler and
    /// `ERR_CHANNEL_CLOSED` for a closed one.
    #[napi]
    pub fn ws_subscribe(&self, env: Env, id: f64, topic: String) -> Result<bool> {
        self.enter();
        self.with_channel(id, |ch| subscribe(ch, &topic))
            .map_err(|e| throw(&env, e))
    }

    /// Publishes `data` to `topic` as a `kind` message (as [`ws_publish`]) to every
    /// subscriber but channel `id` (the `ws` surface's `ws.publish`, Bun's semantics). A
    /// channel no longer here leaves nobody out.
    #[napi]
    pub fn ws_publish_from(
        &self,
        env: Env,
        id: f64,
        topic: String,
        data: Buffer,
        kind: u32,
    ) -> Result<u32> {
        self.enter();
        let binary = match kind {
            k if k == WsFrameKind::Binary as u32 => true,
            k if k == WsFrameKind::Text as u32 => {
                if std::str::from_utf8(&data).is_err() {
                    let e = napi::Error::new(
                        Code("ERR_INVALID_ARG_VALUE"),
                        "a text message must be UTF-8".to_string(),
                    );
                    return Err(throw(&env, e));
                }
                false
            }
            other => {
                return Err(throw(
                    &env,
                    invalid_arg(format!("not a message kind: {other}")),
                ))
            }
        };
        let topics = TopicRegistry::global();
        let n = self
            .with_channel(id, |ch| Ok(topics.publish_from(ch, &topic, binary, &data)))
            .unwrap_or_else(|_| match binary {
                true => topics.publish_binary(&topic, &data),
                // Checked above.
                false => topics.publish_text(&topic, std::str::from_utf8(&data).unwrap_or("")),
            });
        if n > 0 {
            schedule_deliveries();
        }
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Takes channel `id` out of `topic`; whether it was in (false for a closed channel:
    /// closing took it out of every topic).
    #[napi]
    pub fn ws_unsubscribe(&self, id: f64, topic: String) -> bool {
        self.enter();
        self.with_channel(id, |ch| Ok(TopicRegistry::global().unsubscribe(ch, &topic)))
            .unwrap_or(false)
    }
}

/// The events of this thread's loops that a publish's writes queued go to JS in the hub's
/// next round (a loop asleep is woken for them).
fn schedule_deliveries() {
    let hubs: Vec<_> = netloop_wire::thread_context::with(|c| {
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

/// Publishes `data` to `topic` as a `kind` message (`WsFrameKind::Text`, UTF-8 checked, or
/// `Binary`). Returns the subscribers written on this thread's loops plus those of other
/// loops its tasks go to.
#[napi]
pub fn ws_publish(env: Env, topic: String, data: Buffer, kind: u32) -> Result<u32> {
    let topics = TopicRegistry::global();
    let n = match kind {
        k if k == WsFrameKind::Binary as u32 => topics.publish_binary(&topic, &data),
        k if k == WsFrameKind::Text as u32 => match std::str::from_utf8(&data) {
            Ok(text) => topics.publish_text(&topic, text),
            Err(_) => {
                let e = napi::Error::new(
                    Code("ERR_INVALID_ARG_VALUE"),
                    "a text message must be UTF-8".to_string(),
                );
                return Err(throw(&env, e));
            }
        },
        other => {
            return Err(throw(
                &env,
                invalid_arg(format!("not a message kind: {other}")),
            ))
        }
    };
    if n > 0 {
        schedule_deliveries();
    }
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// Publishes a text message (a JS string) to `topic`; as [`ws_publish`].
#[napi]
pub fn ws_publish_text(topic: String, text: String) -> u32 {
    let n = TopicRegistry::global().publish_text(&topic, &text);
    if n > 0 {
        schedule_deliveries();
    }
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Subscribers of `topic` on every loop of the process.
#[napi]
pub fn ws_subscriber_count(topic: String) -> u32 {
    u32::try_from(TopicRegistry::global().subscriber_count(&topic)).unwrap_or(u32::MAX)
}

/// The process-wide topic counters, indexed by [`TopicStatSlot`].
#[napi]
pub fn ws_topic_stats() -> Vec<f64> {
    let s = TopicRegistry::global().stats();
    let mut out = vec![0.0; TopicStatSlot::Length as usize];
    out[TopicStatSlot::Published as usize] = s.published as f64;
    out[TopicStatSlot::Encoded as usize] = s.encoded as f64;
    out[TopicStatSlot::Delivered as usize] = s.delivered as f64;
    out[TopicStatSlot::Dropped as usize] = s.dropped as f64;
    out
}
