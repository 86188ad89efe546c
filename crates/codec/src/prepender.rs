//! Netty's `LengthFieldPrepender`: writes a length header in front of each message.
//!
//! Header value = message length + `length_adjustment` (+ the field width when
//! `length_includes_length_field`). A negative value, or one that does not fit the field
//! (8-byte fields take at most `i64::MAX`, as the decoder reads them signed), is an
//! `EncoderError` and nothing is written.

use bytes::{BufMut, BytesMut};

use crate::byte_order::ByteOrder;
use crate::error::{invalid_config, CodecError, ConfigError};
use crate::length_field::FIELD_WIDTHS;

/// Prepends a length field to outbound messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LengthFieldPrepender {
    length_field_length: usize,
    length_includes_length_field: bool,
    length_adjustment: i64,
    byte_order: ByteOrder,
}

impl LengthFieldPrepender {
    /// A big-endian prepender of the message length alone. `length_field_length` must be
    /// 1, 2, 3, 4 or 8.
    pub fn new(length_field_length: usize) -> Result<Self, ConfigError> {
        Self::with_options(length_field_length, false, 0, ByteOrder::BigEndian)
    }

    /// A prepender with every option.
    pub fn with_options(
        length_field_length: usize,
        length_includes_length_field: bool,
        length_adjustment: i64,
        byte_order: ByteOrder,
    ) -> Result<Self, ConfigError> {
        if !FIELD_WIDTHS.contains(&length_field_length) {
            return Err(invalid_config(format!(
                "lengthFieldLength must be either 1, 2, 3, 4, or 8: {length_field_length}"
            )));
        }
        Ok(LengthFieldPrepender {
            length_field_length,
            length_includes_length_field,
            length_adjustment,
            byte_order,
        })
    }

    /// Width of the length field in bytes.
    pub fn length_field_length(&self) -> usize {
        self.length_field_length
    }

    /// Largest header value the field can carry.
    fn max_value(&self) -> u64 {
        match self.length_field_length {
            8 => i64::MAX as u64,
            width => (1u64 << (8 * width)) - 1,
        }
    }

    /// Writes only the header for a message of `message_len` bytes (for gathering writes
    /// that send the body without copying it).
    pub fn encode_header(&self, message_len: usize, out: &mut BytesMut) -> Result<(), CodecError> {
        let mut value = message_len as i128 + i128::from(self.length_adjustment);
        if self.length_includes_length_field {
            value += self.length_field_length as i128;
        }
        if value < 0 {
            return Err(CodecError::encoder(format!(
                "adjusted frame length ({value}) is less than zero"
            )));
        }
        if value > i128::from(self.max_value()) {
            return Err(CodecError::encoder(format!(
                "length {value} does not fit into a {}-byte length field",
                self.length_field_length
            )));
        }
        self.byte_order
            .write_uint(value as u64, self.length_field_length, out);
        Ok(())
    }

    /// Writes the header then `message` to `out`.
    pub fn encode(&self, message: &[u8], out: &mut BytesMut) -> Result<(), CodecError> {
        out.reserve(self.length_field_length + message.len());
        self.encode_header(message.len(), out)?;
        out.put_slice(message);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(prepender: &LengthFieldPrepender, message: &[u8]) -> Result<Vec<u8>, CodecError> {
        let mut out = BytesMut::new();
        prepender.encode(message, &mut out)?;
        Ok(out.to_vec())
    }

    #[test]
    fn prepender_writes_big_endian_length_then_message() {
        let prepender = LengthFieldPrepender::new(2).unwrap();
        assert_eq!(encoded(&prepender, b"abc").unwrap(), b"\x00\x03abc");
    }

    #[test]
    fn prepender_writes_little_endian_length_when_asked() {
        let prepender =
            LengthFieldPrepender::with_options(4, false, 0, ByteOrder::LittleEndian).unwrap();
        assert_eq!(encoded(&prepender, b"ab").unwrap(), b"\x02\x00\x00\x00ab");
    }

    #[test]
    fn prepender_counts_its_own_field_and_adjustment_when_asked() {
        let prepender =
            LengthFieldPrepender::with_options(1, true, 3, ByteOrder::BigEndian).unwrap();
        assert_eq!(encoded(&prepender, b"ab").unwrap(), b"\x06ab");
    }

    #[test]
    fn prepender_rejects_a_length_that_does_not_fit_the_field() {
        let one = LengthFieldPrepender::new(1).unwrap();
        assert!(encoded(&one, &[0; 255]).is_ok());
        let error = encoded(&one, &[0; 256]).unwrap_err();
        assert_eq!(error.code(), "ERR_ENCODER");
        let two = LengthFieldPrepender::new(2).unwrap();
        assert!(encoded(&two, &[0; 65_536]).is_err());
        let three = LengthFieldPrepender::new(3).unwrap();
        let mut out = BytesMut::new();
        assert!(three.encode_header(1 << 24, &mut out).is_err());
        assert!(out.is_empty(), "nothing written on error");
        let four = LengthFieldPrepender::new(4).unwrap();
        assert!(four.encode_header(u32::MAX as usize, &mut out).is_ok());
        assert!(four.encode_header(u32::MAX as usize + 1, &mut out).is_err());
        // 8-byte fields stop at i64::MAX: the decoder reads them as signed.
        let eight =
            LengthFieldPrepender::with_options(8, false, i64::MAX, ByteOrder::BigEndian).unwrap();
        assert_eq!(encoded(&eight, b"").unwrap(), i64::MAX.to_be_bytes());
        assert_eq!(encoded(&eight, b"a").unwrap_err().code(), "ERR_ENCODER");
    }

    #[test]
    fn prepender_rejects_a_negative_adjusted_length() {
        let prepender =
            LengthFieldPrepender::with_options(2, false, -3, ByteOrder::BigEndian).unwrap();
        assert_eq!(
            encoded(&prepender, b"ab").unwrap_err().code(),
            "ERR_ENCODER"
        );
        assert_eq!(encoded(&prepender, b"abc").unwrap(), b"\x00\x00abc");
    }

    #[test]
    fn prepender_rejects_unsupported_field_width() {
        for width in [0, 5, 6, 7, 9] {
            assert!(LengthFieldPrepender::new(width).is_err(), "width {width}");
        }
    }
}
