//! [`WebSocketHandler`](super::WebSocketHandler)'s backpressure (`WsConfig::pause_while_unwritable`):
//! while its channel is not writable (past the high water mark), it decodes no new frame and
//! stops reading, so a peer that sends without reading what comes back (an echo, a pong for
//! each ping) is held back by TCP instead of growing the outbound buffer without bound.
//!
//! Ground rules:
//! - On by default for servers; a client must not use it (it would stop reading the server's
//!   messages while its own cannot drain).
//! - Checked before each frame, so what a pause leaves buffered is bounded by one read.
//! - Reading stops by turning `autoRead` off, only if it was on; it is turned back on when
//!   decoding resumes or the handler leaves the pipeline.
//! - Resuming (decode what waited, then read again) runs from a loop task, never inside the
//!   writability event (which may come from inside a write made during this handler's own
//!   `channel_read`).

use std::cell::Cell;

use netloop_transport::{ChannelHandlerContext, ChannelOption};

#[derive(Debug, Default)]
pub(super) struct Pause {
    paused: Cell<bool>,
    /// This handler turned `autoRead` off (and turns it back on).
    auto_read_off: Cell<bool>,
    pub(super) resume_scheduled: Cell<bool>,
}

impl Pause {
    pub(super) fn is_paused(&self) -> bool {
        self.paused.get()
    }

    /// Before the next frame: true if decoding stops here (paused already, or the channel is
    /// not writable: then reading stops too).
    pub(super) fn stops(&self, ctx: &ChannelHandlerContext) -> bool {
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

    /// Paused while the channel is writable again.
    pub(super) fn can_resume(&self, ctx: &ChannelHandlerContext) -> bool {
        self.paused.get() && ctx.try_channel().is_some_and(|ch| ch.is_writable())
    }

    pub(super) fn unpause(&self) {
        self.paused.set(false);
    }

    /// `autoRead` back on if the pause turned it off.
    pub(super) fn read_again(&self, ctx: &ChannelHandlerContext) {
        if self.auto_read_off.replace(false) {
            if let Some(ch) = ctx.try_channel() {
                let _ = ch.set_option(ChannelOption::AutoRead(true));
            }
        }
    }
}
