//! [`WebSocketEchoHandler`]: every message (or fragment, in streaming mode) is written back
//! as it came, natively; the writes of one read are flushed together at
//! `channel_read_complete`. Other messages pass on.

use std::cell::Cell;

use netloop_transport::{ChannelHandler, ChannelHandlerContext, HandlerResult, Message};

use crate::message::WebSocketFrame;

/// Echoes WebSocket messages; put it after a [`WebSocketHandler`](super::WebSocketHandler).
#[derive(Debug, Default)]
pub struct WebSocketEchoHandler {
    pending: Cell<bool>,
}

impl WebSocketEchoHandler {
    /// An echo handler.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ChannelHandler for WebSocketEchoHandler {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        match msg.downcast::<WebSocketFrame>() {
            Ok(
                frame @ (WebSocketFrame::Text(_)
                | WebSocketFrame::Binary(_)
                | WebSocketFrame::Fragment(_)),
            ) => {
                self.pending.set(true);
                ctx.write(frame);
            }
            Ok(frame) => ctx.fire_channel_read(frame),
            Err(other) => ctx.fire_channel_read(other),
        }
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.pending.replace(false) {
            ctx.flush();
        }
        ctx.fire_channel_read_complete();
        Ok(())
    }
}
