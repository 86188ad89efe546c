//! Reference models: what each decoder must output for a whole stream cut into given reads,
//! written from the decoders' documented semantics, independently of their code.
//!
//! A model sees the whole stream at once and the offsets where reads end. It yields every
//! event with the offset from which it is due: the event must come out of the first read
//! that ends at or after that offset, and not earlier ([`Due::Eof`]: out of the final decode
//! at end of input). Frames and errors are due in stream order.
//!
//! Frame boundaries never depend on how the stream is cut; only fail-fast errors do (they
//! report the bytes seen so far), and the model derives them from the read ends.

use netloop_codec::CodecError;

/// One decoder output, compared without error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ev {
    /// A frame's bytes.
    Frame(Vec<u8>),
    /// `CodecError::TooLongFrame`.
    TooLong {
        /// Reported length.
        length: u64,
        /// Configured maximum.
        max: usize,
        /// Whether the length is the whole frame's.
        complete: bool,
    },
    /// `CodecError::CorruptedFrame` (reason not compared).
    Corrupted,
    /// Any other error (never expected from a decoder).
    Other(String),
}

impl From<Result<netloop_codec::bytes::Bytes, CodecError>> for Ev {
    fn from(result: Result<netloop_codec::bytes::Bytes, CodecError>) -> Self {
        match result {
            Ok(frame) => Ev::Frame(frame.to_vec()),
            Err(CodecError::TooLongFrame {
                length,
                max,
                complete,
            }) => Ev::TooLong {
                length,
                max,
                complete,
            },
            Err(CodecError::CorruptedFrame { .. }) => Ev::Corrupted,
            Err(other) => Ev::Other(other.to_string()),
        }
    }
}

/// When an event is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Due {
    /// Once the stream has reached this many bytes.
    At(usize),
    /// Only at end of input.
    Eof,
}

/// Offsets (exclusive) where each read ends, from the reads' lengths.
pub fn read_ends(chunks: &[Vec<u8>]) -> Vec<usize> {
    chunks
        .iter()
        .scan(0, |end, chunk| {
            *end += chunk.len();
            Some(*end)
        })
        .collect()
}

/// `LineBasedFrameDecoder` and `DelimiterBasedFrameDecoder` (the line decoder is this model
/// with the delimiters `"\r\n"` and `"\n"`).
///
/// Semantics: a frame ends at the earliest position of the stream where a delimiter starts,
/// and there at the first listed delimiter that matches. A frame is due once that is decided:
/// the delimiter has fully arrived and every delimiter that could still start earlier (or at
/// the same position, listed first) has been ruled out by a differing byte; one ruled out
/// only by the end of the stream is due at [`Due::Eof`]. A frame longer than `max` is an
/// error instead: fail-fast reports it at the first read end, before it is decided, where
/// more than `max` of its bytes are buffered, not counting a tail that may begin a delimiter,
/// with that count; otherwise it is reported when decided, with its full length. Fail-slow
/// reports only the latter. An unterminated last frame is dropped at end of input, after a
/// fail-fast report if it qualified for one.
pub struct DelimiterModel<'a> {
    /// The delimiters, in the decoder's order.
    pub delimiters: &'a [Vec<u8>],
    /// Maximum frame length, delimiter excluded.
    pub max: usize,
    /// Whether frames exclude their delimiter.
    pub strip: bool,
    /// Whether over-long frames are reported before their delimiter arrives.
    pub fail_fast: bool,
}

impl DelimiterModel<'_> {
    /// The events for `stream` read in pieces ending at `ends`.
    pub fn events(&self, stream: &[u8], ends: &[usize]) -> Vec<(Due, Ev)> {
        let mut events = Vec::new();
        let mut start = 0;
        // When the decoder has reached `start` (everything before it is decided).
        let mut reached = Due::At(0);
        loop {
            let found = self.earliest_match(stream, start);
            let decided = match found {
                Some((at, k)) => self.decided(stream, start, at, k).max(reached),
                None => Due::Eof,
            };
            let early = if self.fail_fast {
                self.fail_fast_report(stream, start, reached, decided, ends)
            } else {
                None
            };
            if let Some((end, seen)) = early {
                events.push((Due::At(end), self.too_long(seen as u64, false)));
            }
            let Some((at, k)) = found else { break };
            let length = at - start;
            let delimiter = self.delimiters[k].len();
            if early.is_none() {
                let ev = if length > self.max {
                    self.too_long(length as u64, true)
                } else if self.strip {
                    Ev::Frame(stream[start..at].to_vec())
                } else {
                    Ev::Frame(stream[start..at + delimiter].to_vec())
                };
                events.push((decided, ev));
            }
            start = at + delimiter;
            reached = decided;
        }
        events
    }

    fn too_long(&self, length: u64, complete: bool) -> Ev {
        Ev::TooLong {
            length,
            max: self.max,
            complete,
        }
    }

    /// (position, delimiter index) of the first delimiter in `stream[from..]`.
    fn earliest_match(&self, stream: &[u8], from: usize) -> Option<(usize, usize)> {
        (from..stream.len()).find_map(|i| {
            let k = self
                .delimiters
                .iter()
                .position(|d| stream[i..].starts_with(d))?;
            Some((i, k))
        })
    }

    /// When the match (`at`, `k`) of the frame starting at `start` is decided.
    fn decided(&self, stream: &[u8], start: usize, at: usize, k: usize) -> Due {
        let mut due = at + self.delimiters[k].len();
        for i in start..=at {
            for (m, d) in self.delimiters.iter().enumerate() {
                if i == at && m >= k {
                    break;
                }
                // This earlier candidate does not match; it is ruled out at its first
                // differing byte, or only by the end of the stream.
                let same = d
                    .iter()
                    .zip(&stream[i..])
                    .take_while(|(a, b)| a == b)
                    .count();
                assert!(same < d.len(), "earliest match is not the earliest");
                if i + same >= stream.len() {
                    return Due::Eof;
                }
                due = due.max(i + same + 1);
            }
        }
        Due::At(due)
    }

    /// The first read end at which a frame starting at `start`, reached by the decoder at
    /// `reached` and decided at `decided`, has more than `max` countable bytes buffered:
    /// (read end, count).
    fn fail_fast_report(
        &self,
        stream: &[u8],
        start: usize,
        reached: Due,
        decided: Due,
        ends: &[usize],
    ) -> Option<(usize, usize)> {
        ends.iter()
            .copied()
            .filter(|&end| end > start && Due::At(end) >= reached && Due::At(end) < decided)
            .map(|end| (end, self.countable(&stream[start..end])))
            .find(|&(_, seen)| seen > self.max)
    }

    /// Bytes of `buffered` that count towards the frame: all but the longest suffix that is
    /// a proper prefix of a delimiter.
    fn countable(&self, buffered: &[u8]) -> usize {
        let tail = self
            .delimiters
            .iter()
            .flat_map(|d| (1..d.len()).filter(|&k| buffered.ends_with(&d[..k])))
            .max()
            .unwrap_or(0);
        buffered.len() - tail
    }
}

/// `LengthFieldBasedFrameDecoder`.
///
/// Semantics: frames follow each other from offset 0. A frame's header is the bytes up to
/// the end of its length field; its length is the field value + adjustment + header size.
/// - An 8-byte field above `i64::MAX`, or a length below the header size: `Corrupted`, due
///   when the header has arrived; the header is skipped.
/// - A length above `max`: `TooLong` with that length (complete), the frame skipped; due
///   when the header has arrived (fail-fast) or when the whole frame has (fail-slow, never if
///   the stream ends first).
/// - Otherwise, once the whole frame has arrived: `Corrupted` if the length is below the
///   bytes to strip, else the frame without its first `strip` bytes.
pub struct LengthFieldModel {
    /// `LengthFieldConfig::max_frame_length`.
    pub max: usize,
    /// `length_field_offset`.
    pub offset: usize,
    /// `length_field_length` (1, 2, 3, 4 or 8).
    pub width: usize,
    /// `length_adjustment`.
    pub adjustment: i64,
    /// `initial_bytes_to_strip`.
    pub strip: usize,
    /// `fail_fast`.
    pub fail_fast: bool,
    /// Whether the field is little endian.
    pub little_endian: bool,
}

impl LengthFieldModel {
    /// The events for `stream` (they do not depend on where reads end).
    pub fn events(&self, stream: &[u8]) -> Vec<(Due, Ev)> {
        let header = self.offset + self.width;
        let mut events = Vec::new();
        let mut pos = 0usize;
        while pos + header <= stream.len() {
            let field = &stream[pos + self.offset..pos + header];
            let value = if self.little_endian {
                field
                    .iter()
                    .rev()
                    .fold(0u128, |v, &b| (v << 8) | u128::from(b))
            } else {
                field.iter().fold(0u128, |v, &b| (v << 8) | u128::from(b))
            };
            if value > i64::MAX as u128 {
                events.push((Due::At(pos + header), Ev::Corrupted));
                pos += header;
                continue;
            }
            let length = value as i128 + i128::from(self.adjustment) + header as i128;
            if length < header as i128 {
                events.push((Due::At(pos + header), Ev::Corrupted));
                pos += header;
                continue;
            }
            let end = pos as i128 + length;
            let fits = end <= stream.len() as i128;
            if length > self.max as i128 {
                let ev = Ev::TooLong {
                    length: u64::try_from(length).unwrap_or(u64::MAX),
                    max: self.max,
                    complete: true,
                };
                if self.fail_fast {
                    events.push((Due::At(pos + header), ev));
                } else if fits {
                    events.push((Due::At(end as usize), ev));
                }
            } else if fits {
                let length = length as usize;
                let ev = if self.strip > length {
                    Ev::Corrupted
                } else {
                    Ev::Frame(stream[pos + self.strip..pos + length].to_vec())
                };
                events.push((Due::At(pos + length), ev));
            }
            if !fits {
                break;
            }
            pos = end as usize;
        }
        events
    }
}

/// `FixedLengthFrameDecoder`: consecutive frames of `length` bytes, each due when complete.
pub fn fixed_length_events(stream: &[u8], length: usize) -> Vec<(Due, Ev)> {
    stream
        .chunks_exact(length)
        .enumerate()
        .map(|(i, frame)| (Due::At((i + 1) * length), Ev::Frame(frame.to_vec())))
        .collect()
}
