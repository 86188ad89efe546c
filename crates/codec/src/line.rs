//! Netty's `LineBasedFrameDecoder`: frames end at `\n` or `\r\n`.
//!
//! Semantics (Netty's):
//! - A frame is the bytes before the line ending; with `strip_delimiter` false it also
//!   carries the ending (`\n` or `\r\n`, whichever was found).
//! - A line longer than `max_length` (ending excluded) is consumed and reported as
//!   `TooLongFrame`, once:
//!   - fail-slow (default): when its ending arrives, with the full length;
//!   - fail-fast: as soon as more than `max_length` bytes are buffered without an ending,
//!     with the bytes seen so far (`complete: false`); the rest of the line is then
//!     discarded silently.
//!
//!   Either way, the line after it decodes normally.
//! - A partial line is kept across reads; at end of stream it is dropped (no `decode_last`).
//!
//! One deliberate difference from Netty: a trailing `\r` is treated as the possible start
//! of a `\r\n` split across reads. It does not count towards the line length and is not
//! discarded with an oversize line, so a line of exactly `max_length` bytes is accepted
//! however the reads are cut, and the line after an oversize one is never swallowed.
//!
//! State invariants: `scanned <= buf.len()` bytes at the front of the buffer are known to
//! contain no `\n`; `discarding` is true only between an oversize line's detection and its
//! ending, while `discarded` counts its bytes already dropped.

use bytes::{Buf, Bytes, BytesMut};

use crate::decoder::FrameDecoder;
use crate::error::CodecError;

/// Splits a stream into lines ending with `\n` or `\r\n`.
#[derive(Debug, Clone)]
pub struct LineBasedFrameDecoder {
    max_length: usize,
    strip_delimiter: bool,
    fail_fast: bool,
    discarding: bool,
    discarded: u64,
    scanned: usize,
}

impl LineBasedFrameDecoder {
    /// A decoder that strips line endings and fails slow (Netty's defaults).
    pub fn new(max_length: usize) -> Self {
        Self::with_options(max_length, true, false)
    }

    /// A decoder with every option.
    pub fn with_options(max_length: usize, strip_delimiter: bool, fail_fast: bool) -> Self {
        LineBasedFrameDecoder {
            max_length,
            strip_delimiter,
            fail_fast,
            discarding: false,
            discarded: 0,
            scanned: 0,
        }
    }

    /// The maximum line length, line ending excluded.
    pub fn max_length(&self) -> usize {
        self.max_length
    }

    /// Finds the next line ending: (line length, ending length).
    fn find_eol(&mut self, buf: &[u8]) -> Option<(usize, usize)> {
        let from = self.scanned.min(buf.len());
        match buf[from..].iter().position(|&b| b == b'\n') {
            Some(i) => {
                self.scanned = 0;
                let lf = from + i;
                if lf > 0 && buf[lf - 1] == b'\r' {
                    Some((lf - 1, 2))
                } else {
                    Some((lf, 1))
                }
            }
            None => {
                self.scanned = buf.len();
                None
            }
        }
    }

    fn too_long(&self, length: usize, complete: bool) -> CodecError {
        CodecError::TooLongFrame {
            length: length as u64,
            max: self.max_length,
            complete,
        }
    }
}

impl FrameDecoder for LineBasedFrameDecoder {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        let eol = self.find_eol(buf);
        if let Some((length, delimiter)) = eol {
            if self.discarding {
                let total = self.discarded.saturating_add(length as u64);
                buf.advance(length + delimiter);
                self.discarding = false;
                self.discarded = 0;
                if self.fail_fast {
                    return Ok(None);
                }
                return Err(CodecError::TooLongFrame {
                    length: total,
                    max: self.max_length,
                    complete: true,
                });
            }
            if length > self.max_length {
                buf.advance(length + delimiter);
                return Err(self.too_long(length, true));
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

        // No line ending yet. Keep a trailing '\r': it may start a "\r\n".
        let pending = buf.len() - usize::from(buf.last() == Some(&b'\r'));
        if self.discarding {
            buf.advance(pending);
            self.discarded = self.discarded.saturating_add(pending as u64);
            self.scanned = buf.len();
            return Ok(None);
        }
        if pending > self.max_length {
            buf.advance(pending);
            self.discarding = true;
            self.discarded = pending as u64;
            self.scanned = buf.len();
            if self.fail_fast {
                return Err(self.too_long(pending, false));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn line_decoder_splits_on_lf_and_crlf_and_strips_them() {
        let out = decode_chunks(LineBasedFrameDecoder::new(80), &[b"first\r\nsecond\nthird"]);
        assert_eq!(out, [frame(b"first"), frame(b"second")]);
    }

    #[test]
    fn line_decoder_keeps_the_found_ending_when_not_stripping() {
        let decoder = LineBasedFrameDecoder::with_options(80, false, false);
        let out = decode_chunks(decoder, &[b"a\r\nb\n"]);
        assert_eq!(out, [frame(b"a\r\n"), frame(b"b\n")]);
    }

    #[test]
    fn line_decoder_emits_empty_frames_for_empty_lines() {
        let out = decode_chunks(LineBasedFrameDecoder::new(8), &[b"\n\r\nx\n"]);
        assert_eq!(out, [frame(b""), frame(b""), frame(b"x")]);
    }

    #[test]
    fn line_decoder_joins_a_line_fed_byte_by_byte() {
        let out = decode_bytewise(LineBasedFrameDecoder::new(80), b"huu\r\nhaa\r\n");
        assert_eq!(out, [frame(b"huu"), frame(b"haa")]);
    }

    #[test]
    fn line_decoder_fail_slow_reports_full_length_at_delimiter_then_recovers() {
        let input = b"12345678901234567\r\nfirst\r\nsecond\n";
        let expected = [too_long(17, 16, true), frame(b"first"), frame(b"second")];
        assert_eq!(
            decode_chunks(LineBasedFrameDecoder::new(16), &[input]),
            expected
        );
        assert_eq!(
            decode_bytewise(LineBasedFrameDecoder::new(16), input),
            expected
        );
    }

    #[test]
    fn line_decoder_fail_slow_counts_a_too_long_line_spread_over_reads() {
        let out = decode_chunks(
            LineBasedFrameDecoder::new(16),
            &[b"1234567890123456", b"7890", b"12\r\nfirst\r\n"],
        );
        assert_eq!(out, [too_long(22, 16, true), frame(b"first")]);
    }

    #[test]
    fn line_decoder_fail_fast_reports_too_long_before_delimiter_then_recovers() {
        let decoder = LineBasedFrameDecoder::with_options(16, true, true);
        let mut cumulator = crate::Cumulator::new(decoder);
        let mut out = Vec::new();
        cumulator.feed(b"12345678901234567890", &mut out);
        assert_eq!(out.len(), 1, "reported before any delimiter arrived");
        assert_eq!(
            out[0],
            Err(CodecError::TooLongFrame {
                length: 20,
                max: 16,
                complete: false
            })
        );
        out.clear();
        cumulator.feed(b"12345", &mut out);
        cumulator.feed(b"67890\r\nfirst\r\n", &mut out);
        assert_eq!(
            out,
            [Ok(Bytes::from_static(b"first"))],
            "reported once, then recovered"
        );
    }

    #[test]
    fn line_decoder_fail_fast_byte_by_byte_reports_once_at_max_plus_one() {
        let decoder = LineBasedFrameDecoder::with_options(4, true, true);
        let out = decode_bytewise(decoder, b"abcdefgh\nok\n");
        assert_eq!(out, [too_long(5, 4, false), frame(b"ok")]);
    }

    #[test]
    fn line_decoder_accepts_a_max_length_line_split_between_cr_and_lf() {
        let out = decode_chunks(
            LineBasedFrameDecoder::new(3),
            &[b"abc\r", b"\nxyz\r", b"\n"],
        );
        assert_eq!(out, [frame(b"abc"), frame(b"xyz")]);
    }

    #[test]
    fn line_decoder_does_not_swallow_next_line_when_crlf_of_long_line_is_split() {
        let out = decode_chunks(LineBasedFrameDecoder::new(3), &[b"abcdef\r", b"\nok\n"]);
        assert_eq!(out, [too_long(6, 3, true), frame(b"ok")]);
    }

    #[test]
    fn line_decoder_reports_too_long_line_found_in_one_read_without_discard_mode() {
        let decoder = LineBasedFrameDecoder::with_options(2, true, true);
        let out = decode_chunks(decoder, &[b"abc\nde\n"]);
        assert_eq!(out, [too_long(3, 2, true), frame(b"de")]);
    }

    #[test]
    fn line_decoder_drops_an_unterminated_last_line_at_finish() {
        let mut cumulator = crate::Cumulator::new(LineBasedFrameDecoder::new(80));
        let mut out = Vec::new();
        cumulator.feed(b"a\npartial", &mut out);
        cumulator.finish(&mut out);
        assert_eq!(out, [Ok(Bytes::from_static(b"a"))]);
    }

    #[test]
    fn line_decoder_yields_same_frames_for_any_read_boundaries() {
        let mut rng = XorShift::new(7);
        let mut input = Vec::new();
        let mut expected = Vec::new();
        for _ in 0..300 {
            let len = rng.below(12);
            let line: Vec<u8> = (0..len).map(|_| b'a' + rng.below(26) as u8).collect();
            input.extend_from_slice(&line);
            input.extend_from_slice(if rng.below(2) == 0 { b"\n" } else { b"\r\n" });
            expected.push(if len > 8 {
                too_long(len as u64, 8, true)
            } else {
                frame(&line)
            });
        }
        for seed in 1..40 {
            let out = decode_random_splits(LineBasedFrameDecoder::new(8), &input, seed);
            assert_eq!(out, expected, "seed {seed}");
        }
    }
}
