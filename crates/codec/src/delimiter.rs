//! Netty's `DelimiterBasedFrameDecoder`: frames end at any of several delimiters.
//!
//! Semantics (Netty's):
//! - At each step the delimiter giving the shortest frame wins; when two delimiters start
//!   at the same position the one listed first wins. With `strip_delimiter` (default) the
//!   frame excludes the delimiter, otherwise it ends with it.
//! - A frame longer than `max_frame_length` is consumed and reported once as
//!   `TooLongFrame`: fail-fast (this decoder's default) as soon as more than the maximum is
//!   buffered without a delimiter (`complete: false`, bytes seen so far), fail-slow when the
//!   delimiter arrives (full length). The next frame decodes normally.
//! - Exactly the delimiters `"\n"` and `"\r\n"` (any order) delegate to
//!   [`LineBasedFrameDecoder`], as Netty does.
//!
//! Deliberate differences from Netty: bytes at the end of the buffer that may begin a
//! delimiter split across reads are neither counted towards the frame length nor discarded
//! with an oversize frame (so a frame of exactly the maximum is accepted however the reads
//! are cut, and a split delimiter still ends a discarded frame); the length reported by
//! fail-slow includes the bytes of the last read before the delimiter. Netty takes the
//! earliest delimiter among the bytes buffered so far, so when one delimiter occurs inside
//! another (`"\r\n\r\n"` and `"\n"`) its frames depend on where the reads were cut. Here a
//! delimiter whose first bytes have arrived holds back any match at or after its start
//! until its remaining bytes arrive or differ, so the frames are the same however the
//! stream is cut; at end of input (`decode_last`) such a delimiter cannot complete, and the
//! frame ends at the next delimiter that did arrive.
//!
//! State invariants: the first `scanned` buffered bytes contain no delimiter start;
//! `discarding` is true only between an oversize frame's detection and its delimiter.

use bytes::{Buf, Bytes, BytesMut};

use crate::decoder::FrameDecoder;
use crate::error::{invalid_config, CodecError, ConfigError};
use crate::line::LineBasedFrameDecoder;

/// Common delimiter sets.
#[derive(Debug)]
pub struct Delimiters;

impl Delimiters {
    /// `"\r\n"` and `"\n"`.
    pub fn line() -> Vec<Bytes> {
        vec![Bytes::from_static(b"\r\n"), Bytes::from_static(b"\n")]
    }

    /// The NUL byte, as used by Flash XML sockets and STOMP.
    pub fn nul() -> Vec<Bytes> {
        vec![Bytes::from_static(b"\0")]
    }
}

/// Splits a stream on one or more delimiters.
#[derive(Debug, Clone)]
pub struct DelimiterBasedFrameDecoder {
    inner: Inner,
}

#[derive(Debug, Clone)]
enum Inner {
    Line(LineBasedFrameDecoder),
    Generic(Generic),
}

#[derive(Debug, Clone)]
struct Generic {
    max_frame_length: usize,
    strip_delimiter: bool,
    fail_fast: bool,
    delimiters: Vec<Bytes>,
    /// Bitset of the delimiters' first bytes.
    starts: [u64; 4],
    discarding: bool,
    too_long_length: u64,
    scanned: usize,
}

impl DelimiterBasedFrameDecoder {
    /// A decoder that strips delimiters and fails fast (Netty's defaults).
    pub fn new(max_frame_length: usize, delimiters: Vec<Bytes>) -> Result<Self, ConfigError> {
        Self::with_options(max_frame_length, true, true, delimiters)
    }

    /// A decoder with every option. Fails if `max_frame_length` is 0, or if `delimiters`
    /// is empty or holds an empty delimiter.
    pub fn with_options(
        max_frame_length: usize,
        strip_delimiter: bool,
        fail_fast: bool,
        delimiters: Vec<Bytes>,
    ) -> Result<Self, ConfigError> {
        if max_frame_length == 0 {
            return Err(invalid_config(
                "maxFrameLength must be a positive integer: 0",
            ));
        }
        if delimiters.is_empty() {
            return Err(invalid_config("empty delimiters"));
        }
        if delimiters.iter().any(Bytes::is_empty) {
            return Err(invalid_config("empty delimiter"));
        }
        if is_line_based(&delimiters) {
            let line =
                LineBasedFrameDecoder::with_options(max_frame_length, strip_delimiter, fail_fast);
            return Ok(DelimiterBasedFrameDecoder {
                inner: Inner::Line(line),
            });
        }
        let mut starts = [0u64; 4];
        for delimiter in &delimiters {
            let b = delimiter[0];
            starts[usize::from(b >> 6)] |= 1 << (b & 63);
        }
        Ok(DelimiterBasedFrameDecoder {
            inner: Inner::Generic(Generic {
                max_frame_length,
                strip_delimiter,
                fail_fast,
                delimiters,
                starts,
                discarding: false,
                too_long_length: 0,
                scanned: 0,
            }),
        })
    }
}

fn is_line_based(delimiters: &[Bytes]) -> bool {
    match delimiters {
        [a, b] => {
            let (a, b) = (a.as_ref(), b.as_ref());
            (a == b"\n" && b == b"\r\n") || (a == b"\r\n" && b == b"\n")
        }
        _ => false,
    }
}

impl FrameDecoder for DelimiterBasedFrameDecoder {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        match &mut self.inner {
            Inner::Line(line) => line.decode(buf),
            Inner::Generic(generic) => generic.decode(buf, false),
        }
    }

    fn decode_last(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        match &mut self.inner {
            Inner::Line(line) => line.decode_last(buf),
            Inner::Generic(_) if buf.is_empty() => Ok(None),
            Inner::Generic(generic) => generic.decode(buf, true),
        }
    }
}

impl Generic {
    /// Finds the delimiter giving the shortest frame: (frame length, delimiter length).
    /// Before `eof`, a delimiter whose start has arrived but not its end still counts: no
    /// match at or after its position is taken until it is ruled out, so read boundaries
    /// never change the frames. At `eof` it cannot complete any more, and is passed over.
    fn find(&mut self, buf: &[u8], eof: bool) -> Option<(usize, usize)> {
        let from = self.scanned.min(buf.len());
        for (i, byte) in buf.iter().enumerate().skip(from) {
            if self.starts[usize::from(byte >> 6)] & (1 << (byte & 63)) == 0 {
                continue;
            }
            let rest = &buf[i..];
            for d in &self.delimiters {
                if rest.starts_with(d) {
                    self.scanned = 0;
                    return Some((i, d.len()));
                }
                if !eof && d.starts_with(rest) {
                    // `rest` is a proper prefix of `d` (it did not match whole).
                    self.scanned = i;
                    return None;
                }
            }
        }
        // Every position scanned is ruled out for good.
        self.scanned = buf.len();
        None
    }

    /// Length of the longest buffer suffix that is a proper prefix of some delimiter.
    fn pending_tail(&self, buf: &[u8]) -> usize {
        let mut best = 0;
        for delimiter in &self.delimiters {
            let longest_candidate = (delimiter.len() - 1).min(buf.len());
            if let Some(k) = (best + 1..=longest_candidate)
                .rev()
                .find(|&k| buf.ends_with(&delimiter[..k]))
            {
                best = k;
            }
        }
        best
    }

    fn too_long(&self, length: u64, complete: bool) -> CodecError {
        CodecError::TooLongFrame {
            length,
            max: self.max_frame_length,
            complete,
        }
    }

    fn decode(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Bytes>, CodecError> {
        let found = self.find(buf, eof);
        if let Some((length, delimiter)) = found {
            if self.discarding {
                let total = self.too_long_length.saturating_add(length as u64);
                buf.advance(length + delimiter);
                self.discarding = false;
                self.too_long_length = 0;
                if self.fail_fast {
                    return Ok(None);
                }
                return Err(self.too_long(total, true));
            }
            if length > self.max_frame_length {
                buf.advance(length + delimiter);
                return Err(self.too_long(length as u64, true));
            }
            let frame = if self.strip_delimiter {
                let frame = buf.split_to(length).freeze();
                buf.advance(delimiter);
                frame
            } else {
                buf.split_to(length + delimiter).freeze()
            };
            return Ok(Some(frame));
        }

        if eof {
            // An unterminated last frame is dropped with the cumulation.
            return Ok(None);
        }
        // No delimiter yet; keep a tail that may begin one.
        let pending = buf.len() - self.pending_tail(buf);
        if self.discarding {
            buf.advance(pending);
            self.too_long_length = self.too_long_length.saturating_add(pending as u64);
            self.scanned = 0;
            return Ok(None);
        }
        if pending > self.max_frame_length {
            buf.advance(pending);
            self.discarding = true;
            self.too_long_length = pending as u64;
            self.scanned = 0;
            if self.fail_fast {
                return Err(self.too_long(pending as u64, false));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
#[path = "delimiter_tests.rs"]
mod tests;
