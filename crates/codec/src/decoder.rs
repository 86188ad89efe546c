//! The frame decoder contract (the `decode` half of Netty's `ByteToMessageDecoder`).
//!
//! Invariants every implementation keeps:
//! - A decoder only consumes bytes from the front of `buf` (`advance`, `split_to`); it never
//!   appends to it or reorders it.
//! - `Ok(None)` means "more bytes are needed". It may still consume bytes (e.g. while
//!   discarding an oversized frame).
//! - `Ok(Some(frame))` consumes at least one byte. The [`Cumulator`](crate::Cumulator) treats
//!   a frame produced without consuming anything as a broken decoder.
//! - `Err(_)` leaves `buf` and the decoder's state consistent: the offending bytes have been
//!   consumed (or will be discarded by later calls), so the next call decodes the next frame.
//! - No input makes a decoder panic.
//! - The default `decode_last` does not decode an empty buffer (Netty's `decodeLast` only
//!   calls `decode` when bytes are readable); a decoder that emits an end-of-stream message
//!   overrides `decode_last`, which is called once at end of input even with no bytes.
//!
//! In a pipeline, [`ByteToMessageDecoder`](crate::ByteToMessageDecoder) calls the
//! `*_in_pipeline` variants, which get the handler's context (Netty's `decode(ctx, in, out)`)
//! and default to the plain ones. A decoder that switches protocols overrides
//! [`FrameDecoder::decode_in_pipeline`] and removes (or replaces) its handler from there:
//! the frames it returned so far are fired, then the bytes it did not consume are handed on
//! to the next handler as one read, and decoding stops.

use bytes::{Bytes, BytesMut};

use netloop_transport::ChannelHandlerContext;

use crate::error::CodecError;

/// Splits a byte stream into frames.
pub trait FrameDecoder {
    /// Decodes at most one frame from the front of `buf`.
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError>;

    /// Decodes at most one frame when no more input will arrive (channel inactive).
    /// Defaults to [`decode`](FrameDecoder::decode) when bytes are left, `Ok(None)` on an
    /// empty buffer.
    fn decode_last(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        if buf.is_empty() {
            return Ok(None);
        }
        self.decode(buf)
    }

    /// [`decode`](FrameDecoder::decode) with the context of the decoding handler (a
    /// decoder may remove its handler from here, see the module docs). Defaults to
    /// `decode`.
    fn decode_in_pipeline(
        &mut self,
        ctx: &ChannelHandlerContext,
        buf: &mut BytesMut,
    ) -> Result<Option<Bytes>, CodecError> {
        let _ = ctx;
        self.decode(buf)
    }

    /// [`decode_last`](FrameDecoder::decode_last) with the context of the decoding handler.
    /// Defaults to `decode_last`.
    fn decode_last_in_pipeline(
        &mut self,
        ctx: &ChannelHandlerContext,
        buf: &mut BytesMut,
    ) -> Result<Option<Bytes>, CodecError> {
        let _ = ctx;
        self.decode_last(buf)
    }
}

impl<D: FrameDecoder + ?Sized> FrameDecoder for Box<D> {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        (**self).decode(buf)
    }

    fn decode_last(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        (**self).decode_last(buf)
    }
    fn decode_in_pipeline(
        &mut self,
        ctx: &ChannelHandlerContext,
        buf: &mut BytesMut,
    ) -> Result<Option<Bytes>, CodecError> {
        (**self).decode_in_pipeline(ctx, buf)
    }

    fn decode_last_in_pipeline(
        &mut self,
        ctx: &ChannelHandlerContext,
        buf: &mut BytesMut,
    ) -> Result<Option<Bytes>, CodecError> {
        (**self).decode_last_in_pipeline(ctx, buf)
    }
}

impl<D: FrameDecoder + ?Sized> FrameDecoder for &mut D {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        (**self).decode(buf)
    }

    fn decode_last(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        (**self).decode_last(buf)
    }
    fn decode_in_pipeline(
        &mut self,
        ctx: &ChannelHandlerContext,
        buf: &mut BytesMut,
    ) -> Result<Option<Bytes>, CodecError> {
        (**self).decode_in_pipeline(ctx, buf)
    }

    fn decode_last_in_pipeline(
        &mut self,
        ctx: &ChannelHandlerContext,
        buf: &mut BytesMut,
    ) -> Result<Option<Bytes>, CodecError> {
        (**self).decode_last_in_pipeline(ctx, buf)
    }
}
