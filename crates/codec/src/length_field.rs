//! Netty's `LengthFieldBasedFrameDecoder`: frames announce their length in a header field.
//!
//! Frame length = field value + `length_adjustment` + `length_field_offset` +
//! `length_field_length` (the bytes up to the end of the field always count). The first
//! `initial_bytes_to_strip` bytes of the frame are dropped from the emitted frame.
//!
//! Error semantics (Netty's):
//! - An 8-byte field with the top bit set (negative as a signed long), or an adjusted
//!   length smaller than the end of the field: the header (offset + field) is consumed and
//!   `CorruptedFrame` is reported.
//! - An adjusted length smaller than `initial_bytes_to_strip`: the whole frame is consumed
//!   and `CorruptedFrame` is reported.
//! - An adjusted length over `max_frame_length`: the frame is discarded, across as many
//!   reads as it takes, and `TooLongFrame` (with the exact length) is reported once:
//!   fail-fast (default) when the header is read, fail-slow when the last byte has been
//!   discarded. If the whole frame is already buffered it is reported at once in both modes.
//!   The next frame decodes normally.
//!
//! All arithmetic on lengths is done in `i128`, so no field value or adjustment overflows.
//! State invariant: `discarding` is true exactly while `bytes_to_discard > 0` bytes of an
//! oversize frame have not arrived yet.

use bytes::{Buf, Bytes, BytesMut};

use crate::byte_order::ByteOrder;
use crate::decoder::FrameDecoder;
use crate::error::{invalid_config, CodecError, ConfigError};

/// Widths a length field may have, in bytes.
pub(crate) const FIELD_WIDTHS: [usize; 5] = [1, 2, 3, 4, 8];

/// Options of [`LengthFieldBasedFrameDecoder`], with Netty's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LengthFieldConfig {
    /// Largest frame accepted, in bytes, before stripping.
    pub max_frame_length: usize,
    /// Offset of the length field from the start of the frame.
    pub length_field_offset: usize,
    /// Width of the length field: 1, 2, 3, 4 or 8 bytes.
    pub length_field_length: usize,
    /// Added to the field value to obtain the number of bytes after the field.
    pub length_adjustment: i64,
    /// Bytes dropped from the front of each emitted frame.
    pub initial_bytes_to_strip: usize,
    /// Report an oversize frame as soon as its header is read (true) or once it has been
    /// discarded entirely (false).
    pub fail_fast: bool,
    /// Byte order of the length field.
    pub byte_order: ByteOrder,
}

impl LengthFieldConfig {
    /// Netty's three-argument constructor: no adjustment, no stripping, fail-fast,
    /// big endian.
    pub fn new(
        max_frame_length: usize,
        length_field_offset: usize,
        length_field_length: usize,
    ) -> Self {
        LengthFieldConfig {
            max_frame_length,
            length_field_offset,
            length_field_length,
            length_adjustment: 0,
            initial_bytes_to_strip: 0,
            fail_fast: true,
            byte_order: ByteOrder::BigEndian,
        }
    }
}

/// Splits a stream into frames whose header carries their length.
#[derive(Debug, Clone)]
pub struct LengthFieldBasedFrameDecoder {
    cfg: LengthFieldConfig,
    field_end: usize,
    discarding: bool,
    too_long_length: u64,
    bytes_to_discard: u64,
}

impl LengthFieldBasedFrameDecoder {
    /// Validates `cfg` as Netty does: a positive maximum, a field width of 1, 2, 3, 4 or 8,
    /// and a field that ends within the maximum frame length.
    pub fn new(cfg: LengthFieldConfig) -> Result<Self, ConfigError> {
        if cfg.max_frame_length == 0 {
            return Err(invalid_config(
                "maxFrameLength must be a positive integer: 0",
            ));
        }
        if !FIELD_WIDTHS.contains(&cfg.length_field_length) {
            return Err(invalid_config(format!(
                "unsupported lengthFieldLength: {} (expected: 1, 2, 3, 4, or 8)",
                cfg.length_field_length
            )));
        }
        let field_end = cfg.length_field_offset.checked_add(cfg.length_field_length);
        let field_end = match field_end {
            Some(end) if end <= cfg.max_frame_length => end,
            _ => {
                return Err(invalid_config(format!(
                    "maxFrameLength ({}) must be equal to or greater than lengthFieldOffset ({}) \
                     + lengthFieldLength ({})",
                    cfg.max_frame_length, cfg.length_field_offset, cfg.length_field_length
                )))
            }
        };
        Ok(LengthFieldBasedFrameDecoder {
            cfg,
            field_end,
            discarding: false,
            too_long_length: 0,
            bytes_to_discard: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &LengthFieldConfig {
        &self.cfg
    }

    fn too_long(&self, length: u64) -> CodecError {
        CodecError::TooLongFrame {
            length,
            max: self.cfg.max_frame_length,
            complete: true,
        }
    }

    /// Consumes the rest of an oversize frame; reports it here when failing slow.
    fn discard(&mut self, buf: &mut BytesMut) -> Result<(), CodecError> {
        let now = usize::try_from(self.bytes_to_discard).map_or(buf.len(), |n| n.min(buf.len()));
        buf.advance(now);
        self.bytes_to_discard -= now as u64;
        if self.bytes_to_discard > 0 {
            return Ok(());
        }
        self.discarding = false;
        let length = std::mem::take(&mut self.too_long_length);
        if self.cfg.fail_fast {
            Ok(())
        } else {
            Err(self.too_long(length))
        }
    }
}

impl FrameDecoder for LengthFieldBasedFrameDecoder {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        if self.discarding {
            self.discard(buf)?;
            if self.discarding {
                return Ok(None);
            }
        }
        if buf.len() < self.field_end {
            return Ok(None);
        }

        let field = &buf[self.cfg.length_field_offset..self.field_end];
        let raw = self.cfg.byte_order.read_uint(field);
        if raw > i64::MAX as u64 {
            buf.advance(self.field_end);
            return Err(CodecError::corrupted(format!(
                "negative pre-adjustment length field: {}",
                raw as i64
            )));
        }
        let length =
            i128::from(raw) + i128::from(self.cfg.length_adjustment) + self.field_end as i128;
        if length < self.field_end as i128 {
            buf.advance(self.field_end);
            return Err(CodecError::corrupted(format!(
                "adjusted frame length ({length}) is less than lengthFieldEndOffset: {}",
                self.field_end
            )));
        }

        if length > self.cfg.max_frame_length as i128 {
            let reported = u64::try_from(length).unwrap_or(u64::MAX);
            if length <= buf.len() as i128 {
                buf.advance(length as usize);
                return Err(self.too_long(reported));
            }
            self.bytes_to_discard = u64::try_from(length - buf.len() as i128).unwrap_or(u64::MAX);
            self.too_long_length = reported;
            self.discarding = true;
            buf.clear();
            if self.cfg.fail_fast {
                return Err(self.too_long(reported));
            }
            return Ok(None);
        }

        // Within max_frame_length, hence within usize.
        let length = length as usize;
        if buf.len() < length {
            return Ok(None);
        }
        let strip = self.cfg.initial_bytes_to_strip;
        if strip > length {
            buf.advance(length);
            return Err(CodecError::corrupted(format!(
                "adjusted frame length ({length}) is less than initialBytesToStrip: {strip}"
            )));
        }
        buf.advance(strip);
        Ok(Some(buf.split_to(length - strip).freeze()))
    }
}

#[cfg(test)]
#[path = "length_field_tests.rs"]
mod tests;
