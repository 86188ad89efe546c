//! [`HttpServerCodec`]'s writing: a message from the application framed in request order (a
//! frozen answer to the front request at once, anything else through the response queue),
//! the responses nobody waits on held in the batch until the flush, and a frozen answer with
//! its flush handed to the socket in one (`write_and_flush`). Ground rules in the parent
//! module (`handler.rs`); the batch's in `batch.rs`.

use netloop_transport::{ChannelHandlerContext, ChannelPromise, Message, WrittenNow};

use super::HttpServerCodec;
use crate::encoder::Encoded;
use crate::frozen::FrozenResponse;
use crate::message::{HttpContent, HttpResponse};
use crate::queue::Outgoing;

/// A frozen response out of its box, or the message as it came.
fn frozen_of(msg: Message) -> Result<FrozenResponse, Message> {
    match msg {
        Message::User(v) => match v.downcast::<FrozenResponse>() {
            Ok(b) => Ok(crate::spare::unbox_frozen(b)),
            Err(v) => Err(Message::User(v)),
        },
        other => Err(other),
    }
}

impl HttpServerCodec {
    /// `ChannelHandler::write`.
    pub(super) fn write_message(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) {
        match frozen_of(msg) {
            Ok(frozen) => self.write_frozen(ctx, frozen, promise),
            Err(msg) => self.write_other(ctx, msg, promise),
        }
    }

    /// A frozen response: the front request's answer at once, else through the queue.
    fn write_frozen(
        &self,
        ctx: &ChannelHandlerContext,
        frozen: FrozenResponse,
        promise: ChannelPromise,
    ) {
        match self.answer_now(&frozen) {
            Some(enc) => {
                self.write_encoded(ctx, enc, promise);
                self.resume_if_room(ctx);
            }
            None => self.submit(ctx, Outgoing::Frozen(frozen), promise),
        }
    }

    /// A response or a body piece through the queue; anything else passes on, after the
    /// held responses.
    fn write_other(&self, ctx: &ChannelHandlerContext, msg: Message, promise: ChannelPromise) {
        let out = match msg.downcast::<HttpResponse>() {
            Ok(resp) => Outgoing::Response(resp),
            Err(msg) => match msg.downcast::<HttpContent>() {
                Ok(content) => Outgoing::Content(content),
                Err(other) => {
                    self.release_batch(ctx);
                    ctx.write_with(other, promise);
                    return;
                }
            },
        };
        self.submit(ctx, out, promise);
    }

    /// `ChannelHandler::write_and_flush`: a frozen answer to the front request, with nothing
    /// held before it, encoded and handed to the socket with its flush (`write_and_flush_now`),
    /// where `write` would hold it in the batch, count it as pending, and `flush` take it out
    /// and uncount it. Anything else is `write`, then `flush`.
    pub(super) fn write_and_flush_message(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) {
        let frozen = match frozen_of(msg) {
            Ok(frozen) if self.batch.is_empty() => frozen,
            Ok(frozen) => {
                self.write_frozen(ctx, frozen, promise);
                return self.flush_held(ctx);
            }
            Err(msg) => {
                self.write_other(ctx, msg, promise);
                return self.flush_held(ctx);
            }
        };
        match self.answer_now(&frozen) {
            Some(enc) if enc.body.is_none() => {
                self.burst_date.end();
                if let WrittenNow::Part(n, p) = ctx.write_and_flush_now(&enc.head, promise) {
                    ctx.write_with(enc.head.slice(n..), p);
                    ctx.flush();
                }
                self.resume_if_room(ctx);
            }
            Some(enc) => {
                self.write_encoded(ctx, enc, promise);
                self.resume_if_room(ctx);
                self.flush_held(ctx);
            }
            None => {
                self.submit(ctx, Outgoing::Frozen(frozen), promise);
                self.flush_held(ctx);
            }
        }
    }

    /// `ChannelHandler::flush`: the held responses and the flush in one, straight to the
    /// socket when no handler before takes writes or flushes and nothing is queued (as a
    /// response without pipelining is); else what did not go is written and flushed as usual.
    pub(super) fn flush_held(&self, ctx: &ChannelHandlerContext) {
        self.burst_date.end();
        if let Some(bytes) = self.batch.take() {
            self.count_held(ctx);
            match ctx.write_and_flush_now(&bytes, ChannelPromise::void()) {
                WrittenNow::All => return,
                WrittenNow::Part(n, promise) => ctx.write_with(bytes.slice(n..), promise),
            }
        }
        ctx.flush();
    }

    /// The front request's answer when `frozen` is it (`ResponseQueue::answer_front`), its
    /// slot retired; `None` (nothing changed) when the queue must decide.
    fn answer_now(&self, frozen: &FrozenResponse) -> Option<Encoded> {
        let date = self.date();
        self.queue.borrow_mut().answer_front(frozen, date)
    }

    /// Writes an answer `answer_now` gave: held for the flush with the next ones when nobody
    /// waits on it (`batch.rs`), else after the held ones, with its promise.
    fn write_encoded(&self, ctx: &ChannelHandlerContext, enc: Encoded, promise: ChannelPromise) {
        match enc.body {
            None if promise.is_void() && !promise.is_firing() => {
                self.batch.push(enc.head);
                self.count_held(ctx);
            }
            None => {
                self.release_batch(ctx);
                ctx.write_with(enc.head, promise);
            }
            Some(body) => {
                self.release_batch(ctx);
                ctx.write_with(enc.head, ChannelPromise::void());
                ctx.write_with(body, promise);
            }
        }
    }

    /// Hands `out` to the response queue, which frames it in request order, and runs what
    /// that made due.
    fn submit(&self, ctx: &ChannelHandlerContext, out: Outgoing, promise: ChannelPromise) {
        let date = self.date();
        {
            let mut q = self.queue.borrow_mut();
            q.set_date(date);
            q.submit(out, promise);
        }
        self.run(ctx);
        self.resume_if_room(ctx);
    }
}
