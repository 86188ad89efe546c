//! Frames on the wire (RFC 6455 §5.2): opcodes, the [`Frame`] value, masking and the encoder.
//!
//! ```text
//! FIN RSV1-3 opcode(4) | MASK len(7) | [len 16 or 64 bits] | [mask key 32 bits] | payload
//! ```
//! Lengths are written in their shortest form (126 → 16 bits, 65,536 → 64 bits).

use bytes::{BufMut, Bytes, BytesMut};

/// A frame's opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Opcode {
    /// 0: the next fragment of a message.
    Continuation,
    /// 1: the first (or only) frame of a text message.
    Text,
    /// 2: the first (or only) frame of a binary message.
    Binary,
    /// 8: close.
    Close,
    /// 9: ping.
    Ping,
    /// 10: pong.
    Pong,
}

impl Opcode {
    /// The opcode of a 4-bit value, `None` for the reserved ones.
    pub fn from_u8(value: u8) -> Option<Opcode> {
        Some(match value {
            0 => Opcode::Continuation,
            1 => Opcode::Text,
            2 => Opcode::Binary,
            8 => Opcode::Close,
            9 => Opcode::Ping,
            10 => Opcode::Pong,
            _ => return None,
        })
    }

    /// The 4-bit value.
    pub fn as_u8(self) -> u8 {
        match self {
            Opcode::Continuation => 0,
            Opcode::Text => 1,
            Opcode::Binary => 2,
            Opcode::Close => 8,
            Opcode::Ping => 9,
            Opcode::Pong => 10,
        }
    }

    /// Close, ping and pong: at most 125 bytes, never fragmented, allowed between fragments.
    pub fn is_control(self) -> bool {
        matches!(self, Opcode::Close | Opcode::Ping | Opcode::Pong)
    }
}

/// One decoded frame, payload unmasked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The last frame of its message (always set on control frames).
    pub fin: bool,
    /// RSV1: the message is compressed (permessage-deflate; first data frame only).
    pub rsv1: bool,
    /// Its opcode.
    pub opcode: Opcode,
    /// The payload, unmasked.
    pub payload: Bytes,
}

/// The longest header: 2 bytes, a 64-bit length, a mask key.
pub const MAX_HEADER_LEN: usize = 14;

/// XORs `data` with the mask key, `offset` bytes into the key's cycle.
pub fn apply_mask(data: &mut [u8], key: [u8; 4], offset: usize) {
    let key = [
        key[offset % 4],
        key[(offset + 1) % 4],
        key[(offset + 2) % 4],
        key[(offset + 3) % 4],
    ];
    let wide = u64::from_ne_bytes([
        key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3],
    ]);
    let mut chunks = data.chunks_exact_mut(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        chunk.copy_from_slice(&(u64::from_ne_bytes(word) ^ wide).to_ne_bytes());
    }
    for (i, byte) in chunks.into_remainder().iter_mut().enumerate() {
        *byte ^= key[i % 4];
    }
}

/// Writes a frame header: `fin`, `opcode`, the payload length in its shortest form, and the
/// mask key if any.
pub fn encode_header(
    out: &mut BytesMut,
    fin: bool,
    opcode: Opcode,
    len: usize,
    mask: Option<[u8; 4]>,
) {
    out.reserve(MAX_HEADER_LEN);
    out.put_u8(if fin { 0x80 } else { 0 } | opcode.as_u8());
    let mask_bit = if mask.is_some() { 0x80 } else { 0 };
    if len < 126 {
        out.put_u8(mask_bit | len as u8);
    } else if len <= 0xffff {
        out.put_u8(mask_bit | 126);
        out.put_u16(len as u16);
    } else {
        out.put_u8(mask_bit | 127);
        out.put_u64(len as u64);
    }
    if let Some(key) = mask {
        out.put_slice(&key);
    }
}

/// Writes a whole frame (header and payload, masked with `mask` if given).
pub fn encode_frame(
    out: &mut BytesMut,
    fin: bool,
    opcode: Opcode,
    payload: &[u8],
    mask: Option<[u8; 4]>,
) {
    encode_header(out, fin, opcode, payload.len(), mask);
    let start = out.len();
    out.extend_from_slice(payload);
    if let Some(key) = mask {
        apply_mask(&mut out[start..], key, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_take_their_shortest_form() {
        for (len, header) in [
            (0usize, 2usize),
            (125, 2),
            (126, 4),
            (65535, 4),
            (65536, 10),
        ] {
            let mut out = BytesMut::new();
            encode_header(&mut out, true, Opcode::Binary, len, None);
            assert_eq!(out.len(), header, "{len}");
        }
        let mut out = BytesMut::new();
        encode_frame(&mut out, true, Opcode::Text, b"Hello", None);
        assert_eq!(
            &out[..],
            b"\x81\x05Hello",
            "RFC 6455 §5.7's unmasked example"
        );
    }

    #[test]
    fn masking_matches_rfc_6455s_example_and_undoes_itself() {
        let mut out = BytesMut::new();
        encode_frame(
            &mut out,
            true,
            Opcode::Text,
            b"Hello",
            Some([0x37, 0xfa, 0x21, 0x3d]),
        );
        assert_eq!(&out[..], b"\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58");
        let mut data: Vec<u8> = (0..=255).collect();
        apply_mask(&mut data[..13], [1, 2, 3, 4], 0);
        apply_mask(&mut data[13..], [1, 2, 3, 4], 13);
        apply_mask(&mut data, [1, 2, 3, 4], 0);
        assert_eq!(
            data,
            (0..=255).collect::<Vec<u8>>(),
            "a key offset continues the cycle"
        );
    }
}
