//! [`HttpServerCodec`]: the codec as one pipeline handler (Netty's `HttpServerCodec` +
//! `HttpObjectAggregator` + `HttpServerKeepAliveHandler`).
//!
//! Inbound: bytes in, [`HttpRequest`] (and, for streamed bodies,
//! [`HttpContent`](crate::HttpContent)) user messages out, one `channel_read` each. Outbound:
//! [`HttpResponse`](crate::HttpResponse) and [`HttpContent`](crate::HttpContent) in, bytes out;
//! other messages pass through unchanged (as Netty's encoder passes buffers); the writing is
//! in `writing.rs`.
//!
//! Ground rules:
//! - Loop thread only. State lives in `Cell`/`RefCell`; no borrow is held while an event is
//!   fired or an operation is passed on (the pipeline is re-entrant: a handler further on
//!   may answer a request, or close the channel, from inside `channel_read`).
//! - A read is decoded whole before its messages are fired; each request's slot is opened in
//!   the response queue before the request is fired, so the application can answer at once.
//!   Requests decoded after one whose response closed the connection are not fired.
//! - A refused request is answered natively (after the responses to earlier requests), then
//!   an [`HttpError`] is fired as `exception_caught` (code `HPE_*`, `ERR_HTTP_*`) and the
//!   connection closes once the answer is written; later input is ignored.
//! - A request head must arrive within `header_timeout` (see `head_timer.rs`): the clock runs
//!   from `channel_active` for the first request and from the first byte of each later head;
//!   when it runs out, the codec answers 408 like any refusal (`ERR_HTTP_REQUEST_TIMEOUT`).
//! - The whole request (head and body) must arrive within `request_timeout` (node:http's
//!   `requestTimeout`, see `timeouts.rs`); its clock starts as the head's does and stops
//!   at the body's end; when it runs out: 408 like any refusal.
//! - Pipelining limit (`max_pipelined_requests`): each decode may accept only as many heads
//!   as the limit leaves; at the limit the codec pauses (auto-read off, or `read()` held
//!   back), and the head clock stops (the bytes waiting are the server's delay, not the
//!   client's). A completed response schedules a resume on the loop (never from inside a
//!   write, which may come from inside this codec's own `channel_read`): it decodes what is
//!   buffered, fires `channel_read_complete` if that delivered requests, and reads again.
//! - Upgrades (`upgrade.rs`): after a request asking to leave HTTP the codec reads nothing
//!   more until its answer; one that switches protocols makes the codec pass bytes through
//!   both ways, any other final answer lets HTTP go on.
//! - Backpressure (node:http's rule): while the channel is not writable (its pending bytes,
//!   held responses included, passed the high water mark) the codec decodes no new request
//!   head and, waiting for one, stops reading; it goes on once the channel is writable again.
//!   A client that pipelines without reading the responses meets TCP's flow control instead
//!   of growing the server's memory.
//! - Closing waits for the writes before it: an empty write with a listener marks the end,
//!   and its completion closes the channel, or half-closes it and lingers while the client
//!   may still be sending (`linger.rs`).
//! - `Date`: read from the loop's clock once per burst (a read, or the writes up to a flush;
//!   `date::BurstDate`), not once per request.

use std::cell::{Cell, RefCell};
use std::time::SystemTime;

use bytes::{Bytes, BytesMut};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelInputShutdown, ChannelPromise, HandlerResult,
    LocalListenerExt, Message, UserEvent,
};

use crate::batch::ResponseBatch;
use crate::config::HttpServerConfig;
use crate::date::{cached_date, coarse_date, BurstDate, DateValue};
use crate::decoder::{Decoded, RequestDecoder};
use crate::error::{ConfigError, HttpError};
use crate::head_timer::HeadTimer;
use crate::queue::{Action, ResponseQueue};

#[path = "decoding.rs"]
mod decoding;
#[path = "linger.rs"]
mod linger;
#[path = "pipelining.rs"]
mod pipelining;
#[path = "timeouts.rs"]
mod timeouts;
#[path = "upgrade.rs"]
mod upgrade;
#[path = "writing.rs"]
mod writing;
use upgrade::UpgradeState;

/// An HTTP/1.1 server codec for one connection. Add it where bytes arrive (after TLS, if
/// any); handlers behind it read [`HttpRequest`](crate::HttpRequest)s and write
/// [`HttpResponse`](crate::HttpResponse)s.
///
/// ```
/// use netloop_http::{HttpServerCodec, HttpServerConfig};
/// let codec = HttpServerCodec::new(HttpServerConfig::default()).unwrap();
/// # let _ = codec;
/// ```
pub struct HttpServerCodec {
    config: HttpServerConfig,
    decoder: RefCell<RequestDecoder>,
    cumulation: RefCell<BytesMut>,
    queue: RefCell<ResponseQueue>,
    scratch: Cell<Vec<Decoded>>,
    /// The queue's drained action vector, handed back to it (no allocation per write).
    spare_actions: Cell<Vec<Action>>,
    /// The `Date` of the current read or run of writes (the clock read once for all).
    burst_date: BurstDate,
    /// A streamed request body was announced to the application and has not ended.
    streaming: Cell<Option<u64>>,
    fired: Cell<bool>,
    got_bytes: Cell<bool>,
    head_timer: HeadTimer,
    request_timer: HeadTimer,
    pause: netloop_transport::ReadPause,
    upgrade: UpgradeState,
    /// The queue's held bytes as last added to the channel's pending outbound bytes.
    counted: Cell<usize>,
    /// The codec refused a request (its input may still be coming): closing lingers.
    refused: Cell<bool>,
    /// Half-closed and dropping input until the client closes (linger.rs).
    lingering: Cell<bool>,
    linger_timer: RefCell<Option<netloop_eventloop::ScheduledHandle>>,
    /// Whole responses nobody waits on, written as one message at the next flush (straight
    /// to the socket when nothing stands between) or before any other operation (batch.rs).
    batch: ResponseBatch,
}

impl HttpServerCodec {
    /// A codec with `config`'s limits.
    ///
    /// # Errors
    /// A limit out of range.
    pub fn new(config: HttpServerConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(HttpServerCodec {
            decoder: RefCell::new(RequestDecoder::new(config.clone())),
            cumulation: RefCell::new(BytesMut::new()),
            queue: RefCell::new(ResponseQueue::default()),
            scratch: Cell::new(Vec::new()),
            spare_actions: Cell::new(Vec::new()),
            burst_date: BurstDate::default(),
            streaming: Cell::new(None),
            fired: Cell::new(false),
            got_bytes: Cell::new(false),
            head_timer: HeadTimer::new(config.header_timeout, HttpServerCodec::head_timed_out),
            request_timer: HeadTimer::new(
                config.request_timeout,
                HttpServerCodec::request_timed_out,
            ),
            pause: netloop_transport::ReadPause::default(),
            upgrade: UpgradeState::default(),
            counted: Cell::new(0),
            refused: Cell::new(false),
            lingering: Cell::new(false),
            linger_timer: RefCell::new(None),
            batch: ResponseBatch::default(),
            config,
        })
    }

    /// Requests read whose response is not completely written yet.
    pub fn pending_responses(&self) -> usize {
        self.queue.borrow().pending()
    }

    /// The configuration.
    pub fn config(&self) -> &HttpServerConfig {
        &self.config
    }

    fn date(&self) -> Option<DateValue> {
        if !self.config.date_header {
            return None;
        }
        let clock = self.config.wall_clock;
        // The default clock's date straight from its seconds (`date::coarse_date`).
        let coarse = clock as usize == crate::coarse_wall_clock as fn() -> SystemTime as usize;
        Some(self.burst_date.get(|| {
            if coarse {
                coarse_date()
            } else {
                cached_date(clock())
            }
        }))
    }

    /// Runs the queue's actions (no borrow held).
    fn run(&self, ctx: &ChannelHandlerContext) {
        if !self.queue.borrow().has_actions() {
            self.count_held(ctx); // (a write held for a later slot made no action)
            return;
        }
        self.release_batch(ctx);
        let spare = self.spare_actions.take();
        let mut actions = self.queue.borrow_mut().take_actions(spare);
        for action in actions.drain(..) {
            match action {
                Action::Write(bytes, promise) => ctx.write_with(bytes, promise),
                Action::Complete(promise, result) => {
                    promise.try_complete(result);
                }
                Action::Flush => ctx.flush(),
                Action::Close => {
                    let linger = self.linger_wanted();
                    self.cancel_timers();
                    self.decoder.borrow_mut().stop();
                    self.cumulation.borrow_mut().clear();
                    match linger {
                        Some(timeout) => linger::close_lingering(ctx, timeout),
                        None => close_after_writes(ctx),
                    }
                }
                Action::Upgrade { switched } => self.upgrade_answered(ctx, switched),
            }
        }
        self.spare_actions.set(actions);
        self.count_held(ctx);
    }

    /// Brings the channel's pending outbound bytes in line with what the queue holds (held
    /// responses count toward the water marks, as Netty counts a handler's pending writes).
    fn count_held(&self, ctx: &ChannelHandlerContext) {
        let now = self.queue.borrow().held_bytes() + self.batch.counted();
        let before = self.counted.replace(now);
        if now == before {
            return;
        }
        let Some(ch) = ctx.try_channel() else {
            self.counted.set(0);
            return;
        };
        if now > before {
            ch.add_pending_outbound_bytes(now - before);
        } else {
            ch.sub_pending_outbound_bytes(before - now);
        }
    }

    /// Writes the batched responses (before anything else the codec passes on).
    fn release_batch(&self, ctx: &ChannelHandlerContext) {
        if self.batch.is_empty() {
            return;
        }
        let bytes = self.batch.take();
        self.count_held(ctx);
        if let Some(bytes) = bytes {
            ctx.write_with(bytes, ChannelPromise::void());
        }
    }
}

/// Closes the channel once the writes queued before now are written (or failed).
pub(crate) fn close_after_writes(ctx: &ChannelHandlerContext) {
    let marker = ChannelPromise::new();
    let done = marker.future();
    ctx.write_with(Bytes::new(), marker);
    ctx.flush();
    match done {
        Some(done) => {
            let c = ctx.clone();
            done.add_local_listener(move |_| {
                c.close();
            });
        }
        None => {
            ctx.close();
        }
    }
}

impl std::fmt::Debug for HttpServerCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServerCodec")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl ChannelHandler for HttpServerCodec {
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn handler_added(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.update_head_timer(ctx);
        Ok(())
    }

    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.update_head_timer(ctx);
        ctx.fire_channel_active();
        Ok(())
    }

    fn handler_removed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.release_batch(ctx);
        self.cancel_timers();
        self.queue.borrow_mut().abandon();
        self.run(ctx);
        self.pause.fire_all_held(|m| ctx.fire_channel_read(m));
        if self.fire_left_over(ctx) {
            ctx.fire_channel_read_complete();
        }
        self.unpause_reading(ctx); // reading it turned off comes back on
        Ok(())
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        match msg.into_bytes() {
            Ok(bytes) if self.upgrade.switched.get() => self.pass_through(ctx, bytes),
            Ok(bytes) => {
                self.burst_date.end();
                self.got_bytes.set(true);
                self.decode(ctx, bytes);
            }
            Err(other) => ctx.fire_channel_read(other),
        }
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.burst_date.end();
        let fired = self.fired.replace(false);
        let got_bytes = self.got_bytes.replace(false);
        let wants_more = !fired && !self.pause.is_paused() && !self.decoder.borrow().is_finished();
        if got_bytes && (wants_more || self.lingering.get()) {
            ctx.read_unless_auto_read();
        }
        ctx.fire_channel_read_complete();
        Ok(())
    }

    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.cancel_timers();
        self.cancel_linger();
        self.decoder.borrow_mut().stop();
        self.cumulation.borrow_mut().clear();
        self.pause.drop_held();
        drop(self.batch.take()); // (the channel is gone: nothing more is written)
        self.queue.borrow_mut().abandon();
        self.run(ctx);
        if self.streaming.take().is_some() {
            ctx.fire_exception_caught(HttpError::Aborted.into_transport());
        }
        ctx.fire_channel_inactive();
        Ok(())
    }

    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        // After a switch the connection's ends belong to the new protocol (a tunnel's half
        // closure goes on through it).
        if event.is::<ChannelInputShutdown>() && self.lingering.get() {
            ctx.close(); // the client ended: nothing more to drop
        } else if event.is::<ChannelInputShutdown>() && !self.upgrade.switched.get() {
            self.cancel_timers();
            self.decoder.borrow_mut().stop();
            self.queue.borrow_mut().input_done();
            self.run(ctx);
        }
        ctx.fire_user_event_triggered(event);
        Ok(())
    }

    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        self.write_message(ctx, msg, promise);
        Ok(())
    }

    fn takes_write_and_flush(&self) -> bool {
        true
    }

    fn write_and_flush(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        self.write_and_flush_message(ctx, msg, promise);
        Ok(())
    }

    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.flush_held(ctx);
        Ok(())
    }

    fn close(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        self.release_batch(ctx);
        ctx.close_with(promise);
        Ok(())
    }

    fn disconnect(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        self.release_batch(ctx);
        ctx.disconnect_with(promise);
        Ok(())
    }

    fn deregister(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        self.release_batch(ctx);
        ctx.deregister_with(promise);
        Ok(())
    }

    fn shutdown_output(
        &self,
        ctx: &ChannelHandlerContext,
        promise: ChannelPromise,
    ) -> HandlerResult {
        self.release_batch(ctx);
        ctx.shutdown_output_with(promise);
        Ok(())
    }

    fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.pause.resume_if_writable(ctx, HttpServerCodec::resume);
        ctx.fire_channel_writability_changed();
        Ok(())
    }

    fn read(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if !self.pause.hold_read() {
            ctx.read(); // (a read asked while paused is passed on when the codec resumes)
        }
        Ok(())
    }
}
