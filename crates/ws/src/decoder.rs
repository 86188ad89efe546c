//! [`FrameDecoder`]: whole frames from the front of a cumulation buffer, with every rule of
//! RFC 6455 §5 that one frame can break checked from its header, before its payload is
//! buffered: reserved bits and opcodes, the mask rule of the side, control frames (≤ 125
//! bytes, FIN set), minimal length encoding, and `max_frame_size`.
//!
//! Ground rules: single-threaded value of one connection; no input panics; an error is final
//! (the connection is failed), later calls return it again without reading.

use bytes::BytesMut;

use crate::error::WsError;
use crate::frame::{apply_mask, Frame, Opcode};

/// Which end of the connection decodes: a server reads masked frames, a client unmasked ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Reads client frames (masked), writes unmasked ones.
    Server,
    /// Reads server frames (unmasked), writes masked ones.
    Client,
}

/// A decoded header: what the frame is and how many bytes it takes.
#[derive(Debug, Clone, Copy)]
struct Header {
    fin: bool,
    rsv1: bool,
    opcode: Opcode,
    mask: Option<[u8; 4]>,
    header_len: usize,
    payload_len: usize,
}

/// A frame whose payload has only partly arrived ([`FrameDecoder::partial`]).
#[derive(Debug, Clone, Copy)]
pub struct PartialFrame<'a> {
    /// The frame's opcode.
    pub opcode: Opcode,
    /// RSV1 (a compressed message's first frame once permessage-deflate is agreed).
    pub rsv1: bool,
    /// The mask key (frames from a client).
    pub mask: Option<[u8; 4]>,
    /// The payload bytes received so far, as they came (masked if `mask` is set).
    pub received: &'a [u8],
}

/// Decodes frames for one connection.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    role: Role,
    max_frame_size: usize,
    allow_rsv1: bool,
    failed: Option<WsError>,
}

impl FrameDecoder {
    /// A decoder for `role` refusing payloads over `max_frame_size` bytes.
    pub fn new(role: Role, max_frame_size: usize) -> Self {
        FrameDecoder {
            role,
            max_frame_size,
            allow_rsv1: false,
            failed: None,
        }
    }

    /// Allows RSV1 on the first frame of a data message (permessage-deflate agreed); it stays
    /// refused (1002) on control frames and continuations.
    pub fn allow_rsv1(mut self, on: bool) -> Self {
        self.allow_rsv1 = on;
        self
    }

    /// The error that stopped this decoder, if any.
    pub fn error(&self) -> Option<&WsError> {
        self.failed.as_ref()
    }

    /// The next whole frame at the front of `buf` (consumed), `None` when more bytes are
    /// needed.
    ///
    /// # Errors
    /// The [`WsError`] of the first rule the frame breaks; it is final.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, WsError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let header = match self.header(buf) {
            Ok(Some(header)) => header,
            Ok(None) => return Ok(None),
            Err(error) => {
                self.failed = Some(error.clone());
                return Err(error);
            }
        };
        let total = header.header_len + header.payload_len;
        if buf.len() < total {
            buf.reserve(total - buf.len());
            return Ok(None);
        }
        let _ = buf.split_to(header.header_len);
        let mut payload = buf.split_to(header.payload_len);
        if let Some(key) = header.mask {
            apply_mask(&mut payload, key, 0);
        }
        Ok(Some(Frame {
            fin: header.fin,
            rsv1: header.rsv1,
            opcode: header.opcode,
            payload: payload.freeze(),
        }))
    }

    /// The frame at the front of `buf` whose header is all there but whose payload is not
    /// yet: what the payload received so far is (still masked), so text can be checked as it
    /// arrives. `None` when no such frame is there (or the header breaks a rule: `decode`
    /// reports that).
    pub fn partial<'a>(&self, buf: &'a [u8]) -> Option<PartialFrame<'a>> {
        if self.failed.is_some() {
            return None;
        }
        let header = self.header(buf).ok()??;
        let total = header.header_len + header.payload_len;
        (buf.len() < total).then(|| PartialFrame {
            opcode: header.opcode,
            rsv1: header.rsv1,
            mask: header.mask,
            received: &buf[header.header_len..],
        })
    }

    /// The header at the front of `buf`, checked, if it is all there.
    fn header(&self, buf: &[u8]) -> Result<Option<Header>, WsError> {
        let [b0, b1, ..] = *buf else { return Ok(None) };
        let opcode =
            Opcode::from_u8(b0 & 0x0f).ok_or(WsError::ReservedOpcode { opcode: b0 & 0x0f })?;
        let rsv1 = b0 & 0x40 != 0;
        let rsv1_ok = self.allow_rsv1 && matches!(opcode, Opcode::Text | Opcode::Binary);
        if b0 & 0x30 != 0 || (rsv1 && !rsv1_ok) {
            return Err(WsError::ReservedBits);
        }
        let fin = b0 & 0x80 != 0;
        let masked = b1 & 0x80 != 0;
        if masked != (self.role == Role::Server) {
            return Err(WsError::BadMask { masked });
        }
        let len7 = b1 & 0x7f;
        if opcode.is_control() {
            if !fin {
                return Err(WsError::FragmentedControl);
            }
            if len7 > 125 {
                return Err(WsError::ControlTooLong {
                    length: u64::from(len7),
                });
            }
        }
        let (length, mut at) = match len7 {
            126 => {
                let Some(b) = buf.get(2..4) else {
                    return Ok(None);
                };
                let length = u64::from(u16::from_be_bytes([b[0], b[1]]));
                if length < 126 {
                    return Err(WsError::NonMinimalLength);
                }
                (length, 4)
            }
            127 => {
                let Some(b) = buf.get(2..10) else {
                    return Ok(None);
                };
                let mut be = [0u8; 8];
                be.copy_from_slice(b);
                let length = u64::from_be_bytes(be);
                if length <= 0xffff || length >> 63 != 0 {
                    return Err(WsError::NonMinimalLength);
                }
                (length, 10)
            }
            short => (u64::from(short), 2),
        };
        if length > self.max_frame_size as u64 {
            return Err(WsError::FrameTooLarge {
                length,
                max: self.max_frame_size,
            });
        }
        let mask = if masked {
            let Some(k) = buf.get(at..at + 4) else {
                return Ok(None);
            };
            at += 4;
            Some([k[0], k[1], k[2], k[3]])
        } else {
            None
        };
        Ok(Some(Header {
            fin,
            rsv1,
            opcode,
            mask,
            header_len: at,
            payload_len: length as usize,
        }))
    }
}
