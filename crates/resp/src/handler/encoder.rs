//! [`RespEncoder`]: an outbound handler writing [`RespValue`] messages as RESP (Netty's
//! `RedisEncoder`).
//!
//! Behaviour:
//! - A `Message::User(RespValue)` is encoded and written with the caller's promise. Payloads
//!   (bulk strings, bulk errors, verbatim text) of [`GATHER_THRESHOLD`] bytes or more are not
//!   copied: the value goes out as several messages, the payload as the caller's own `Bytes`,
//!   and the promise completes with the last one. If the channel refuses an earlier part,
//!   the later parts are not written and the promise fails with that error.
//! - Every other message (raw `Bytes` a handler already encoded with the
//!   [`encode`](crate::encode) helpers, or anything else) passes through unchanged.
//! - Encoding cannot fail (see [`encode`](crate::encode)).

use bytes::{Bytes, BytesMut};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelPromise, HandlerResult, Message,
};

use crate::encode::Out;
use crate::value::RespValue;

/// Payloads at least this long are written as separate messages instead of being copied.
pub const GATHER_THRESHOLD: usize = 4096;

/// Encodes outbound [`RespValue`]s.
#[derive(Debug, Default, Clone, Copy)]
pub struct RespEncoder;

impl RespEncoder {
    /// An encoder (it has no state; one may serve any number of channels on a thread).
    pub fn new() -> Self {
        RespEncoder
    }
}

impl ChannelHandler for RespEncoder {
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
        let value = match msg.downcast::<RespValue>() {
            Ok(value) => value,
            Err(other) => {
                ctx.write_with(other, promise);
                return Ok(());
            }
        };
        let mut buf = BytesMut::with_capacity(64);
        let mut segments: Vec<Bytes> = Vec::new();
        Out {
            buf: &mut buf,
            segments: Some(&mut segments),
            gather: GATHER_THRESHOLD,
        }
        .value(&value);
        if !buf.is_empty() {
            segments.push(buf.freeze());
        }
        let last = segments.pop().unwrap_or_default();
        for segment in segments {
            let part = ChannelPromise::new();
            ctx.write_with(segment, part.clone());
            let refused = part.future().and_then(|f| f.result()).and_then(Result::err);
            if let Some(error) = refused {
                promise.try_failure(error);
                return Ok(());
            }
        }
        ctx.write_with(last, promise);
        Ok(())
    }
}
