//! [`RespDecoderHandler`](super::RespDecoderHandler)'s opt-in backpressure: while its channel
//! is not writable, it fires no new value and stops reading (node:http's rule for servers,
//! applied to RESP). A client that pipelines commands without reading the replies is then held
//! back by TCP instead of growing the server's outbound buffer without bound.
//!
//! Ground rules:
//! - Off by default (Netty's `RedisDecoder` and redis-server have no such rule). A server turns
//!   it on; a client must not (it would stop reading replies while its own requests cannot
//!   drain, and with a server doing the same both would wait for ever).
//! - The test runs before each value is decoded, so what a pause leaves behind is bounded by
//!   the bytes read in the batch that saw the channel turn unwritable.
//! - Reading stops by turning `autoRead` off, only if it was on; the decoder turns it back on
//!   when it resumes, or when it leaves the pipeline. With `autoRead` off by the application,
//!   its `read()` calls are passed on as usual (it manages reading itself).
//! - Resuming (decode what waited, then read again) runs from a loop task, never from inside
//!   the writability event, which may come from inside a write made in this decoder's own
//!   `channel_read`.

use std::cell::Cell;

use netloop_transport::{ChannelHandlerContext, ChannelOption};

/// The pause's state; `enabled` is fixed when the handler is made.
#[derive(Debug, Default)]
pub(super) struct Pause {
    pub(super) enabled: bool,
    paused: Cell<bool>,
    /// The decoder turned `autoRead` off (and turns it back on when it resumes).
    auto_read_off: Cell<bool>,
    pub(super) resume_scheduled: Cell<bool>,
}

impl Pause {
    /// True while decoding is paused.
    pub(super) fn is_paused(&self) -> bool {
        self.paused.get()
    }

    /// Before the next value: true if decoding must stop here (paused, or the channel just
    /// turned out not to be writable: then reading stops too).
    pub(super) fn stops(&self, ctx: &ChannelHandlerContext) -> bool {
        if !self.enabled {
            return false;
        }
        if self.paused.get() {
            return true;
        }
        let Some(ch) = ctx.try_channel() else {
            return false;
        };
        if ch.is_writable() {
            return false;
        }
        self.paused.set(true);
        if ch.is_auto_read() && ch.set_option(ChannelOption::AutoRead(false)).is_ok() {
            self.auto_read_off.set(true);
        }
        true
    }

    /// Paused while the channel is writable again: time to resume.
    pub(super) fn can_resume(&self, ctx: &ChannelHandlerContext) -> bool {
        self.paused.get() && ctx.try_channel().is_some_and(|ch| ch.is_writable())
    }

    /// Decoding goes on (the caller decodes what waited first).
    pub(super) fn unpause(&self) {
        self.paused.set(false);
    }

    /// Reading goes on: `autoRead` back on if the pause turned it off (that starts a read).
    pub(super) fn read_again(&self, ctx: &ChannelHandlerContext) {
        if self.auto_read_off.replace(false) {
            if let Some(ch) = ctx.try_channel() {
                let _ = ch.set_option(ChannelOption::AutoRead(true));
            }
        }
    }
}
