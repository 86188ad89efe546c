//! Byte order of a length field, and reading/writing unsigned integers of 1 to 8 bytes.
//!
//! Invariant: callers pass field widths in `1..=8` and, for reads, a slice of exactly that
//! width; both are checked by the length-field types at construction.

use bytes::BufMut;

/// Byte order of a length field. Netty's default, and this crate's, is big endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ByteOrder {
    /// Most significant byte first (network order).
    #[default]
    BigEndian,
    /// Least significant byte first.
    LittleEndian,
}

impl ByteOrder {
    /// Reads `field` (1 to 8 bytes) as an unsigned integer.
    pub(crate) fn read_uint(self, field: &[u8]) -> u64 {
        let fold = |acc: u64, b: &u8| (acc << 8) | u64::from(*b);
        match self {
            ByteOrder::BigEndian => field.iter().fold(0, fold),
            ByteOrder::LittleEndian => field.iter().rev().fold(0, fold),
        }
    }

    /// Appends the low `width` bytes of `value` (caller checked that it fits).
    pub(crate) fn write_uint(self, value: u64, width: usize, out: &mut impl BufMut) {
        match self {
            ByteOrder::BigEndian => out.put_slice(&value.to_be_bytes()[8 - width..]),
            ByteOrder::LittleEndian => out.put_slice(&value.to_le_bytes()[..width]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_uint_honours_byte_order_for_every_width() {
        let bytes = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08];
        assert_eq!(ByteOrder::BigEndian.read_uint(&bytes[..1]), 0x01);
        assert_eq!(ByteOrder::BigEndian.read_uint(&bytes[..3]), 0x010203);
        assert_eq!(ByteOrder::LittleEndian.read_uint(&bytes[..3]), 0x030201);
        assert_eq!(ByteOrder::BigEndian.read_uint(&bytes), 0x0102030405060708);
        assert_eq!(
            ByteOrder::LittleEndian.read_uint(&bytes),
            0x0807060504030201
        );
    }

    #[test]
    fn write_then_read_round_trips_for_every_width_and_order() {
        for order in [ByteOrder::BigEndian, ByteOrder::LittleEndian] {
            for width in 1..=8usize {
                let value = 0xA1B2_C3D4_E5F6_0718u64 >> (8 * (8 - width));
                let mut out = Vec::new();
                order.write_uint(value, width, &mut out);
                assert_eq!(out.len(), width);
                assert_eq!(order.read_uint(&out), value, "{order:?} width {width}");
            }
        }
    }
}
