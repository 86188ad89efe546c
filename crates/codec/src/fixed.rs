//! Netty's `FixedLengthFrameDecoder`: every frame is exactly `frame_length` bytes.
//!
//! Invariant: `frame_length > 0` (checked at construction), so every frame consumes input.
//! A partial frame waits for more bytes; at end of stream it is dropped.

use bytes::{Bytes, BytesMut};

use crate::decoder::FrameDecoder;
use crate::error::{invalid_config, CodecError, ConfigError};

/// Splits a stream into frames of a fixed length.
#[derive(Debug, Clone)]
pub struct FixedLengthFrameDecoder {
    frame_length: usize,
}

impl FixedLengthFrameDecoder {
    /// Fails if `frame_length` is 0.
    pub fn new(frame_length: usize) -> Result<Self, ConfigError> {
        if frame_length == 0 {
            return Err(invalid_config("frameLength must be a positive integer: 0"));
        }
        Ok(FixedLengthFrameDecoder { frame_length })
    }

    /// The frame length.
    pub fn frame_length(&self) -> usize {
        self.frame_length
    }
}

impl FrameDecoder for FixedLengthFrameDecoder {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        if buf.len() < self.frame_length {
            return Ok(None);
        }
        Ok(Some(buf.split_to(self.frame_length).freeze()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn fixed_decoder_rejects_zero_length() {
        assert_eq!(
            FixedLengthFrameDecoder::new(0).unwrap_err().code(),
            "ERR_INVALID_ARG_VALUE"
        );
    }

    #[test]
    fn fixed_decoder_cuts_frames_across_reads_and_keeps_the_partial_tail() {
        let decoder = FixedLengthFrameDecoder::new(3).unwrap();
        let out = decode_chunks(decoder, &[b"ab", b"cdefg", b"hi"]);
        assert_eq!(out, [frame(b"abc"), frame(b"def"), frame(b"ghi")]);
    }

    #[test]
    fn fixed_decoder_yields_same_frames_fed_byte_by_byte() {
        let decoder = FixedLengthFrameDecoder::new(4).unwrap();
        let out = decode_bytewise(decoder, b"0123456789");
        assert_eq!(out, [frame(b"0123"), frame(b"4567")]);
    }

    #[test]
    fn fixed_decoder_leaves_partial_frame_as_leftover_on_removal() {
        let mut cumulator = crate::Cumulator::new(FixedLengthFrameDecoder::new(4).unwrap());
        let mut out = Vec::new();
        cumulator.feed(b"abcdef", &mut out);
        assert_eq!(out, [Ok(Bytes::from_static(b"abcd"))]);
        assert_eq!(cumulator.take_leftover(), Bytes::from_static(b"ef"));
    }
}
