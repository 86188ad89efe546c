//! Pausing [`HttpServerCodec`]'s decoding and reading: at the pipelining limit
//! (`max_pipelined_requests`, resuming when a response completes), while the channel is not
//! writable (resuming when it is), and for upgrades (`upgrade.rs`). Requests a consumer gives
//! back because the channel turned unwritable (a JS consumer sees a read's requests at once)
//! are held and fired again first (`netloop_transport::ReadPause`). Ground rules in the parent
//! module (`handler.rs`).

use bytes::Bytes;
use netloop_transport::{ChannelHandlerContext, Message, ReadPause};

use super::HttpServerCodec;

impl HttpServerCodec {
    /// With a limit: the decoder stopped at it, requests wait in the buffer, and answers
    /// given meanwhile made room for some of them.
    pub(super) fn room_for_buffered(&self) -> bool {
        let Some(max) = self.config.max_pipelined_requests else {
            return false;
        };
        !self.pause.is_paused()
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
        ReadPause::unwritable(ctx)
    }

    /// Takes back a request (or body part) this codec fired that its consumer did not start
    /// because the channel turned unwritable: it is fired again, in order and before
    /// anything new, once the channel is writable. Decoding and reading pause meanwhile.
    pub fn hold_back(&self, ctx: &ChannelHandlerContext, msg: Message) {
        self.pause.give_back(ctx, msg, HttpServerCodec::resume);
    }

    /// True once a message of the codec's latest firing was given back: the consumer gives
    /// back the messages fired after it too.
    pub fn holds_firing(&self) -> bool {
        self.pause.holds_session()
    }

    /// Messages given back and not fired again yet.
    pub fn held_len(&self) -> usize {
        self.pause.held_len()
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
        self.pause.pause(ctx);
    }

    /// After a response completed: resume (from a loop task) if the pipeline has room again.
    pub(super) fn resume_if_room(&self, ctx: &ChannelHandlerContext) {
        let Some(max) = self.config.max_pipelined_requests else {
            return;
        };
        if !self.pause.is_paused() || self.queue.borrow().pending() >= max {
            return;
        }
        self.schedule_resume(ctx);
    }

    /// Runs `resume` from a loop task (never from inside a write, which may come from inside
    /// this codec's own `channel_read`).
    pub(super) fn schedule_resume(&self, ctx: &ChannelHandlerContext) {
        self.pause
            .schedule_resume::<HttpServerCodec>(ctx, HttpServerCodec::resume);
    }

    /// Fires what was given back (while writable), decodes what waited (after a protocol
    /// switch: fires it as it came), then reads again unless the codec paused once more.
    pub(super) fn resume(&self, ctx: &ChannelHandlerContext) {
        self.pause.resuming();
        if !self.pause.is_paused() {
            return;
        }
        if self.pause.held_len() > 0 {
            if self.unwritable(ctx) {
                return; // the writability event resumes
            }
            self.fired.set(false);
            let refired = self.pause.refire_reads(ctx);
            // One read-complete for what was fired again (a decode it set off counts too).
            if self.fired.replace(false) | refired.fired {
                ctx.fire_channel_read_complete();
            }
            if !refired.done {
                self.pause.resume_if_writable(ctx, HttpServerCodec::resume);
                return;
            }
        }
        self.pause.continue_decoding();
        if self.upgrade.switched.get() {
            if self.fire_left_over(ctx) {
                ctx.fire_channel_read_complete();
            }
            if self.upgrade.leave.get() && !ctx.is_removed() {
                // Its `handler_removed` gives reading back.
                let _ = ctx.pipeline().remove(ctx.name());
                return;
            }
        } else {
            self.fired.set(false);
            self.decode(ctx, Bytes::new());
            if self.fired.replace(false) {
                ctx.fire_channel_read_complete();
            }
        }
        if self.pause.is_paused() || !ctx.try_channel().is_some_and(|ch| ch.is_open()) {
            return;
        }
        self.unpause_reading(ctx);
    }

    /// Ends a pause: auto-read back on if the codec turned it off (that starts a read), or
    /// the `read()` held back passed on. Also when the codec leaves the pipeline.
    pub(super) fn unpause_reading(&self, ctx: &ChannelHandlerContext) {
        self.pause.unpause(ctx);
    }
}
