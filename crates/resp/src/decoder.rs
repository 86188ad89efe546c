//! [`RespDecoder`]: whole top-level RESP values out of a cumulation buffer (Netty's
//! `RedisDecoder` and `RedisArrayAggregator` in one step, plus redis-server's inline commands).
//!
//! Why not a `netloop_codec::FrameDecoder`: that contract yields one `Bytes` frame per call,
//! and a RESP value is a tree. Emitting its parts as frames and aggregating them in a second
//! handler (Netty's layout) would cost a pipeline event and a boxed message per part; here the
//! parts go straight into their aggregate and one message leaves per command. The decoder keeps
//! the codec crate's rules otherwise: it only consumes bytes from the front of the buffer it is
//! given, payloads are zero-copy `Bytes` views of it, no input makes it panic.
//!
//! Incremental by construction: it consumes each part of a value as soon as the part is
//! complete and keeps the open aggregates on an explicit stack, so bytes already decoded are
//! never looked at again. A bulk payload is taken in O(1) once its last byte has arrived
//! (reads before that only compare lengths), and a line not yet ended is scanned only past
//! the point the previous call reached. The decoder never recurses, whatever the nesting.
//!
//! Every check depends only on the bytes, never on how they were split into reads: a value
//! split at any byte boundary decodes to the same value, or fails with the same error (line
//! limits compare the length seen so far, which is a lower bound of the final one).
//!
//! After a protocol error the decoder is failed: the error is returned once, the buffer is
//! cleared, and every later call discards what it is given and returns `Ok(None)`, because
//! RESP has no marker to resynchronise on. The application should close the connection (after
//! writing [`RespError::reply_text`](crate::RespError::reply_text) if it is a server), as
//! redis-server does. [`RespDecoder::reset`] starts over, for callers that know better.
//!
//! State invariant: between calls, `buf` must be the same cumulation, only appended to.
//! `scanned` bytes after the current line's start hold no line ending; `pending` is set while
//! a bulk payload's header is consumed and its payload not yet taken; `stack` holds the open
//! aggregates, innermost last.

use bytes::{Buf, Bytes, BytesMut};

use crate::aggregate::{AggKind, Frame};
use crate::config::RespConfig;
use crate::error::{ConfigError, RespError};
use crate::inline;
use crate::number::{is_big_number, parse_double, parse_integer, parse_length, Length};
use crate::value::RespValue;

/// Decodes RESP values one top-level value at a time.
///
/// ```
/// use netloop_resp::{bytes::BytesMut, RespConfig, RespDecoder, RespValue};
/// let mut decoder = RespDecoder::new(RespConfig::default()).unwrap();
/// let mut buf = BytesMut::from(&b"*2\r\n$3\r\nGET\r\n$1\r\nk"[..]);
/// assert_eq!(decoder.decode(&mut buf), Ok(None)); // incomplete: wait for more
/// buf.extend_from_slice(b"\r\nPING\r\n");
/// assert_eq!(decoder.decode(&mut buf), Ok(Some(RespValue::command(["GET", "k"]))));
/// assert_eq!(decoder.decode(&mut buf), Ok(Some(RespValue::command(["PING"]))));
/// ```
#[derive(Debug)]
pub struct RespDecoder {
    config: RespConfig,
    stack: Vec<Frame>,
    pending: Option<Pending>,
    scanned: usize,
    failed: bool,
    /// Steps taken plus bytes searched for line endings (tests check it stays linear).
    #[cfg(test)]
    pub(crate) work: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BulkKind {
    Bulk,
    Error,
    Verbatim,
}

/// A bulk payload whose header has been consumed.
#[derive(Debug, Clone, Copy)]
struct Pending {
    kind: BulkKind,
    len: usize,
}

/// What one parsing step did.
enum Step {
    /// The buffer ends inside the current part.
    NeedMore,
    /// A header or a blank inline line was consumed; parse on.
    Progress,
    /// A complete value (possibly an element of an open aggregate).
    Value(RespValue),
}

impl RespDecoder {
    /// A decoder with these limits.
    ///
    /// # Errors
    /// [`ConfigError`] when `config` is out of range (see [`RespConfig::validate`]).
    pub fn new(config: RespConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(RespDecoder {
            config,
            stack: Vec::new(),
            pending: None,
            scanned: 0,
            failed: false,
            #[cfg(test)]
            work: 0,
        })
    }

    /// The limits this decoder enforces.
    pub fn config(&self) -> &RespConfig {
        &self.config
    }

    /// Whether a protocol error stopped this decoder.
    pub fn is_failed(&self) -> bool {
        self.failed
    }

    /// Whether part of a value has been consumed from the buffer and the rest is awaited.
    /// (Bytes still in the buffer may hold the start of a value too.)
    pub fn is_mid_value(&self) -> bool {
        !self.stack.is_empty() || self.pending.is_some()
    }

    /// Forgets any partial value and a past failure. The caller must then give a buffer that
    /// starts at a value boundary.
    pub fn reset(&mut self) {
        self.stack.clear();
        self.pending = None;
        self.scanned = 0;
        self.failed = false;
    }

    /// Decodes the next complete top-level value from the front of `buf`, consuming its
    /// bytes; `Ok(None)` when more bytes are needed (the parts already complete are consumed
    /// and kept). After an error, see the module docs.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<RespValue>, RespError> {
        if self.failed {
            buf.clear();
            return Ok(None);
        }
        match self.decode_value(buf) {
            Ok(value) => Ok(value),
            Err(error) => {
                self.reset();
                self.failed = true;
                buf.clear();
                Err(error)
            }
        }
    }

    /// Decodes every complete value in `buf` into `out`, stopping at the first error.
    ///
    /// # Errors
    /// The first protocol error; the values before it are in `out`.
    pub fn decode_into(
        &mut self,
        buf: &mut BytesMut,
        out: &mut Vec<RespValue>,
    ) -> Result<(), RespError> {
        while let Some(value) = self.decode(buf)? {
            out.push(value);
        }
        Ok(())
    }

    fn decode_value(&mut self, buf: &mut BytesMut) -> Result<Option<RespValue>, RespError> {
        loop {
            match self.step(buf)? {
                Step::NeedMore => return Ok(None),
                Step::Progress => {}
                Step::Value(value) => {
                    if let Some(top) = self.complete(value) {
                        return Ok(Some(top));
                    }
                }
            }
        }
    }

    /// Adds a finished value to the open aggregates; returns it when it is a top-level one.
    fn complete(&mut self, mut value: RespValue) -> Option<RespValue> {
        while let Some(frame) = self.stack.last_mut() {
            if !frame.push(value) {
                return None;
            }
            value = self.stack.pop()?.finish();
        }
        Some(value)
    }

    fn accepts(&self, byte: u8) -> bool {
        match byte {
            b'+' | b'-' | b':' | b'$' | b'*' => true,
            b'_' | b',' | b'#' | b'(' | b'!' | b'=' | b'%' | b'~' | b'|' | b'>' => {
                self.config.resp3
            }
            _ => false,
        }
    }

    fn step(&mut self, buf: &mut BytesMut) -> Result<Step, RespError> {
        #[cfg(test)]
        {
            self.work += 1;
        }
        if let Some(pending) = self.pending {
            return self.payload(buf, pending);
        }
        let Some(&first) = buf.first() else {
            return Ok(Step::NeedMore);
        };
        if !self.accepts(first) {
            if self.stack.is_empty() && self.config.inline_commands {
                return self.inline(buf);
            }
            return Err(RespError::BadType { byte: first });
        }
        let Some(end) = self.find_line(buf)? else {
            return Ok(Step::NeedMore);
        };
        let content = &buf[1..end];
        let value = match first {
            b'+' => RespValue::SimpleString(take_line(buf, end)),
            b'-' => RespValue::Error(take_line(buf, end)),
            b'(' if is_big_number(content) => RespValue::BigNumber(take_line(buf, end)),
            b'(' => return Err(RespError::BadValue { of: "big number" }),
            b':' => {
                let value = parse_integer(content).ok_or(RespError::BadValue { of: "integer" })?;
                buf.advance(end + 2);
                RespValue::Integer(value)
            }
            b',' => {
                let value = parse_double(content).ok_or(RespError::BadValue { of: "double" })?;
                buf.advance(end + 2);
                RespValue::Double(value)
            }
            b'#' => {
                let value = match content {
                    b"t" => true,
                    b"f" => false,
                    _ => return Err(RespError::BadValue { of: "boolean" }),
                };
                buf.advance(end + 2);
                RespValue::Boolean(value)
            }
            b'_' if content.is_empty() => {
                buf.advance(end + 2);
                RespValue::Null
            }
            b'_' => return Err(RespError::BadValue { of: "null" }),
            b'$' | b'!' | b'=' => return self.bulk_header(buf, first, end),
            _ => return self.aggregate_header(buf, first, end),
        };
        Ok(Step::Value(value))
    }

    /// Finds the end (the CR's index) of the type line at the front of `buf`, once its CRLF
    /// is buffered.
    fn find_line(&mut self, buf: &[u8]) -> Result<Option<usize>, RespError> {
        let max = self.config.max_inline_length;
        let from = self.scanned.max(1);
        let found = memchr::memchr2(b'\r', b'\n', &buf[from..]);
        #[cfg(test)]
        {
            self.work += found.map_or(buf.len() - from, |offset| offset + 1);
        }
        let Some(offset) = found else {
            if buf.len() - 1 > max {
                return Err(RespError::LineTooLong { max });
            }
            self.scanned = buf.len();
            return Ok(None);
        };
        let at = from + offset;
        // Before the ending's shape: a split read could not have told it yet.
        if at - 1 > max {
            return Err(RespError::LineTooLong { max });
        }
        match (buf[at], buf.get(at + 1)) {
            (b'\r', None) => {
                self.scanned = at;
                Ok(None)
            }
            (b'\r', Some(b'\n')) => {
                self.scanned = 0;
                Ok(Some(at))
            }
            _ => Err(RespError::MissingCrlf),
        }
    }

    fn bulk_header(
        &mut self,
        buf: &mut BytesMut,
        first: u8,
        end: usize,
    ) -> Result<Step, RespError> {
        let (kind, of) = match first {
            b'$' => (BulkKind::Bulk, "bulk string"),
            b'!' => (BulkKind::Error, "bulk error"),
            _ => (BulkKind::Verbatim, "verbatim string"),
        };
        let length = parse_length(&buf[1..end]).ok_or(RespError::BadLength { of })?;
        buf.advance(end + 2);
        let length = match length {
            Length::Null if kind == BulkKind::Bulk => {
                return Ok(Step::Value(RespValue::NullBulkString))
            }
            Length::Null => return Err(RespError::BadLength { of }),
            Length::Count(n) => n,
        };
        let max = self.config.max_bulk_length;
        let len = match usize::try_from(length) {
            Ok(len) if len <= max => len,
            _ => return Err(RespError::BulkTooLong { length, max }),
        };
        if kind == BulkKind::Verbatim && len < 4 {
            return Err(RespError::BadValue { of });
        }
        self.pending = Some(Pending { kind, len });
        Ok(Step::Progress)
    }

    /// Takes a bulk payload once it and its CRLF are buffered.
    fn payload(&mut self, buf: &mut BytesMut, pending: Pending) -> Result<Step, RespError> {
        let len = pending.len;
        if buf.len() < len.saturating_add(2) {
            return Ok(Step::NeedMore);
        }
        if &buf[len..len + 2] != b"\r\n" {
            return Err(RespError::MissingCrlf);
        }
        self.pending = None;
        let data = buf.split_to(len).freeze();
        buf.advance(2);
        let value = match pending.kind {
            BulkKind::Bulk => RespValue::BulkString(data),
            BulkKind::Error => RespValue::BulkError(data),
            BulkKind::Verbatim => {
                if data[3] != b':' {
                    return Err(RespError::BadValue {
                        of: "verbatim string",
                    });
                }
                RespValue::VerbatimString {
                    format: [data[0], data[1], data[2]],
                    text: data.slice(4..),
                }
            }
        };
        Ok(Step::Value(value))
    }

    fn aggregate_header(
        &mut self,
        buf: &mut BytesMut,
        first: u8,
        end: usize,
    ) -> Result<Step, RespError> {
        let (kind, of) = match first {
            b'*' => (AggKind::Array, "array"),
            b'~' => (AggKind::Set, "set"),
            b'>' => (AggKind::Push, "push"),
            b'%' => (AggKind::Map, "map"),
            _ => (AggKind::Attribute, "attribute"),
        };
        let length = parse_length(&buf[1..end]).ok_or(RespError::BadLength { of })?;
        buf.advance(end + 2);
        let count = match length {
            Length::Null if kind == AggKind::Array => return Ok(Step::Value(RespValue::NullArray)),
            Length::Null => return Err(RespError::BadLength { of }),
            Length::Count(n) => n,
        };
        let max = self.config.max_array_length;
        if usize::try_from(count).map_or(true, |n| n > max) {
            return Err(RespError::ArrayTooLong { length: count, max });
        }
        if self.stack.len() >= self.config.max_nesting_depth {
            return Err(RespError::TooDeep {
                max: self.config.max_nesting_depth,
            });
        }
        let frame = Frame::new(kind, count);
        if frame.remaining == 0 {
            return Ok(Step::Value(frame.finish()));
        }
        self.stack.push(frame);
        Ok(Step::Progress)
    }

    /// An inline command: a line ending with LF (CRLF), split into bulk strings. A blank
    /// line yields nothing (redis-server skips it).
    fn inline(&mut self, buf: &mut BytesMut) -> Result<Step, RespError> {
        let max = self.config.max_inline_length;
        let from = self.scanned;
        let found = memchr::memchr(b'\n', &buf[from..]);
        #[cfg(test)]
        {
            self.work += found.map_or(buf.len() - from, |offset| offset + 1);
        }
        let Some(offset) = found else {
            // A trailing CR may be the line's ending: it does not count yet.
            let seen = buf.len() - usize::from(buf.last() == Some(&b'\r'));
            if seen > max {
                return Err(RespError::InlineTooLong { max });
            }
            self.scanned = buf.len();
            return Ok(Step::NeedMore);
        };
        let lf = from + offset;
        let end = if lf > 0 && buf[lf - 1] == b'\r' {
            lf - 1
        } else {
            lf
        };
        if end > max {
            return Err(RespError::InlineTooLong { max });
        }
        self.scanned = 0;
        let line = buf.split_to(end).freeze();
        buf.advance(lf + 1 - end);
        let args = inline::split(&line)?;
        if args.is_empty() {
            return Ok(Step::Progress);
        }
        Ok(Step::Value(RespValue::Array(
            args.into_iter().map(RespValue::BulkString).collect(),
        )))
    }
}

/// Takes a type line's content (type byte and CRLF dropped) as a view of the buffer.
fn take_line(buf: &mut BytesMut, end: usize) -> Bytes {
    buf.advance(1);
    let line = buf.split_to(end - 1).freeze();
    buf.advance(2);
    line
}
