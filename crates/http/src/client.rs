//! [`HttpClientCodec`]: the client side as one pipeline handler (Netty's `HttpClientCodec` +
//! `HttpObjectAggregator`).
//!
//! Outbound: [`HttpClientRequest`] (and, for streamed bodies, [`HttpContent`]) in, bytes out;
//! other messages pass through unchanged. Inbound: bytes in, [`HttpClientResponse`](crate::HttpClientResponse) (and
//! `HttpContent` for streamed bodies) user messages out, one `channel_read` each.
//!
//! Ground rules:
//! - Loop thread only. State lives in `Cell`/`RefCell`; no borrow is held while an event is
//!   fired or an operation is passed on (the pipeline is re-entrant: a handler further on may
//!   write the next request, close the channel or remove this codec from inside
//!   `channel_read`).
//! - Every `HttpClientRequest` written gets the next id (0, 1, 2, ...), written or refused;
//!   a written one joins the queue of requests awaiting a response (pipelining: any number
//!   may wait). A refused one fails its write's promise, and nothing else.
//! - A read is decoded whole before its messages are fired.
//! - A response that breaks the rules, response bytes no request waits for, or a limit
//!   passed: one `exception_caught` with the [`HttpError`], the input is dropped (now and
//!   later), and the channel closes once the writes before are written.
//! - End of input (`channel_inactive`, or `ChannelInputShutdown`) ends a close-delimited body;
//!   inside a head or a framed body it is `exception_caught(Aborted)`. Requests that got no
//!   response byte at all get nothing (the application sees the channel go inactive).
//! - A response that switches protocols (`upgraded`) is fired, then the bytes read after its
//!   head, as one `Message::Bytes`, then every later byte as it comes; writes of bytes pass
//!   through too. HTTP messages written after the switch fail.
//! - Removing the codec fires the bytes not decoded yet as one `Message::Bytes` read and a
//!   `channel_read_complete` (Netty's `ByteToMessageDecoder`).

use std::cell::{Cell, RefCell};

use bytes::{Bytes, BytesMut};
use netloop_transport::{
    append_to_cumulation, ChannelHandler, ChannelHandlerContext, ChannelInputShutdown,
    ChannelPromise, FileRegion, HandlerResult, Message, UserEvent,
};

use crate::client_config::HttpClientConfig;
use crate::client_message::HttpClientRequest;
use crate::encoder::BodyMode;
use crate::error::{ConfigError, HttpError};
use crate::handler::close_after_writes;
use crate::input::decode_after;
use crate::message::HttpContent;
use crate::request_encoder::{encode_content, encode_request};
use crate::response_decoder::{DecodedResponse, ResponseDecoder};

/// An HTTP/1.1 client codec for one connection. Add it where bytes arrive (after TLS, if
/// any); handlers behind it write [`HttpClientRequest`]s and read [`HttpClientResponse`](crate::HttpClientResponse)s.
///
/// ```
/// use netloop_http::{HttpClientCodec, HttpClientConfig, HttpClientRequest, HttpClientResponse};
/// use netloop_transport::{EmbeddedChannel, Message};
/// use std::rc::Rc;
///
/// let codec = HttpClientCodec::new(HttpClientConfig::default()).unwrap();
/// let ch = EmbeddedChannel::new(vec![("http", Rc::new(codec))]);
/// ch.write_outbound(Message::user(HttpClientRequest::new("GET", "/").header("Host", "x")));
/// let out = ch.read_outbound().unwrap();
/// assert_eq!(&out.as_bytes().unwrap()[..], b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
/// ch.write_inbound(&b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"[..]);
/// let res = ch.read_inbound().unwrap().downcast::<HttpClientResponse>().unwrap();
/// assert_eq!((res.id, res.status, &res.body[..]), (0, 200, &b"hi"[..]));
/// ```
pub struct HttpClientCodec {
    config: HttpClientConfig,
    decoder: RefCell<ResponseDecoder>,
    cumulation: RefCell<BytesMut>,
    scratch: Cell<Vec<DecodedResponse>>,
    next_id: Cell<u64>,
    /// A streamed request body is open: how its pieces are written.
    body: Cell<Option<BodyMode>>,
    /// A response switched protocols: bytes pass through.
    switched: Cell<bool>,
    /// An error was fired: input is dropped.
    failed: Cell<bool>,
    fired: Cell<bool>,
    got_bytes: Cell<bool>,
}

impl HttpClientCodec {
    /// A codec with `config`'s limits.
    ///
    /// # Errors
    /// A limit out of range.
    pub fn new(config: HttpClientConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(HttpClientCodec {
            decoder: RefCell::new(ResponseDecoder::new(config.clone())),
            cumulation: RefCell::new(BytesMut::new()),
            scratch: Cell::new(Vec::new()),
            next_id: Cell::new(0),
            body: Cell::new(None),
            switched: Cell::new(false),
            failed: Cell::new(false),
            fired: Cell::new(false),
            got_bytes: Cell::new(false),
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &HttpClientConfig {
        &self.config
    }

    /// The id the next request written will get.
    pub fn next_request_id(&self) -> u64 {
        self.next_id.get()
    }

    /// Requests written whose final response has not started yet.
    pub fn waiting_responses(&self) -> usize {
        self.decoder.borrow().waiting()
    }

    /// True once a response switched protocols.
    pub fn is_switched(&self) -> bool {
        self.switched.get()
    }

    fn write_request(
        &self,
        ctx: &ChannelHandlerContext,
        req: HttpClientRequest,
        promise: ChannelPromise,
    ) {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let refused = if self.switched.get() {
            Some("the connection switched protocols")
        } else if self.body.get().is_some() {
            Some("the body of the previous request has not ended")
        } else {
            None
        };
        if let Some(reason) = refused {
            let e = HttpError::invalid_request("ERR_INVALID_STATE", reason);
            promise.try_failure(e.into_transport());
            return;
        }
        match encode_request(req, self.config.host.as_ref()) {
            Err(e) => {
                promise.try_failure(e.into_transport());
            }
            Ok(encoded) => {
                let mut sent = encoded.sent;
                sent.id = id;
                self.decoder.borrow_mut().push_request(sent);
                self.body.set(encoded.body);
                write_parts(ctx, encoded.parts, encoded.file, promise);
            }
        }
    }

    fn write_content(&self, ctx: &ChannelHandlerContext, c: HttpContent, promise: ChannelPromise) {
        let Some(mut mode) = self.body.get() else {
            let e = HttpError::invalid_request(
                "ERR_STREAM_WRITE_AFTER_END",
                "no streamed request body is open",
            );
            promise.try_failure(e.into_transport());
            return;
        };
        let last = c.last;
        match encode_content(&mut mode, c) {
            Err(e) => {
                promise.try_failure(e.into_transport());
            }
            Ok(parts) => {
                self.body.set((!last).then_some(mode));
                write_parts(ctx, parts, None, promise);
            }
        }
    }

    /// Decodes `bytes` (after what is buffered) and fires what it holds.
    fn decode(&self, ctx: &ChannelHandlerContext, bytes: Bytes) {
        let mut out = self.scratch.take();
        let (result, switched) = {
            let mut decoder = self.decoder.borrow_mut();
            let mut cumulation = self.cumulation.borrow_mut();
            let result = decode_after(&mut *decoder, &mut cumulation, bytes, &mut out);
            (result, decoder.is_switched())
        };
        if switched {
            self.switched.set(true);
        }
        for event in out.drain(..) {
            self.fire(ctx, event);
        }
        self.scratch.set(out);
        match result {
            Err(e) => self.fail(ctx, e, true),
            Ok(()) if switched && !ctx.is_removed() => {
                let left = self.cumulation.borrow_mut().split().freeze();
                if !left.is_empty() {
                    self.fired.set(true);
                    ctx.fire_channel_read(left);
                }
            }
            Ok(()) => {}
        }
    }

    fn fire(&self, ctx: &ChannelHandlerContext, event: DecodedResponse) {
        self.fired.set(true);
        match event {
            DecodedResponse::Response(res) => ctx.fire_channel_read(Message::user(res)),
            DecodedResponse::Content(c) => ctx.fire_channel_read(Message::user(c)),
        }
    }

    /// Fires `e` once, drops the input, and (`close`) closes after the writes before.
    fn fail(&self, ctx: &ChannelHandlerContext, e: HttpError, close: bool) {
        self.failed.set(true);
        self.cumulation.borrow_mut().clear();
        ctx.fire_exception_caught(e.into_transport());
        if close {
            close_after_writes(ctx);
        }
    }

    /// The input ended: a close-delimited body ends here, a framed one was cut short.
    fn end_of_input(&self, ctx: &ChannelHandlerContext, close_on_error: bool) {
        if self.failed.get() || self.switched.get() {
            return;
        }
        let mut out = self.scratch.take();
        let result = {
            let mut cumulation = self.cumulation.borrow_mut();
            self.decoder.borrow_mut().finish(&mut *cumulation, &mut out)
        };
        for event in out.drain(..) {
            self.fire(ctx, event);
        }
        self.scratch.set(out);
        if let Err(e) = result {
            self.fail(ctx, e, close_on_error);
        }
    }
}

/// Writes `parts`, the promise on the last one (completed at once when there is none).
fn write_parts(
    ctx: &ChannelHandlerContext,
    parts: Vec<Bytes>,
    file: Option<FileRegion>,
    promise: ChannelPromise,
) {
    let mut messages: Vec<Message> = parts.into_iter().map(Message::Bytes).collect();
    messages.extend(file.map(Message::File));
    let n = messages.len();
    if n == 0 {
        promise.try_success();
        return;
    }
    let mut promise = Some(promise);
    for (i, msg) in messages.into_iter().enumerate() {
        let p = if i + 1 == n {
            promise.take().expect("the last part")
        } else {
            ChannelPromise::void()
        };
        ctx.write_with(msg, p);
    }
}

impl std::fmt::Debug for HttpClientCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientCodec")
            .field("config", &self.config)
            .field("next_id", &self.next_id.get())
            .field("switched", &self.switched.get())
            .field("failed", &self.failed.get())
            .finish_non_exhaustive()
    }
}

impl ChannelHandler for HttpClientCodec {
    // Reads and flushes pass by (the default methods): the mask skips this context.
    fn takes_read(&self) -> bool {
        false
    }
    fn takes_flush(&self) -> bool {
        false
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn handler_removed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.failed.get() {
            return Ok(());
        }
        let left = self.cumulation.borrow_mut().split().freeze();
        if !left.is_empty() {
            ctx.fire_channel_read(left);
            ctx.fire_channel_read_complete();
        }
        Ok(())
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        match msg.into_bytes() {
            Ok(bytes) if self.switched.get() => {
                let mut cumulation = self.cumulation.borrow_mut();
                if cumulation.is_empty() {
                    drop(cumulation);
                    ctx.fire_channel_read(bytes);
                } else {
                    // The bytes left over at the switch are not fired yet: these follow them.
                    append_to_cumulation(&mut cumulation, &bytes);
                }
            }
            Ok(_) if self.failed.get() => {}
            Ok(bytes) => {
                self.got_bytes.set(true);
                self.decode(ctx, bytes);
            }
            Err(other) => ctx.fire_channel_read(other),
        }
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        let fired = self.fired.replace(false);
        let got_bytes = self.got_bytes.replace(false);
        if got_bytes && !fired && !self.failed.get() && !self.switched.get() {
            ctx.read_unless_auto_read();
        }
        ctx.fire_channel_read_complete();
        Ok(())
    }

    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.end_of_input(ctx, false);
        self.cumulation.borrow_mut().clear();
        ctx.fire_channel_inactive();
        Ok(())
    }

    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        if event.is::<ChannelInputShutdown>() {
            self.end_of_input(ctx, true);
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
        match msg.downcast::<HttpClientRequest>() {
            Ok(req) => self.write_request(ctx, req, promise),
            Err(msg) => match msg.downcast::<HttpContent>() {
                Ok(c) => self.write_content(ctx, c, promise),
                Err(other) => ctx.write_with(other, promise),
            },
        }
        Ok(())
    }
}
