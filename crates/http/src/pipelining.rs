//! Pausing [`HttpServerCodec`]'s decoding and reading: at the pipelining limit
//! (`max_pipelined_requests`, resuming when a response completes), while the channel is not
//! writable (resuming when it is), and for upgrades (`upgrade.rs`). Ground rules in the parent
//! module (`handler.rs`).

use std::cell::Cell;

use bytes::Bytes;
use netloop_transport::{ChannelHandlerContext, ChannelOption};

use super::HttpServerCodec;

/// The pipelining limit's state (see the module's ground rules).
#[derive(Debug, Default)]
pub(super) struct Pause {
    pub(super) paused: Cell<bool>,
    /// The codec turned auto-read off (and turns it back on when it resumes).
    pub(super) auto_read_off: Cell<bool>,
    /// A `read()` held back while paused.
    pub(super) read_wanted: Cell<bool>,
    pub(super) resume_scheduled: Cell<bool>,
}

impl HttpServerCodec {
    /// With a limit: the decoder stopped at it, requests wait in the buffer, and answers
    /// given meanwhile made room for some of them.
    pub(super) fn room_for_buffered(&self) -> bool {
        let Some(max) = self.config.max_pipelined_requests else {
            return false;
        };
        !self.pause.paused.get()
            && self.decoder.borrow().head_budget_spent()
            && !self.decoder.borrow().is_finished()
            && !self.cumulation.borrow().is_empty()
            && self.queue.borrow().pending() < max
    }

    /// At the pipelining limit: stop decoding and reading until a response completes.
    pub(super) fn pause_if_full(&self, ctx: &ChannelHandlerContext) {
        let Some(max) = self.config.max_pipelined_requests else {
            return;
        };
        if self.decoder.borrow().is_finished() || self.queue.borrow().pending() < max {
            return;
        }
        self.pause_reading(ctx);
    }

    /// The channel does not take more writes now (past its high water mark).
    pub(super) fn unwritable(&self, ctx: &ChannelHandlerContext) -> bool {
        ctx.try_channel().is_some_and(|ch| !ch.is_writable())
    }

    /// Not writable while waiting for a request head: stop reading until it is again (the
    /// writability event resumes).
    pub(super) fn pause_if_unwritable(&self, ctx: &ChannelHandlerContext) {
        let at_head = {
            let d = self.decoder.borrow();
            !d.is_finished() && !d.awaits_upgrade() && d.request_in_body().is_none()
        };
        if at_head && self.unwritable(ctx) {
            self.pause_reading(ctx);
        }
    }

    /// Stops decoding and reading (auto-read off, or `read()` held back) until `resume`.
    pub(super) fn pause_reading(&self, ctx: &ChannelHandlerContext) {
        if self.pause.paused.replace(true) {
            return;
        }
        if let Some(ch) = ctx.try_channel() {
            if ch.is_auto_read() && ch.set_option(ChannelOption::AutoRead(false)).is_ok() {
                self.pause.auto_read_off.set(true);
            }
        }
    }

    /// After a response completed: resume (from a loop task) if the pipeline has room again.
    pub(super) fn resume_if_room(&self, ctx: &ChannelHandlerContext) {
        let Some(max) = self.config.max_pipelined_requests else {
            return;
        };
        if !self.pause.paused.get() || self.queue.borrow().pending() >= max {
            return;
        }
        self.schedule_resume(ctx);
    }

    /// Runs `resume` from a loop task (never from inside a write, which may come from inside
    /// this codec's own `channel_read`).
    pub(super) fn schedule_resume(&self, ctx: &ChannelHandlerContext) {
        if self.pause.resume_scheduled.get() {
            return;
        }
        let Some(event_loop) = ctx.try_channel().and_then(|ch| ch.event_loop().local()) else {
            return;
        };
        self.pause.resume_scheduled.set(true);
        let c = ctx.clone();
        event_loop.execute_local(move || {
            if c.is_removed() {
                return;
            }
            let handler = c.handler();
            if let Some(codec) = handler
                .as_any()
                .and_then(|a| a.downcast_ref::<HttpServerCodec>())
            {
                codec.resume(&c);
            }
        });
    }

    /// Decodes what waited (after a protocol switch: fires it as it came), then reads again
    /// unless the codec paused once more.
    fn resume(&self, ctx: &ChannelHandlerContext) {
        self.pause.resume_scheduled.set(false);
        if !self.pause.paused.replace(false) {
            return;
        }
        if self.upgrade.switched.get() {
            if self.fire_left_over(ctx) {
                ctx.fire_channel_read_complete();
            }
        } else {
            self.fired.set(false);
            self.decode(ctx, Bytes::new());
            if self.fired.replace(false) {
                ctx.fire_channel_read_complete();
            }
        }
        if self.pause.paused.get() || !ctx.try_channel().is_some_and(|ch| ch.is_open()) {
            return;
        }
        self.unpause_reading(ctx);
    }

    /// Ends a pause: auto-read back on if the codec turned it off (that starts a read), or
    /// the `read()` held back passed on. Also when the codec leaves the pipeline.
    pub(super) fn unpause_reading(&self, ctx: &ChannelHandlerContext) {
        self.pause.paused.set(false);
        if self.pause.auto_read_off.replace(false) {
            if let Some(ch) = ctx.try_channel() {
                let _ = ch.set_option(ChannelOption::AutoRead(true));
            }
        } else if self.pause.read_wanted.replace(false) {
            ctx.read();
        }
    }
}
