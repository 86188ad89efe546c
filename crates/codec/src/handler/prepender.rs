//! [`LengthFieldPrepender`] as an outbound handler (Netty's `LengthFieldPrepender`, a
//! `MessageToMessageEncoder`).
//!
//! Behaviour:
//! - Each outbound `Message::Bytes` gets its length header. A body shorter than
//!   [`GATHER_THRESHOLD`] is copied behind the header into one message; a longer body is not
//!   copied: the header and the body go on as two messages (the outbound buffer sends them
//!   with one gathering write). Other messages pass through unchanged.
//! - An [`EncoderError`](crate::CodecError::EncoderError) (negative or too large length) is
//!   returned as an `ERR_ENCODER` error: the pipeline fails the write's promise with it (or
//!   fires `exception_caught` for a void promise) and nothing is written.
//!
//! Invariant of the two-message form: the body is written only after the header write was
//! accepted, and it carries the caller's promise, so the promise completes once the whole
//! frame is written. If the header is refused on the spot (channel closing), the caller's
//! promise fails with the same error and the body is not written, so a body never goes out
//! without its header.

use bytes::BytesMut;
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelPromise, HandlerResult, Message,
};

use crate::prepender::LengthFieldPrepender;

/// Bodies at least this long are written after their header as a separate message instead
/// of being copied behind it.
pub const GATHER_THRESHOLD: usize = 4096;

impl ChannelHandler for LengthFieldPrepender {
    // Reads and flushes pass by (the default methods): the mask skips this context.
    fn takes_read(&self) -> bool {
        false
    }
    fn takes_flush(&self) -> bool {
        false
    }

    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        let body = match msg.into_bytes() {
            Ok(body) => body,
            Err(other) => {
                ctx.write_with(other, promise);
                return Ok(());
            }
        };
        if body.len() < GATHER_THRESHOLD {
            let mut frame = BytesMut::with_capacity(self.length_field_length() + body.len());
            self.encode(&body, &mut frame)?;
            ctx.write_with(frame.freeze(), promise);
            return Ok(());
        }
        let mut header = BytesMut::with_capacity(self.length_field_length());
        self.encode_header(body.len(), &mut header)?;
        let header_promise = ChannelPromise::new();
        ctx.write_with(header.freeze(), header_promise.clone());
        let refused = header_promise
            .future()
            .and_then(|f| f.result())
            .and_then(Result::err);
        match refused {
            Some(error) => {
                promise.try_failure(error);
            }
            None => ctx.write_with(body, promise),
        }
        Ok(())
    }
}
