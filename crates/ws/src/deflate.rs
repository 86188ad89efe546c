//! permessage-deflate's data path (RFC 7692 §7.2): [`Deflater`] compresses a whole message
//! (raw DEFLATE, sync flush, the `00 00 ff ff` tail removed), [`Inflater`] decompresses a
//! message frame by frame (the tail appended after its last frame) with a hard limit on the
//! inflated size, and [`Decompression`] decides, frame by frame, what to inflate.
//!
//! The backend is zlib-rs (pure Rust, through `flate2`).
//!
//! Memory (measured in crates/ws/tests/deflate_memory.rs, zlib-rs 0.6, memLevel 8): a
//! compressor holds 371 KiB at window bits 15 (245 KiB at 9), a decompressor 46 KiB (its
//! window is always 2^15, so it reads any peer). Both are created at the first message that needs them (an idle
//! connection holds neither); with no context takeover on a side, its state is borrowed
//! from the thread's spares for one message and given back reset ([`spares`]), so such a
//! connection holds none between messages and a message allocates none. Inflating takes output in steps (four times the input, at most 16 KiB, then
//! doubling) and never more than the limit plus one byte: a message whose inflated size passes it fails with 1009
//! as soon as the byte past the limit comes out.
//!
//! Ground rules: single-threaded values of one connection; an error is final.

mod spares;

use bytes::Bytes;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

pub use spares::counts as spare_counts;

use crate::error::WsError;
use crate::extension::Direction;
use crate::frame::{Frame, Opcode};

/// What a sync flush ends with; removed from each compressed message, added back to inflate.
pub const TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// The largest first output step of the inflater: four times the frame's payload, between
/// 256 bytes and this (then it doubles, up to the limit).
pub const INFLATE_STEP: usize = 16 * 1024;

/// Compresses whole messages for one direction of a connection.
pub struct Deflater {
    stream: Option<Compress>,
    level: u32,
    window_bits: u8,
    no_context_takeover: bool,
}

impl std::fmt::Debug for Deflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deflater")
            .field("window_bits", &self.window_bits)
            .field("no_context_takeover", &self.no_context_takeover)
            .field("has_state", &self.stream.is_some())
            .finish()
    }
}

impl Deflater {
    /// A compressor for `direction` at zlib `level` (0..=9). With a window under 2^9 (the
    /// peer agreed to 2^8, which zlib cannot compress with) it never compresses:
    /// [`compress`](Self::compress) returns `None` and messages go uncompressed.
    pub fn new(direction: Direction, level: u32) -> Self {
        Deflater {
            stream: None,
            level: level.min(9),
            window_bits: direction.window_bits.min(15),
            no_context_takeover: direction.no_context_takeover,
        }
    }

    /// Whether compressor state is held now (between messages only with context takeover).
    pub fn has_state(&self) -> bool {
        self.stream.is_some()
    }

    /// `data` compressed as one message's payload, or `None`: the window is 2^8, or the
    /// backend failed (the state is then dropped, so later messages never refer to this one).
    /// Either way, send it uncompressed.
    pub fn compress(&mut self, data: &[u8]) -> Option<Vec<u8>> {
        let (level, bits) = (self.level, self.window_bits);
        if bits < 9 {
            return None;
        }
        let stream = self.stream.get_or_insert_with(|| {
            if self.no_context_takeover {
                spares::take_compressor(level, bits)
            } else {
                Compress::new_with_window_bits(Compression::new(level), false, bits)
            }
        });
        let mut out = Vec::with_capacity(data.len() / 2 + 64);
        let start = stream.total_in();
        let done = loop {
            if out.capacity() - out.len() < 64 {
                out.reserve(out.capacity().max(256));
            }
            let consumed = (stream.total_in() - start) as usize;
            if stream
                .compress_vec(&data[consumed..], &mut out, FlushCompress::Sync)
                .is_err()
            {
                break false;
            }
            // A sync flush is complete once all input is taken and output room is left.
            if (stream.total_in() - start) as usize == data.len() && out.len() < out.capacity() {
                break out.ends_with(&TAIL);
            }
        };
        if !done {
            self.stream = None;
            return None;
        }
        out.truncate(out.len() - TAIL.len());
        if self.no_context_takeover {
            if let Some(stream) = self.stream.take() {
                spares::give_compressor(level, bits, stream);
            }
        }
        Some(out)
    }
}

/// Decompresses messages for one direction of a connection.
pub struct Inflater {
    stream: Option<Decompress>,
    no_context_takeover: bool,
    /// Bytes inflated so far in the current message.
    inflated: usize,
    /// The DEFLATE stream ended (a final block) inside the current message.
    ended: bool,
}

impl std::fmt::Debug for Inflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inflater")
            .field("no_context_takeover", &self.no_context_takeover)
            .field("has_state", &self.stream.is_some())
            .field("inflated", &self.inflated)
            .finish()
    }
}

impl Inflater {
    /// A decompressor for `direction` (the peer's compressing side; any window is read).
    pub fn new(direction: Direction) -> Self {
        Inflater {
            stream: None,
            no_context_takeover: direction.no_context_takeover,
            inflated: 0,
            ended: false,
        }
    }

    /// Whether decompressor state is held now.
    pub fn has_state(&self) -> bool {
        self.stream.is_some()
    }

    /// Inflates one frame's payload of a compressed message (`last`: its final frame, after
    /// which the tail is inflated and the message ends). The message's inflated total may
    /// not pass `limit`.
    ///
    /// # Errors
    /// [`WsError::MessageTooLarge`] once the inflated total passes `limit` (no more than
    /// `limit + 1` bytes are ever produced), [`WsError::InvalidCompressedData`] for data that
    /// is not DEFLATE. Both are final: the caller fails the connection.
    pub fn inflate(&mut self, payload: &[u8], last: bool, limit: usize) -> Result<Bytes, WsError> {
        let mut out = Vec::with_capacity(
            payload
                .len()
                .saturating_mul(4)
                .clamp(256, INFLATE_STEP)
                .min(limit.saturating_add(1)),
        );
        let result = self.feed(payload, limit, &mut out).and_then(|()| {
            if last {
                self.feed(&TAIL, limit, &mut out)
            } else {
                Ok(())
            }
        });
        if let Err(error) = result {
            self.stream = None;
            return Err(error);
        }
        if last {
            self.inflated = 0;
            if self.no_context_takeover {
                if let Some(stream) = self.stream.take() {
                    spares::give_decompressor(stream);
                }
            } else if self.ended {
                self.stream = None;
            }
            self.ended = false;
        } else {
            self.inflated += out.len();
        }
        Ok(Bytes::from(out))
    }

    fn feed(&mut self, input: &[u8], limit: usize, out: &mut Vec<u8>) -> Result<(), WsError> {
        let shared = self.no_context_takeover;
        let stream = self.stream.get_or_insert_with(|| {
            if shared {
                spares::take_decompressor()
            } else {
                Decompress::new(false)
            }
        });
        let start = stream.total_in();
        while !self.ended {
            let total = self.inflated + out.len();
            if total > limit {
                return Err(WsError::MessageTooLarge {
                    length: total as u64,
                    max: limit,
                });
            }
            if out.len() == out.capacity() {
                // Doubling steps, never past one byte over the limit.
                let step = out.capacity().max(256).min(limit.saturating_add(1) - total);
                out.reserve_exact(step);
            }
            let taken = (stream.total_in() - start) as usize;
            let (before_in, before_out) = (stream.total_in(), out.len());
            let status = stream
                .decompress_vec(&input[taken..], out, FlushDecompress::None)
                .map_err(|_| WsError::InvalidCompressedData)?;
            if status == Status::StreamEnd {
                self.ended = true; // bytes after a final block are not DEFLATE data: ignored
            } else if (stream.total_in() - start) as usize == input.len()
                && out.len() < out.capacity()
            {
                break; // all input in, and the output stopped short of its room
            } else if stream.total_in() == before_in && out.len() == before_out {
                return Err(WsError::InvalidCompressedData);
            }
        }
        let total = self.inflated + out.len();
        if total > limit {
            return Err(WsError::MessageTooLarge {
                length: total as u64,
                max: limit,
            });
        }
        Ok(())
    }

    /// Drops a message in progress (end of input, or the connection failed).
    pub fn reset(&mut self) {
        self.stream = None;
        self.inflated = 0;
        self.ended = false;
    }
}

/// Which frames of the inbound stream are compressed, and their inflating: a message is
/// compressed when its first frame has RSV1 (the decoder allows it only on a first data
/// frame when permessage-deflate was agreed).
#[derive(Debug)]
pub struct Decompression {
    inflater: Inflater,
    compressed: bool,
    max_message_size: usize,
}

impl Decompression {
    /// Inflating the peer's `direction`, messages up to `max_message_size` inflated bytes.
    pub fn new(direction: Direction, max_message_size: usize) -> Self {
        Decompression {
            inflater: Inflater::new(direction),
            compressed: false,
            max_message_size,
        }
    }

    /// The frame with its payload inflated if it belongs to a compressed message;
    /// `in_message`: whether a fragmented message is in progress (a data frame inside one is
    /// left for the assembler to refuse).
    ///
    /// # Errors
    /// See [`Inflater::inflate`].
    pub fn frame(&mut self, frame: Frame, in_message: bool) -> Result<Frame, WsError> {
        match frame.opcode {
            Opcode::Text | Opcode::Binary if !in_message => self.compressed = frame.rsv1,
            Opcode::Continuation if in_message => {}
            _ => return Ok(frame),
        }
        if !self.compressed {
            return Ok(frame);
        }
        let payload = self
            .inflater
            .inflate(&frame.payload, frame.fin, self.max_message_size)?;
        if frame.fin {
            self.compressed = false;
        }
        Ok(Frame {
            payload,
            rsv1: false,
            ..frame
        })
    }

    /// Whether the message in progress is compressed (its continuations are inflated).
    pub fn in_compressed_message(&self) -> bool {
        self.compressed
    }

    /// Drops a message in progress.
    pub fn reset(&mut self) {
        self.inflater.reset();
        self.compressed = false;
    }

    /// Whether decompressor state is held now.
    pub fn has_state(&self) -> bool {
        self.inflater.has_state()
    }
}
