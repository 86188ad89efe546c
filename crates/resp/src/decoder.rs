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
use crate::number::{is_big_number, parse_double, parse_integer, parse_length, Length};
use crate::value::RespValue;

mod command_frame;
mod lines;

pub(crate) use lines::plain_length;
use lines::take_line;

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
    /// The top-level value the last step completed.
    top: Option<RespValue>,
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

/// Internal results: the error is boxed so that a step's result fits in two registers
/// (moving a large `Result` through memory on every element cost a third of the time).
type Parse<T> = Result<T, Box<RespError>>;

fn fail<T>(error: RespError) -> Parse<T> {
    Err(Box::new(error))
}

/// What one parsing step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The buffer ends inside the current part.
    NeedMore,
    /// A part was consumed (a header, a blank inline line, an element); parse on.
    Progress,
    /// A complete top-level value, left in `RespDecoder::top`.
    Top,
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
            top: None,
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
        self.top = None;
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
                Err(*error)
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

    fn decode_value(&mut self, buf: &mut BytesMut) -> Parse<Option<RespValue>> {
        loop {
            match self.step(buf)? {
                Step::NeedMore => return Ok(None),
                Step::Progress => {}
                Step::Top => return Ok(self.top.take()),
            }
        }
    }

    /// Adds a finished value to the open aggregates, closing those it completes: `Top` when
    /// it is a whole top-level value. (Values go into their aggregate right where they are
    /// made, instead of travelling back through the step loop.)
    fn emit(&mut self, mut value: RespValue) -> Step {
        while let Some(frame) = self.stack.last_mut() {
            if !frame.push(value) {
                return Step::Progress;
            }
            value = match self.stack.pop() {
                Some(frame) => frame.finish(),
                None => return Step::Progress,
            };
        }
        self.top = Some(value);
        Step::Top
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

    fn step(&mut self, buf: &mut BytesMut) -> Parse<Step> {
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
        if first == b'$' || first == b'*' {
            if let Some((count, header)) = plain_length(buf) {
                self.scanned = 0;
                buf.advance(header);
                return if first == b'$' {
                    self.bulk(buf, BulkKind::Bulk, count)
                } else {
                    self.aggregate(AggKind::Array, count)
                };
            }
        }
        if !self.accepts(first) {
            if self.stack.is_empty() && self.config.inline_commands {
                return self.inline(buf);
            }
            return fail(RespError::BadType { byte: first });
        }
        let Some(end) = self.find_line(buf)? else {
            return Ok(Step::NeedMore);
        };
        let content = &buf[1..end];
        let value = match first {
            b'+' => RespValue::SimpleString(take_line(buf, end)),
            b'-' => RespValue::Error(take_line(buf, end)),
            b'(' if is_big_number(content) => RespValue::BigNumber(take_line(buf, end)),
            b'(' => return fail(RespError::BadValue { of: "big number" }),
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
                    _ => return fail(RespError::BadValue { of: "boolean" }),
                };
                buf.advance(end + 2);
                RespValue::Boolean(value)
            }
            b'_' if content.is_empty() => {
                buf.advance(end + 2);
                RespValue::Null
            }
            b'_' => return fail(RespError::BadValue { of: "null" }),
            b'$' | b'!' | b'=' => return self.bulk_header(buf, first, end),
            _ => return self.aggregate_header(buf, first, end),
        };
        Ok(self.emit(value))
    }

    fn bulk_header(&mut self, buf: &mut BytesMut, first: u8, end: usize) -> Parse<Step> {
        let (kind, of) = match first {
            b'$' => (BulkKind::Bulk, "bulk string"),
            b'!' => (BulkKind::Error, "bulk error"),
            _ => (BulkKind::Verbatim, "verbatim string"),
        };
        let length = parse_length(&buf[1..end]).ok_or(RespError::BadLength { of })?;
        buf.advance(end + 2);
        match length {
            Length::Null if kind == BulkKind::Bulk => Ok(self.emit(RespValue::NullBulkString)),
            Length::Null => fail(RespError::BadLength { of }),
            Length::Count(n) => self.bulk(buf, kind, n),
        }
    }

    /// A bulk header of `length` was consumed: check it, then take the payload if it is
    /// buffered already.
    fn bulk(&mut self, buf: &mut BytesMut, kind: BulkKind, length: u64) -> Parse<Step> {
        let max = self.config.max_bulk_length;
        let len = match usize::try_from(length) {
            Ok(len) if len <= max => len,
            _ => return fail(RespError::BulkTooLong { length, max }),
        };
        if kind == BulkKind::Verbatim && len < 4 {
            return fail(RespError::BadValue {
                of: "verbatim string",
            });
        }
        let pending = Pending { kind, len };
        self.pending = Some(pending);
        self.payload(buf, pending)
    }

    /// Takes a bulk payload once it and its CRLF are buffered.
    fn payload(&mut self, buf: &mut BytesMut, pending: Pending) -> Parse<Step> {
        let len = pending.len;
        if buf.len() < len.saturating_add(2) {
            return Ok(Step::NeedMore);
        }
        if &buf[len..len + 2] != b"\r\n" {
            return fail(RespError::MissingCrlf);
        }
        self.pending = None;
        let data = buf.split_to(len).freeze();
        buf.advance(2);
        let value = match pending.kind {
            BulkKind::Bulk => RespValue::BulkString(data),
            BulkKind::Error => RespValue::BulkError(data),
            BulkKind::Verbatim => verbatim(data)?,
        };
        Ok(self.emit(value))
    }

    fn aggregate_header(&mut self, buf: &mut BytesMut, first: u8, end: usize) -> Parse<Step> {
        let (kind, of) = match first {
            b'*' => (AggKind::Array, "array"),
            b'~' => (AggKind::Set, "set"),
            b'>' => (AggKind::Push, "push"),
            b'%' => (AggKind::Map, "map"),
            _ => (AggKind::Attribute, "attribute"),
        };
        let length = parse_length(&buf[1..end]).ok_or(RespError::BadLength { of })?;
        buf.advance(end + 2);
        match length {
            Length::Null if kind == AggKind::Array => Ok(self.emit(RespValue::NullArray)),
            Length::Null => fail(RespError::BadLength { of }),
            Length::Count(n) => self.aggregate(kind, n),
        }
    }

    /// An aggregate header of `count` entries was consumed: check it and open the aggregate.
    fn aggregate(&mut self, kind: AggKind, count: u64) -> Parse<Step> {
        let max = self.config.max_array_length;
        if usize::try_from(count).map_or(true, |n| n > max) {
            return fail(RespError::ArrayTooLong { length: count, max });
        }
        if self.stack.len() >= self.config.max_nesting_depth {
            return fail(RespError::TooDeep {
                max: self.config.max_nesting_depth,
            });
        }
        let frame = Frame::new(kind, count);
        if frame.remaining == 0 {
            return Ok(self.emit(frame.finish()));
        }
        self.stack.push(frame);
        Ok(Step::Progress)
    }
}

/// A verbatim string's payload (`fmt:text`, at least 4 bytes long) as its value.
#[cold]
#[inline(never)]
fn verbatim(data: Bytes) -> Parse<RespValue> {
    if data[3] != b':' {
        return fail(RespError::BadValue {
            of: "verbatim string",
        });
    }
    Ok(RespValue::VerbatimString {
        format: [data[0], data[1], data[2]],
        text: data.slice(4..),
    })
}
