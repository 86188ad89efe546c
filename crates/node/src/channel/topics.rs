//! WebSocket topics for JS (src/ws-topics.ts): `netloop_wire::topics` has the rules and does
//! the work; this converts.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use netloop_wire::topics;

use super::NativeChannels;
use crate::error::{throw, wire_error};

#[napi]
impl NativeChannels {
    /// Subscribes channel `id` to `topic`; false if it was subscribed already. Throws
    /// `ERR_INVALID_STATE` for a channel without a (server) WebSocket handler and
    /// `ERR_CHANNEL_CLOSED` for a closed one.
    #[napi]
    pub fn ws_subscribe(&self, env: Env, id: f64, topic: String) -> Result<bool> {
        self.enter();
        let r = self.hub.ws_subscribe(id, &topic);
        r.map_err(|e| throw(&env, wire_error(e)))
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
        let r = self.hub.ws_publish_from(id, &topic, &data, kind);
        r.map_err(|e| throw(&env, wire_error(e)))
    }

    /// Takes channel `id` out of `topic`; whether it was in (false for a closed channel:
    /// closing took it out of every topic).
    #[napi]
    pub fn ws_unsubscribe(&self, id: f64, topic: String) -> bool {
        self.enter();
        self.hub.ws_unsubscribe(id, &topic)
    }
}

/// Publishes `data` to `topic` as a `kind` message (`WsFrameKind::Text`, UTF-8 checked, or
/// `Binary`). Returns the subscribers written on this thread's loops plus those of other
/// loops its tasks go to.
#[napi]
pub fn ws_publish(env: Env, topic: String, data: Buffer, kind: u32) -> Result<u32> {
    topics::publish(&topic, &data, kind).map_err(|e| throw(&env, wire_error(e)))
}

/// Publishes a text message (a JS string) to `topic`; as [`ws_publish`].
#[napi]
pub fn ws_publish_text(topic: String, text: String) -> u32 {
    topics::publish_text(&topic, &text)
}

/// Subscribers of `topic` on every loop of the process.
#[napi]
pub fn ws_subscriber_count(topic: String) -> u32 {
    topics::subscriber_count(&topic)
}

/// The process-wide topic counters, indexed by `TopicStatSlot`.
#[napi]
pub fn ws_topic_stats() -> Vec<f64> {
    topics::stats()
}
