//! The gate: a handler the registry puts just before a subscriber's WebSocket handler (on the
//! socket's side), so that the messages published to the subscriber and not written to it yet
//! (they wait in their topics' batches until the end of the loop's task batch, `local.rs`)
//! are written before anything else that goes out: the application's
//! messages (through the WebSocket handler), the handler's own frames (pong, close) and
//! flushes. A channel therefore sees its own writes and published messages in the order they
//! were made, although published frames wait until the end of the batch.
//!
//! Ground rules: loop thread only; it holds its subscriber weakly (the subscriber holds the
//! channel, whose pipeline holds the gate).

use std::rc::{Rc, Weak};

use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelPromise, HandlerResult, Message,
};

use super::subscriber::Subscriber;

pub(super) struct Gate {
    pub(super) subscriber: Weak<Subscriber>,
}

impl Gate {
    /// Catches the subscriber up (from this gate's place) before what passes it now.
    fn write_pending(&self, _ctx: &ChannelHandlerContext) {
        if let Some(sub) = self.subscriber.upgrade() {
            sub.catch_up_now(true);
        }
    }
}

impl ChannelHandler for Gate {
    // Reads passes by (the default method): the mask skips this context.
    fn takes_read(&self) -> bool {
        false
    }

    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        self.write_pending(ctx);
        ctx.write_with(msg, promise);
        Ok(())
    }

    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.write_pending(ctx);
        ctx.flush();
        Ok(())
    }
}

const PREFIX: &str = "netloop-topics-";

/// The name of the gate of registry `registry`.
pub(super) fn name(registry: u64) -> String {
    format!("{PREFIX}{registry}")
}

/// Puts a gate for `sub` before `ws` (the WebSocket handler's context), unless one is there;
/// its context, or `None` if it could not be added or another registry's gate is there (one
/// gate per channel: the first registry coalesces, another one writes its frames as they
/// come, through that gate, so that the order across registries holds too).
pub(super) fn ensure(
    registry: u64,
    sub: &Rc<Subscriber>,
    ws: &ChannelHandlerContext,
) -> Option<ChannelHandlerContext> {
    let pipeline = ws.pipeline();
    let name = name(registry);
    if let Some(ctx) = pipeline.context(&name) {
        return Some(ctx);
    }
    if pipeline.names().iter().any(|n| n.starts_with(PREFIX)) {
        return None;
    }
    let gate = Gate {
        subscriber: Rc::downgrade(sub),
    };
    pipeline.add_before(ws.name(), &name, gate).ok()?;
    pipeline.context(&name)
}
