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

use bytes::{Bytes, BytesMut};

use crate::error::CodecError;

/// Splits a byte stream into frames.
pub trait FrameDecoder {
    /// Decodes at most one frame from the front of `buf`.
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError>;

    /// Decodes at most one frame when no more input will arrive (channel inactive).
    /// Defaults to [`decode`](FrameDecoder::decode).
    fn decode_last(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        self.decode(buf)
    }
}

impl<D: FrameDecoder + ?Sized> FrameDecoder for Box<D> {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        (**self).decode(buf)
    }

    fn decode_last(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        (**self).decode_last(buf)
    }
}

impl<D: FrameDecoder + ?Sized> FrameDecoder for &mut D {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        (**self).decode(buf)
    }

    fn decode_last(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        (**self).decode_last(buf)
    }
}
