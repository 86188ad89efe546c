//! [`RespDecoderHandler`](super::RespDecoderHandler)'s backpressure: while its channel is not
//! writable, it fires no new value and stops reading (node:http's rule for servers, applied to
//! RESP), and it takes back the values a consumer gives back once the channel turned
//! unwritable (`netloop_transport::ReadPause`). A client that pipelines commands without
//! reading the replies is then held back by TCP instead of growing the server's outbound
//! buffer, whatever a reply's size.
//!
//! Ground rules:
//! - On by default for a server's channels (an accepted channel: one with a parent), off for
//!   clients; `pause_while_unwritable(true/false)` decides for both. A client must not pause:
//!   it would stop reading replies while its own requests cannot drain, and with a server
//!   doing the same both would wait for ever. (Netty's `RedisDecoder` and redis-server have no
//!   such rule.)
//! - The test runs before each value is decoded, so with a native consumer (which writes its
//!   reply inside `channel_read`) decoding stops at the value that made the channel
//!   unwritable; a JS consumer gives back what it did not start (crates/node, held.rs).
//! - With `autoRead` off by the application, its `read()` calls are passed on as usual (it
//!   manages reading itself).

use netloop_transport::{ChannelHandlerContext, ReadPause};

/// The pause's state; `enabled` is fixed when the handler is made (`None`: by the channel).
#[derive(Debug, Default)]
pub(super) struct Pause {
    pub(super) enabled: Option<bool>,
    pub(super) state: ReadPause,
}

impl Pause {
    /// Whether the pause applies on `ctx`'s channel (explicitly, or a server's channel).
    pub(super) fn active(&self, ctx: &ChannelHandlerContext) -> bool {
        match self.enabled {
            Some(on) => on,
            None => ctx.try_channel().is_some_and(|ch| ch.parent().is_some()),
        }
    }

    /// Before the next value: true if decoding must stop here (paused, or the channel just
    /// turned out not to be writable: then reading stops too).
    pub(super) fn stops(&self, ctx: &ChannelHandlerContext) -> bool {
        if self.state.is_paused() {
            return true;
        }
        if !ReadPause::unwritable(ctx) || !self.active(ctx) {
            return false;
        }
        self.state.pause(ctx);
        true
    }
}
