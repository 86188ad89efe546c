//! [`HttpServerCodec`]'s decoding: one pass of the request decoder over a read (after what
//! is buffered), the decoded requests and body pieces delivered (each request's slot opened in
//! the response queue before it is fired), and a refusal answered natively. Ground rules in
//! the parent module (`handler.rs`).

use bytes::Bytes;
use netloop_transport::{ChannelHandlerContext, Message};

use super::HttpServerCodec;
use crate::decoder::Decoded;
use crate::input::decode_after;

impl HttpServerCodec {
    /// Decodes `bytes` (after what is buffered) and fires what it holds; with a pipelining
    /// limit, goes on while answers given meanwhile make room for buffered requests, then
    /// pauses if the limit is reached.
    pub(super) fn decode(&self, ctx: &ChannelHandlerContext, bytes: Bytes) {
        if !self.decode_once(ctx, bytes) {
            return;
        }
        while self.room_for_buffered() || self.upgrade.redecode.replace(false) {
            if !self.decode_once(ctx, Bytes::new()) {
                return;
            }
        }
        self.pause_for_upgrade(ctx);
        self.pause_if_full(ctx);
        self.pause_if_unwritable(ctx);
        self.update_head_timer(ctx);
    }

    /// One pass of the decoder over the input; false if it failed (the refusal is under way).
    pub(super) fn decode_once(&self, ctx: &ChannelHandlerContext, bytes: Bytes) -> bool {
        let mut out = self.scratch.take();
        let budget = if self.unwritable(ctx) {
            Some(0) // no new request while the responses do not drain (node:http's rule)
        } else {
            self.config
                .max_pipelined_requests
                .map(|max| max.saturating_sub(self.queue.borrow().pending()))
        };
        let (result, failed_in, next_id) = {
            let mut decoder = self.decoder.borrow_mut();
            decoder.set_head_budget(budget);
            let mut cumulation = self.cumulation.borrow_mut();
            let result = decode_after(&mut *decoder, &mut cumulation, bytes, &mut out);
            (result, decoder.failed_request(), decoder.next_id())
        };
        for event in out.drain(..) {
            self.deliver(ctx, event);
        }
        self.scratch.set(out);
        if let Err(error) = result {
            self.refuse(ctx, error, failed_in, next_id);
            return false;
        }
        true
    }

    /// Answers a request the decoder refused and reports it. Out of line: a request that is
    /// decoded never runs it, and inlined it would spread the hot path over more cache lines.
    #[cold]
    #[inline(never)]
    fn refuse(
        &self,
        ctx: &ChannelHandlerContext,
        error: crate::error::HttpError,
        failed_in: Option<u64>,
        next_id: u64,
    ) {
        self.refused.set(true);
        self.cancel_timers();
        if self.streaming.get().is_some() && failed_in == self.streaming.get() {
            self.streaming.set(None);
        }
        self.answer_refusal(ctx, error, failed_in, next_id);
    }

    /// The refusal's answer, dated, queued for the request `failed_in` (`None`: the head of
    /// request `next_id`) and sent with what the queue holds; then `error` goes to
    /// `exception_caught`. Shared by a refused request and a head that did not arrive in time.
    #[cold]
    pub(super) fn answer_refusal(
        &self,
        ctx: &ChannelHandlerContext,
        error: crate::error::HttpError,
        failed_in: Option<u64>,
        next_id: u64,
    ) {
        {
            let date = self.date();
            let mut q = self.queue.borrow_mut();
            q.set_date(date);
            q.refuse(&error, failed_in, next_id);
        }
        self.run(ctx);
        ctx.fire_exception_caught(error.into_transport());
    }

    fn deliver(&self, ctx: &ChannelHandlerContext, event: Decoded) {
        match event {
            Decoded::Start(start) => {
                // No `Date` read here: opening a slot writes at most a 100 Continue (no date);
                // every path that encodes a response sets the queue's date first.
                self.queue.borrow_mut().open(start);
                self.run(ctx);
            }
            Decoded::Request(req) => {
                if req.streaming {
                    self.streaming.set(Some(req.id));
                } else {
                    self.queue.borrow_mut().body_done(req.id);
                }
                self.fire(ctx, Message::User(req));
            }
            Decoded::Content(content) => {
                if content.last {
                    self.streaming.set(None);
                    if let Some(id) = content.request_id {
                        self.queue.borrow_mut().body_done(id);
                    }
                }
                self.fire(ctx, Message::user(content));
            }
        }
    }

    fn fire(&self, ctx: &ChannelHandlerContext, msg: Message) {
        if self.queue.borrow().is_closed() || ctx.is_removed() {
            return; // the connection is closing: later requests go unanswered
        }
        if self.pause.held_len() > 0 {
            // Behind requests given back: after them (a body part of one, a read in flight).
            self.pause.hold_behind(ctx, msg);
            return;
        }
        self.pause.firing();
        self.fired.set(true);
        ctx.fire_channel_read(msg);
    }
}
