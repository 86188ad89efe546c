//! [`ByteToMessageDecoder`]: Netty's `ByteToMessageDecoder` as a pipeline handler, driving
//! any [`FrameDecoder`] through a [`Cumulator`].
//!
//! Behaviour:
//! - Inbound `Message::Bytes` are cumulated; each frame is fired as one `channel_read` of
//!   `Message::Bytes`, in stream order. Other messages pass through unchanged.
//! - A [`CodecError`](crate::CodecError) is fired as `exception_caught` (code
//!   `ERR_TOO_LONG_FRAME`, ...), in stream order with the frames, and decoding goes on.
//! - `channel_read_complete` is passed on as is. With `autoRead` off, a read burst that
//!   brought bytes but no frame asks for another read, so a partial frame can complete.
//! - End of input (`channel_inactive`, or the `ChannelInputShutdown` user event of a
//!   half-closed channel) runs the final decode (`decode_last`) once, fires its frames and a
//!   `channel_read_complete` if there were any, drops what is left, then passes the event on.
//! - Removal from the pipeline forwards the unconsumed bytes as one `Message::Bytes` read,
//!   followed by `channel_read_complete`, as Netty's `handlerRemoved` does.
//!
//! Invariants:
//! - Frames are decoded one decode call at a time, and the handler checks between calls
//!   whether a handler further on removed it (a protocol switch): if so it stops, and the
//!   bytes not yet decoded have already been forwarded raw by `handler_removed`.
//! - A decoder that removes its own handler from inside `decode_in_pipeline` (a protocol
//!   upgrade) does so while the cumulation is borrowed: the removal is deferred until the
//!   decode call returns (Netty's `STATE_HANDLER_REMOVED_PENDING`), then the frames of that
//!   call are fired, then the unconsumed bytes are handed on, and decoding stops.
//! - No `RefCell` borrow is held while an event is fired, so a re-entrant `channel_read`
//!   (a handler further on firing from the head) appends to the same cumulation and the
//!   frames still come out in byte order.
//!
//! One difference from Netty: the final decode runs once even when input shutdown is
//! followed by inactive, so an end-of-stream message from `decode_last` is not repeated.

use std::cell::{Cell, RefCell};

use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelInputShutdown, HandlerResult, Message, UserEvent,
};

use crate::cumulator::{Cumulator, DecodeOutput};
use crate::decoder::FrameDecoder;

/// A handler that splits inbound bytes into frames with `D`.
///
/// ```
/// use netloop_codec::{ByteToMessageDecoder, LineBasedFrameDecoder};
/// let handler = ByteToMessageDecoder::new(LineBasedFrameDecoder::new(1024));
/// # let _ = handler;
/// ```
pub struct ByteToMessageDecoder<D> {
    cumulator: RefCell<Cumulator<D>>,
    /// Reused output vector of decode steps (taken out while its items are fired).
    scratch: Cell<DecodeOutput>,
    /// The final decode ran; later ends of input do not run it again.
    input_closed: Cell<bool>,
    /// A frame was fired since the last `channel_read_complete`.
    fired_frame: Cell<bool>,
    /// Bytes were received since the last `channel_read_complete`.
    got_bytes: Cell<bool>,
    /// A decoder call is running (the cumulation is borrowed).
    decoding: Cell<bool>,
    /// The handler was removed during a decoder call: finish the removal after it.
    removal_pending: Cell<bool>,
}

impl<D: FrameDecoder> ByteToMessageDecoder<D> {
    /// A handler around `decoder`.
    pub fn new(decoder: D) -> Self {
        ByteToMessageDecoder {
            cumulator: RefCell::new(Cumulator::new(decoder)),
            scratch: Cell::new(Vec::new()),
            input_closed: Cell::new(false),
            fired_frame: Cell::new(false),
            got_bytes: Cell::new(false),
            decoding: Cell::new(false),
            removal_pending: Cell::new(false),
        }
    }

    /// Bytes received but not yet consumed (Netty's `actualReadableBytes`).
    pub fn buffered_len(&self) -> usize {
        self.cumulator.borrow().buffered().len()
    }

    /// Runs `f` on the decoder (e.g. to reconfigure it between reads). `f` must not call
    /// back into this handler.
    pub fn with_decoder<R>(&self, f: impl FnOnce(&mut D) -> R) -> R {
        f(self.cumulator.borrow_mut().decoder_mut())
    }

    /// Decodes until the cumulation yields nothing more, firing each result as it comes.
    /// With `last`, uses `decode_last` and calls it at least once, even on no bytes.
    /// Returns whether a frame was fired.
    fn decode(&self, ctx: &ChannelHandlerContext, last: bool) -> bool {
        let mut fired = false;
        let mut first = true;
        loop {
            let mut out = self.scratch.take();
            let progressed = {
                let mut cumulator = self.cumulator.borrow_mut();
                let call = (last && first) || !cumulator.buffered().is_empty();
                let _decoding = Flag::raise(&self.decoding);
                call && cumulator.decode_step_with(&mut out, |d, buf| {
                    if last {
                        d.decode_last_in_pipeline(ctx, buf)
                    } else {
                        d.decode_in_pipeline(ctx, buf)
                    }
                })
            };
            first = false;
            for result in out.drain(..) {
                match result {
                    Ok(frame) => {
                        fired = true;
                        ctx.fire_channel_read(Message::Bytes(frame));
                    }
                    Err(error) => ctx.fire_exception_caught(error.into()),
                }
            }
            self.scratch.set(out);
            if self.removal_pending.replace(false) {
                self.hand_on_leftover(ctx);
                break;
            }
            if !progressed || ctx.is_removed() || self.buffered_len() == 0 {
                break;
            }
        }
        if fired {
            self.fired_frame.set(true);
        }
        fired
    }

    /// Hands the bytes not consumed on to the next handler (removal).
    fn hand_on_leftover(&self, ctx: &ChannelHandlerContext) {
        let leftover = self.cumulator.borrow_mut().take_leftover();
        if !leftover.is_empty() {
            ctx.fire_channel_read(Message::Bytes(leftover));
            ctx.fire_channel_read_complete();
        }
    }

    /// End of input: the final decode, once; its frames are followed by a read complete.
    fn input_closed(&self, ctx: &ChannelHandlerContext) {
        if self.input_closed.replace(true) || ctx.is_removed() {
            return;
        }
        let fired = self.decode(ctx, true);
        self.cumulator.borrow_mut().clear();
        if fired {
            self.fired_frame.set(false);
            ctx.fire_channel_read_complete();
        }
    }
}

/// Sets a flag for its lifetime (also cleared if a decoder panics).
struct Flag<'a>(&'a Cell<bool>);

impl<'a> Flag<'a> {
    fn raise(cell: &'a Cell<bool>) -> Self {
        cell.set(true);
        Flag(cell)
    }
}

impl Drop for Flag<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

impl<D: FrameDecoder> From<D> for ByteToMessageDecoder<D> {
    fn from(decoder: D) -> Self {
        ByteToMessageDecoder::new(decoder)
    }
}

impl<D> std::fmt::Debug for ByteToMessageDecoder<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ByteToMessageDecoder")
            .field("input_closed", &self.input_closed.get())
            .finish_non_exhaustive()
    }
}

impl<D: FrameDecoder + 'static> ChannelHandler for ByteToMessageDecoder<D> {
    // Reads passes by (the default method): the mask skips this context.
    fn takes_read(&self) -> bool {
        false
    }

    // Writes and flushes only pass by (the trait's methods): their walk skips this context.
    fn takes_write(&self) -> bool {
        false
    }
    fn takes_flush(&self) -> bool {
        false
    }
    fn handler_removed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.decoding.get() {
            // Removed from inside the decoder: finish once the decoder call returned.
            self.removal_pending.set(true);
            return Ok(());
        }
        self.hand_on_leftover(ctx);
        Ok(())
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        match msg.into_bytes() {
            Ok(bytes) => {
                self.got_bytes.set(true);
                self.cumulator.borrow_mut().extend(&bytes);
                self.decode(ctx, false);
            }
            Err(other) => ctx.fire_channel_read(other),
        }
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        let fired = self.fired_frame.replace(false);
        let got_bytes = self.got_bytes.replace(false);
        if got_bytes && !fired {
            ctx.read_unless_auto_read();
        }
        ctx.fire_channel_read_complete();
        Ok(())
    }

    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.input_closed(ctx);
        ctx.fire_channel_inactive();
        Ok(())
    }

    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        if event.is::<ChannelInputShutdown>() {
            self.input_closed(ctx);
        }
        ctx.fire_user_event_triggered(event);
        Ok(())
    }
}
