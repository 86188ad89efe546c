//! The two request clocks of [`HttpServerCodec`]: the head's (`header_timeout`, node:http's
//! `headersTimeout`) and the whole request's (`request_timeout`, node:http's
//! `requestTimeout`): when each runs, what it waits for, and the 408 when it runs out. Ground
//! rules in the parent module (`handler.rs`); the timers themselves are `HeadTimer`s.

use netloop_transport::ChannelHandlerContext;

use super::HttpServerCodec;
use crate::error::HttpError;

impl HttpServerCodec {
    /// Both clocks off (the codec reads no more requests).
    pub(super) fn cancel_timers(&self) {
        self.head_timer.cancel();
        self.request_timer.cancel();
    }

    /// The request being received, if one is: its body is arriving, or its head has started
    /// (for the first request: the connection is active).
    fn request_under_way(&self) -> Option<u64> {
        let d = self.decoder.borrow();
        if d.is_finished() {
            return None;
        }
        if let Some(id) = d.request_in_body() {
            return Some(id);
        }
        let next = d.next_id();
        (next == 0 || !self.cumulation.borrow().is_empty()).then_some(next)
    }

    /// Runs the request clock while a request is under way (not while the codec pauses at
    /// the pipelining limit: buffered requests wait for the server, not for the client).
    pub(super) fn update_request_timer(&self, ctx: &ChannelHandlerContext) {
        let active = ctx.try_channel().is_some_and(|ch| ch.is_active());
        let id = self.request_under_way();
        match id {
            Some(id) if active && !self.pause.is_paused() && !self.queue.borrow().is_closed() => {
                self.request_timer.arm(ctx, id)
            }
            _ => self.request_timer.cancel(),
        }
    }

    /// Request `id` did not arrive whole in time: answer 408 (after the responses owed to
    /// earlier requests; in place of its own if the application has not answered it) and close.
    pub(crate) fn request_timed_out(&self, ctx: &ChannelHandlerContext, id: u64) {
        self.request_timer.fired(id);
        let Some(timeout) = self.request_timer.timeout() else {
            return;
        };
        if self.request_under_way() != Some(id) || self.queue.borrow().is_closed() {
            return;
        }
        let in_body = self.decoder.borrow().request_in_body() == Some(id);
        self.head_timer.cancel();
        self.decoder.borrow_mut().stop();
        self.cumulation.borrow_mut().clear();
        if self.streaming.get() == Some(id) {
            self.streaming.set(None); // the exception below tells the application
        }
        let error = HttpError::RequestTimeout { timeout };
        {
            let date = self.date();
            let mut q = self.queue.borrow_mut();
            q.set_date(date);
            q.refuse(&error, in_body.then_some(id), id);
        }
        self.run(ctx);
        ctx.fire_exception_caught(error.into_transport());
    }

    /// Runs the head clock while a head is awaited: for the first request from the start,
    /// for later ones once their first byte is here (the time between requests is idle time).
    pub(super) fn update_head_timer(&self, ctx: &ChannelHandlerContext) {
        if self.head_timer.is_idle()
            && self.request_timer.is_idle()
            && self.cumulation.borrow().is_empty()
        {
            // After a read of whole requests (the common case): no head has started and no
            // body is arriving, so neither clock runs, and neither does now.
            let d = self.decoder.borrow();
            if d.next_id() != 0 && d.request_in_body().is_none() {
                return;
            }
        }
        let (awaiting, next_id) = {
            let d = self.decoder.borrow();
            (
                !d.is_finished() && d.request_in_body().is_none(),
                d.next_id(),
            )
        };
        let active = ctx.try_channel().is_some_and(|ch| ch.is_active());
        let started = next_id == 0 || !self.cumulation.borrow().is_empty();
        let paused = self.pause.is_paused();
        if awaiting && active && started && !paused && !self.queue.borrow().is_closed() {
            self.head_timer.arm(ctx, next_id);
        } else {
            self.head_timer.cancel();
        }
        self.update_request_timer(ctx);
    }

    /// The head of request `id` did not arrive in time: answer 408 (after the responses owed
    /// to earlier requests) and close.
    pub(crate) fn head_timed_out(&self, ctx: &ChannelHandlerContext, id: u64) {
        self.head_timer.fired(id);
        let awaited = {
            let d = self.decoder.borrow();
            !d.is_finished() && d.request_in_body().is_none() && d.next_id() == id
        };
        let Some(timeout) = self.head_timer.timeout() else {
            return;
        };
        if !awaited || self.queue.borrow().is_closed() {
            return;
        }
        self.decoder.borrow_mut().stop();
        self.cumulation.borrow_mut().clear();
        self.answer_refusal(ctx, HttpError::HeaderTimeout { timeout }, None, id);
    }
}
