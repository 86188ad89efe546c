//! One published message as subscribers get it: the plain server frame (encoded once, one
//! `Bytes` every subscriber's outbound buffer refers to) and, for subscribers that agreed
//! permessage-deflate with `server_no_context_takeover`, a compressed frame made at most once
//! per publish for each (window bits, level) in use — such a subscriber's peer resets its
//! window before every message, so the same compressed bytes fit all of them. A subscriber
//! with context takeover gets the plain frame (RFC 7692 lets any message go uncompressed;
//! compressing into its own window would cost one compression per subscriber).
//!
//! Ground rules: shared by the loops a publish reaches (`Arc`); the compressed variants are
//! made under a mutex by the first loop that needs one, the others wait and reuse it.

use std::sync::Mutex;

use bytes::{Bytes, BytesMut};

use crate::deflate::Deflater;
use crate::extension::{Direction, DEFAULT_DEFLATE_THRESHOLD};
use crate::frame::{encode_frame, Opcode, MAX_HEADER_LEN};
use crate::handler::WebSocketHandler;

/// A compressed variant: (window bits, level) and the frame (`None`: not compressible there,
/// e.g. a window of 2^8).
type Variant = ((u8, u32), Option<Bytes>);

/// A published message (see the module's notes).
pub(super) struct Published {
    frame: Bytes,
    opcode: Opcode,
    header_len: usize,
    /// The compressed variants made so far.
    compressed: Mutex<Vec<Variant>>,
}

impl Published {
    /// `payload` as one server frame: FIN, `opcode`, unmasked.
    pub(super) fn new(opcode: Opcode, payload: &[u8]) -> Self {
        let frame = encode(opcode, payload, false);
        Published {
            header_len: frame.len() - payload.len(),
            frame,
            opcode,
            compressed: Mutex::new(Vec::new()),
        }
    }

    /// The plain frame.
    pub(super) fn plain(&self) -> &Bytes {
        &self.frame
    }

    /// The compressed frame for a subscriber whose WebSocket handler is `ws`, when it agreed
    /// permessage-deflate with `server_no_context_takeover`, the message reaches its threshold
    /// and compresses there; `None`: it gets the plain one.
    pub(super) fn compressed_for(&self, ws: &WebSocketHandler) -> Option<Bytes> {
        let agreed = ws.deflate().filter(|a| a.server_no_context_takeover)?;
        let settings = ws.config().permessage_deflate.as_ref();
        let threshold = settings.map_or(DEFAULT_DEFLATE_THRESHOLD, |s| s.threshold);
        let payload = &self.frame[self.header_len..];
        if payload.len() < threshold {
            return None;
        }
        let key = (
            agreed.server_max_window_bits,
            settings.map_or(6, |s| s.level),
        );
        let mut cache = self
            .compressed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let made = match cache.iter().find(|(k, _)| *k == key) {
            Some((_, made)) => made.clone(),
            None => {
                let direction = Direction {
                    no_context_takeover: true,
                    window_bits: key.0,
                };
                let made = Deflater::new(direction, key.1)
                    .compress(payload)
                    .map(|c| encode(self.opcode, &c, true));
                cache.push((key, made.clone()));
                made
            }
        };
        made
    }
}

/// One server frame: FIN, `opcode`, unmasked, RSV1 when `compressed`.
fn encode(opcode: Opcode, payload: &[u8], compressed: bool) -> Bytes {
    let mut out = BytesMut::with_capacity(payload.len() + MAX_HEADER_LEN);
    encode_frame(&mut out, true, opcode, payload, None);
    if compressed {
        out[0] |= 0x40;
    }
    out.freeze()
}
