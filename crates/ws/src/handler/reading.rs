//! The reading half of [`WebSocketHandler`]: the cumulation decoded into frames and messages
//! (inflated when permessage-deflate was agreed), control frames answered, the peer's close
//! frame and protocol errors handled, decoding paused while the channel is unwritable and
//! resumed from a loop task. Ground rules: see the parent module.

use bytes::BytesMut;
use netloop_transport::ChannelHandlerContext;

use super::connection::WebSocketHandler;
use crate::close::CloseFrame;
use crate::decoder::FrameDecoder;
use crate::deflate::Decompression;
use crate::error::WsError;
use crate::frame::Opcode;
use crate::message::{MessageAssembler, WebSocketFrame};

/// What was received and not handled yet.
pub(super) struct Inbound {
    pub(super) decoder: FrameDecoder,
    pub(super) assembler: MessageAssembler,
    pub(super) buf: BytesMut,
    /// Inflating the peer's compressed messages (permessage-deflate agreed). Boxed: a
    /// connection without compression keeps a pointer, not the state's 190 bytes inline.
    pub(super) decompression: Option<Box<Decompression>>,
}

impl WebSocketHandler {
    /// Decodes and handles frames until the cumulation yields no more.
    pub(super) fn decode(&self, ctx: &ChannelHandlerContext) {
        while !self.stopped.get() && !ctx.is_removed() {
            if self.config.pause_while_unwritable && self.pause.stops(ctx) {
                return;
            }
            let next = {
                let mut inbound = self.inbound.borrow_mut();
                let Inbound {
                    decoder,
                    assembler,
                    buf,
                    decompression,
                } = &mut *inbound;
                match decoder.decode(buf) {
                    Ok(Some(frame)) => match decompression {
                        Some(d) => d.frame(frame, assembler.in_message()),
                        None => Ok(frame),
                    }
                    .and_then(|frame| assembler.push(frame))
                    .map(Some),
                    // Text still arriving is checked as it comes (fail fast on UTF-8).
                    Ok(None) => match decoder.partial(buf) {
                        Some(partial) => {
                            let compressed = partial.rsv1
                                || (partial.opcode == Opcode::Continuation
                                    && decompression
                                        .as_ref()
                                        .is_some_and(|d| d.in_compressed_message()));
                            assembler.check_partial(&partial, compressed).map(|()| None)
                        }
                        None => Ok(None),
                    },
                    Err(error) => Err(error),
                }
            };
            match next {
                Ok(Some(Some(frame))) => self.on_frame(ctx, frame),
                Ok(Some(None)) => {}
                Ok(None) => return,
                Err(error) => return self.fail(ctx, error),
            }
        }
    }

    fn on_frame(&self, ctx: &ChannelHandlerContext, frame: WebSocketFrame) {
        match frame {
            WebSocketFrame::Ping(payload) => {
                if self.config.auto_pong && !self.closing.sent.get() {
                    ctx.write_and_flush(self.encode(true, Opcode::Pong, &payload));
                }
                if self.config.forward_control_frames {
                    ctx.fire_channel_read(WebSocketFrame::Ping(payload));
                }
            }
            WebSocketFrame::Pong(_) if !self.config.forward_control_frames => {}
            WebSocketFrame::Close(close) => self.on_close(ctx, close),
            other => ctx.fire_channel_read(other),
        }
    }

    /// The peer's close frame: answer it (unless ours went first), then close the channel.
    fn on_close(&self, ctx: &ChannelHandlerContext, close: CloseFrame) {
        self.stopped.set(true);
        self.closing.received.set(true);
        self.drop_input();
        if !self.closing.sent.replace(true) {
            let answer = match close.code {
                Some(code) => CloseFrame::new(code, ""),
                None => CloseFrame::empty(),
            };
            ctx.write(self.encode(true, Opcode::Close, &answer.payload()));
        }
        ctx.fire_channel_read(WebSocketFrame::Close(close));
        self.closing.close_after_writes(ctx);
    }

    /// A protocol error: report it, send its close code, close.
    pub(super) fn fail(&self, ctx: &ChannelHandlerContext, error: WsError) {
        self.stopped.set(true);
        self.drop_input();
        let code = error.close_code();
        ctx.fire_exception_caught(error.into());
        if !self.closing.sent.replace(true) {
            let close = CloseFrame::new(code, "");
            ctx.write(self.encode(true, Opcode::Close, &close.payload()));
        }
        self.closing.close_after_writes(ctx);
    }

    /// Resumes from a loop task once the channel is writable again (pause.rs).
    pub(super) fn schedule_resume(&self, ctx: &ChannelHandlerContext) {
        let Some(event_loop) = ctx.try_channel().and_then(|ch| ch.event_loop().local()) else {
            self.pause.resume_scheduled.set(false);
            return;
        };
        let c = ctx.clone();
        event_loop.execute_local(move || {
            if c.is_removed() {
                return;
            }
            let handler = c.handler();
            if let Some(ws) = handler
                .as_any()
                .and_then(|a| a.downcast_ref::<WebSocketHandler>())
            {
                ws.resume(&c);
            }
        });
    }

    /// Decodes what waited, then reads again unless it paused once more.
    fn resume(&self, ctx: &ChannelHandlerContext) {
        self.pause.resume_scheduled.set(false);
        if !self.pause.can_resume(ctx) {
            return;
        }
        self.pause.unpause();
        self.decode(ctx);
        ctx.fire_channel_read_complete();
        if !self.pause.is_paused() && ctx.try_channel().is_some_and(|ch| ch.is_open()) {
            self.pause.read_again(ctx);
        }
    }

    /// The peer did not answer our close frame in time.
    pub(super) fn close_timed_out(&self, ctx: &ChannelHandlerContext) {
        self.stopped.set(true);
        self.closing.close_after_writes(ctx);
    }

    pub(super) fn drop_input(&self) {
        let mut inbound = self.inbound.borrow_mut();
        inbound.buf = BytesMut::new();
        inbound.assembler.reset();
        if let Some(d) = &mut inbound.decompression {
            d.reset();
        }
    }
}
