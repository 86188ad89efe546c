//! [`WebSocketHandler`]: one WebSocket connection after its handshake (Netty's
//! `WebSocket13FrameDecoder` + `WebSocket13FrameEncoder` + `WebSocketProtocolHandler`).
//!
//! Inbound: `Message::Bytes` are cumulated and decoded; each message (or fragment, in
//! streaming mode) is fired as a `WebSocketFrame` user message. Pings are answered with a
//! pong natively when `auto_pong` is on; pings and pongs reach the next handler only with
//! `forward_control_frames`. A close frame is fired, answered with a close frame carrying
//! the same code (unless ours went first), and the channel closes once that is written.
//!
//! Outbound: `WebSocketFrame`s are encoded (masked with a fresh key per frame when the role
//! is client); `Bytes` go out as binary messages and `String`s as text messages; anything
//! else passes through. A close frame written starts the close timer: the channel closes
//! when the peer's close frame arrives or `close_timeout` passes (the full handshake: write a
//! `WebSocketFrame::Close` to end a connection gracefully). `close()` on an open connection
//! sends close 1000 if no close frame went yet and closes once it is written, without
//! waiting for the answer: netloop's transport also closes through the pipeline when the
//! peer's input ends, and that answer would never come. Data written after our close frame
//! fails with `ERR_CHANNEL_CLOSED`.
//!
//! permessage-deflate (when agreed, [`WebSocketHandler::with_deflate`]): the decoder allows
//! RSV1 on a message's first frame, whose message is then inflated frame by frame within
//! `max_message_size` (deflate.rs); text and binary messages written of at least the
//! configured threshold go out compressed (fragments, pings, pongs and close frames never).
//!
//! End of input (the `ChannelInputShutdown` event) without a close handshake drops any
//! partial frame and closes the channel once the writes queued are written (close code 1006
//! on the peer's side: no close frame).
//!
//! Ground rules: see the parent module.

use std::cell::{Cell, RefCell};

use bytes::{Bytes, BytesMut};
use netloop_transport::{
    append_to_cumulation, ChannelHandler, ChannelHandlerContext, ChannelInputShutdown,
    ChannelPromise, HandlerResult, Message, TransportError, UserEvent,
};

use super::closing::Closing;
use super::compression::{directions, Outbound};
use super::pause::Pause;
use super::reading::Inbound;
use crate::close::{CloseCode, CloseFrame};
use crate::config::WsConfig;
use crate::decoder::{FrameDecoder, Role};
use crate::deflate::Decompression;
use crate::error::ConfigError;
use crate::extension::PerMessageDeflate;
use crate::frame::{encode_frame, Opcode};
use crate::message::{MessageAssembler, WebSocketFrame};

/// One WebSocket connection's codec and protocol handler.
pub struct WebSocketHandler {
    pub(super) config: WsConfig,
    pub(super) inbound: RefCell<Inbound>,
    /// Decoding stopped: a protocol error, or the peer's close frame.
    pub(super) stopped: Cell<bool>,
    pub(super) closing: Closing,
    pub(super) pause: Pause,
    /// Mask key generator (client role).
    pub(super) mask_state: Cell<u64>,
    pub(super) deflate: Option<PerMessageDeflate>,
    /// Compressing ours (permessage-deflate agreed). Boxed, as `Inbound::decompression`.
    pub(super) outbound: Option<Box<Outbound>>,
}

impl WebSocketHandler {
    /// A handler with `config`.
    ///
    /// # Errors
    /// [`ConfigError`] when `config` is out of range.
    pub fn new(config: WsConfig) -> Result<Self, ConfigError> {
        Self::with_deflate(config, None)
    }

    /// A handler with `config` and the permessage-deflate parameters the handshake agreed
    /// (`None`: no compression). Threshold and level come from `config.permessage_deflate`
    /// (defaults if unset).
    ///
    /// # Errors
    /// [`ConfigError`] when `config` is out of range.
    pub fn with_deflate(
        config: WsConfig,
        deflate: Option<PerMessageDeflate>,
    ) -> Result<Self, ConfigError> {
        config.validate()?;
        let mut seed = [0u8; 8];
        let _ = getrandom::getrandom(&mut seed);
        let settings = config.permessage_deflate.clone().unwrap_or_default();
        let (ours, theirs) = deflate
            .map(|agreed| directions(agreed, config.role))
            .unzip();
        Ok(WebSocketHandler {
            inbound: RefCell::new(Inbound {
                decoder: FrameDecoder::new(config.role, config.max_frame_size)
                    .allow_rsv1(deflate.is_some()),
                assembler: MessageAssembler::new(config.aggregate, config.max_message_size),
                buf: BytesMut::new(),
                decompression: theirs
                    .map(|d| Box::new(Decompression::new(d, config.max_message_size))),
            }),
            stopped: Cell::new(false),
            closing: Closing::default(),
            pause: Pause::default(),
            mask_state: Cell::new(u64::from_le_bytes(seed) | 1),
            deflate,
            outbound: ours.map(|d| Box::new(Outbound::new(d, &settings))),
            config,
        })
    }

    /// The permessage-deflate parameters in use, if it was agreed.
    pub fn deflate(&self) -> Option<PerMessageDeflate> {
        self.deflate
    }

    /// Whether compressor or decompressor state is held now (created at the first
    /// compressed message; freed after each message on a side without context takeover).
    pub fn holds_deflate_state(&self) -> bool {
        let inflating = self
            .inbound
            .borrow()
            .decompression
            .as_ref()
            .is_some_and(|d| d.has_state());
        inflating || self.outbound.as_ref().is_some_and(|o| o.has_state())
    }

    /// The configuration.
    pub fn config(&self) -> &WsConfig {
        &self.config
    }

    /// Whether our close frame was written.
    pub fn is_close_sent(&self) -> bool {
        self.closing.sent.get()
    }

    /// Whether the peer's close frame was read.
    pub fn is_close_received(&self) -> bool {
        self.closing.received.get()
    }

    /// Whether decoding waits for the channel to be writable again.
    pub fn is_paused(&self) -> bool {
        self.pause.is_paused()
    }

    /// Bytes received and not decoded yet.
    pub fn buffered_len(&self) -> usize {
        self.inbound.borrow().buf.len()
    }

    /// A mask key (xorshift64*, seeded from the OS): client frames only.
    fn mask(&self) -> Option<[u8; 4]> {
        if self.config.role == Role::Server {
            return None;
        }
        let mut x = self.mask_state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.mask_state.set(x);
        let k = (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32;
        Some(k.to_ne_bytes())
    }

    pub(super) fn encode(&self, fin: bool, opcode: Opcode, payload: &[u8]) -> Bytes {
        let mut out = BytesMut::with_capacity(payload.len() + 14);
        encode_frame(&mut out, fin, opcode, payload, self.mask());
        out.freeze()
    }

    /// A whole text or binary message, compressed (RSV1) when agreed and long enough.
    fn encode_message(&self, opcode: Opcode, payload: &[u8]) -> Bytes {
        let compressed = self.outbound.as_ref().and_then(|o| o.compress(payload));
        let Some(data) = compressed else {
            return self.encode(true, opcode, payload);
        };
        let mut out = BytesMut::with_capacity(data.len() + 14);
        encode_frame(&mut out, true, opcode, &data, self.mask());
        out[0] |= 0x40;
        out.freeze()
    }

    /// Encodes an outbound frame, or says why it cannot go.
    fn write_frame(
        &self,
        ctx: &ChannelHandlerContext,
        frame: WebSocketFrame,
        promise: ChannelPromise,
    ) {
        if self.closing.sent.get() {
            promise.try_failure(TransportError::ChannelClosed);
            return;
        }
        let bytes = match &frame {
            WebSocketFrame::Text(data) => self.encode_message(Opcode::Text, data),
            WebSocketFrame::Binary(data) => self.encode_message(Opcode::Binary, data),
            WebSocketFrame::Fragment(f) => {
                let opcode = match (f.first, f.text) {
                    (false, _) => Opcode::Continuation,
                    (true, true) => Opcode::Text,
                    (true, false) => Opcode::Binary,
                };
                self.encode(f.last, opcode, &f.data)
            }
            WebSocketFrame::Ping(data) => {
                self.encode(true, Opcode::Ping, &data[..data.len().min(125)])
            }
            WebSocketFrame::Pong(data) => {
                self.encode(true, Opcode::Pong, &data[..data.len().min(125)])
            }
            WebSocketFrame::Close(close) => {
                let close = match close.code {
                    Some(code) if !code.is_sendable() => CloseFrame::new(CloseCode::NORMAL, ""),
                    _ => close.clone(),
                };
                self.closing.sent.set(true);
                ctx.write_with(self.encode(true, Opcode::Close, &close.payload()), promise);
                if self.closing.received.get() {
                    self.closing.close_after_writes(ctx);
                } else {
                    self.closing.arm(ctx, self.config.close_timeout);
                }
                return;
            }
        };
        ctx.write_with(bytes, promise);
    }
}

impl std::fmt::Debug for WebSocketHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketHandler")
            .field("role", &self.config.role)
            .field("close_sent", &self.is_close_sent())
            .field("close_received", &self.is_close_received())
            .finish_non_exhaustive()
    }
}

impl ChannelHandler for WebSocketHandler {
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
        self.closing.cancel();
        self.pause.unpause();
        self.pause.read_again(ctx);
        Ok(())
    }

    fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.pause.can_resume(ctx) && !self.pause.resume_scheduled.replace(true) {
            self.schedule_resume(ctx);
        }
        ctx.fire_channel_writability_changed();
        Ok(())
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let bytes = match msg.into_bytes() {
            Ok(bytes) => bytes,
            Err(other) => {
                ctx.fire_channel_read(other);
                return Ok(());
            }
        };
        if self.stopped.get() {
            return Ok(());
        }
        append_to_cumulation(&mut self.inbound.borrow_mut().buf, &bytes);
        self.decode(ctx);
        Ok(())
    }

    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.closing.cancel();
        self.stopped.set(true);
        self.drop_input();
        ctx.fire_channel_inactive();
        Ok(())
    }

    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        if event.is::<ChannelInputShutdown>() && !self.closing.closing_channel.get() {
            // The peer's input ended without a close handshake (1006): nothing more can
            // arrive, a partial frame never completes. Close once what is queued is written.
            self.stopped.set(true);
            self.drop_input();
            self.closing.close_after_writes(ctx);
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
        let frame = match msg {
            Message::Bytes(bytes) => WebSocketFrame::Binary(bytes),
            Message::User(value) => match value.downcast::<WebSocketFrame>() {
                Ok(frame) => *frame,
                Err(value) => match value.downcast::<String>() {
                    Ok(text) => WebSocketFrame::Text(Bytes::from(*text)),
                    Err(value) => {
                        ctx.write_with(Message::User(value), promise);
                        return Ok(());
                    }
                },
            },
            other => {
                ctx.write_with(other, promise);
                return Ok(());
            }
        };
        self.write_frame(ctx, frame, promise);
        Ok(())
    }

    fn close(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        let open = ctx.try_channel().is_some_and(|ch| ch.is_active());
        if !open || self.closing.closing_channel.get() {
            ctx.close_with(promise);
            return Ok(());
        }
        // A close through the pipeline may be the transport's own after the peer's end of
        // input (netloop closes through the pipeline then): send our close frame if it did
        // not go yet, but do not wait for an answer that may never come.
        if !self.closing.sent.replace(true) {
            let close = CloseFrame::new(CloseCode::NORMAL, "");
            ctx.write(self.encode(true, Opcode::Close, &close.payload()));
        }
        self.stopped.set(true);
        self.closing.set_promise(promise);
        self.closing.close_after_writes(ctx);
        Ok(())
    }
}
