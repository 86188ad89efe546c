//! The decoder's line work: finding the end of a type line, the fast path for plain
//! length headers, and inline commands. Lines are scanned once: `scanned` remembers how far
//! the current line is known to hold no line ending, so a line arriving in many reads costs
//! time linear in its length. Line limits compare the length seen so far (a lower bound of
//! the final length), so they fire alike however the line is split.

use bytes::{Buf, Bytes, BytesMut};

use super::{fail, Parse, RespDecoder, Step};
use crate::error::RespError;
use crate::inline;
use crate::value::RespValue;

impl RespDecoder {
    /// Finds the end (the CR's index) of the type line at the front of `buf`, once its CRLF
    /// is buffered.
    pub(super) fn find_line(&mut self, buf: &[u8]) -> Parse<Option<usize>> {
        let max = self.config.max_inline_length;
        let from = self.scanned.max(1);
        let found = memchr::memchr2(b'\r', b'\n', &buf[from..]);
        #[cfg(test)]
        {
            self.work += found.map_or(buf.len() - from, |offset| offset + 1);
        }
        let Some(offset) = found else {
            if buf.len() - 1 > max {
                return fail(RespError::LineTooLong { max });
            }
            self.scanned = buf.len();
            return Ok(None);
        };
        let at = from + offset;
        // Before the ending's shape: a split read could not have told it yet.
        if at - 1 > max {
            return fail(RespError::LineTooLong { max });
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
            _ => fail(RespError::MissingCrlf),
        }
    }

    /// An inline command: a line ending with LF (CRLF), split into bulk strings. A blank
    /// line yields nothing (redis-server skips it).
    pub(super) fn inline(&mut self, buf: &mut BytesMut) -> Parse<Step> {
        if self.config.max_nesting_depth == 0 {
            // An inline command is an array: one level.
            return fail(RespError::TooDeep { max: 0 });
        }
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
                return fail(RespError::InlineTooLong { max });
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
            return fail(RespError::InlineTooLong { max });
        }
        self.scanned = 0;
        let line = buf.split_to(end).freeze();
        buf.advance(lf + 1 - end);
        let args = inline::split(&line)?;
        if args.is_empty() {
            return Ok(Step::Progress);
        }
        Ok(self.emit(RespValue::Array(args)))
    }
}

/// The fast path of the two headers of every command (`*3\r\n`, `$5\r\n`): a complete
/// header line of 1 to 18 digits as (count, header length). Anything else (an incomplete
/// line, `-1`, a bad one) returns `None` and takes the general path, which decides alike.
#[inline]
pub(crate) fn plain_length(buf: &[u8]) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    let mut i = 1;
    while i <= 18 {
        let digit = buf.get(i)?.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value * 10 + u64::from(digit);
        i += 1;
    }
    (i > 1 && buf.get(i..i + 2)? == b"\r\n").then_some((value, i + 2))
}

/// Takes a type line's content (type byte and CRLF dropped) as a view of the buffer.
pub(super) fn take_line(buf: &mut BytesMut, end: usize) -> Bytes {
    buf.advance(1);
    let line = buf.split_to(end - 1).freeze();
    buf.advance(2);
    line
}
