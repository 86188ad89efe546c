//! [`parse_plain`]: a complete request head of the common shape, found, checked and split
//! into spans in one pass over its bytes, instead of the line scanner's pass and then
//! httparse's (about 1,400 instructions for a load tool's two-line head, a third of the
//! codec's cost per request).
//!
//! Ground rules:
//! - It accepts a strict subset of what the scanner and httparse accept together, and for
//!   what it accepts it gives what they give (the head's length, the spans of method, target
//!   and fields, the version): `method SP target SP HTTP/1.(0|1) CRLF`, then fields
//!   `name ":" OWS value CRLF` and the empty line, with a token method and names, a target of
//!   visible ASCII, values of field text (HTAB, SP, VCHAR, obs-text), and every limit the
//!   scanner and httparse apply kept.
//! - It never fails: anything else (a head not complete in `buf` yet, a bare LF, a control
//!   byte, obs-fold, a limit passed) returns `None`, and the scanner and httparse run as
//!   before, with their verdicts and errors. A unit test holds both paths to the same results.

use crate::message::{HeaderSpan, Spans, Version};
use crate::scan::skip_plain;

/// Token characters (RFC 9110 §5.6.2): what httparse takes in a method or a field name.
static TCHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        i += 1;
    }
    t
};

const CR: u8 = b'\r';
const LF: u8 = b'\n';

/// A head [`parse_plain`] accepted: offsets into the bytes it was given.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PlainHead {
    /// The head's length, its empty line included.
    pub len: usize,
    pub method: (u32, u32),
    pub target: (u32, u32),
    pub version: Version,
    pub spans: Spans,
}

/// The limits the scanner and httparse apply to a head.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlainLimits {
    /// The head must end before this offset (else the scanner answers 431).
    pub max_head: usize,
    /// The request line must end before this offset (else 414).
    pub max_first_line: usize,
    /// At most this many fields (else httparse answers 431).
    pub max_fields: usize,
}

/// The head at the start of `buf` (its first byte is the method's), or `None` when it is not
/// complete there or not of the plain shape (see the module's rules).
pub(crate) fn parse_plain(buf: &[u8], limits: PlainLimits) -> Option<PlainHead> {
    let n = buf.len();
    let at = |i: usize| buf.get(i).copied();
    let mut i = 0;
    while i < n && TCHAR[usize::from(buf[i])] {
        i += 1;
    }
    if i == 0 || at(i)? != b' ' {
        return None;
    }
    let method = (0, i as u32);
    i += 1;
    let target_from = i;
    while i < n && (0x21..=0x7e).contains(&buf[i]) {
        i += 1;
    }
    if i == target_from || at(i)? != b' ' {
        return None;
    }
    let target = (target_from as u32, i as u32);
    i += 1;
    let line = buf.get(i..i + 10)?;
    let version = match &line[..8] {
        b"HTTP/1.1" => Version::Http11,
        b"HTTP/1.0" => Version::Http10,
        _ => return None,
    };
    if line[8] != CR || line[9] != LF {
        return None;
    }
    i += 10;
    // `i - 1`, the request line's LF, is the last byte the scanner looks at in it: below both limits.
    if i > limits.max_first_line.min(limits.max_head) {
        return None;
    }
    let mut spans = SpanList::default();
    loop {
        if at(i)? == CR {
            if at(i + 1)? != LF {
                return None;
            }
            i += 2;
            break;
        }
        let name_from = i;
        while i < n && TCHAR[usize::from(buf[i])] {
            i += 1;
        }
        if i == name_from || at(i)? != b':' {
            return None;
        }
        let name_to = i;
        i += 1;
        while i < n && (buf[i] == b' ' || buf[i] == b'\t') {
            i += 1;
        }
        let value_from = i;
        // Field text up to the line's CR, eight bytes at a time (the scanner's word test).
        i = skip_plain(buf, i, n);
        if at(i)? != CR || at(i + 1)? != LF {
            return None;
        }
        let mut value_to = i;
        while value_to > value_from && matches!(buf[value_to - 1], b' ' | b'\t') {
            value_to -= 1;
        }
        if spans.len() == limits.max_fields {
            return None;
        }
        let span = |v: usize| v as u32;
        spans.push([
            span(name_from),
            span(name_to),
            span(value_from),
            span(value_to),
        ]);
        i += 2;
    }
    if i > limits.max_head {
        return None;
    }
    Some(PlainHead {
        len: i,
        method,
        target,
        version,
        spans: spans.into_spans(),
    })
}

/// The spans while they are found: inline up to four, then a vector.
#[derive(Default)]
struct SpanList {
    inline: [HeaderSpan; 4],
    n: usize,
    heap: Vec<HeaderSpan>,
}

impl SpanList {
    fn len(&self) -> usize {
        self.n
    }

    fn push(&mut self, span: HeaderSpan) {
        if self.n < self.inline.len() {
            self.inline[self.n] = span;
        } else {
            if self.heap.is_empty() {
                self.heap.extend_from_slice(&self.inline);
            }
            self.heap.push(span);
        }
        self.n += 1;
    }

    fn into_spans(self) -> Spans {
        if self.n <= self.inline.len() {
            Spans::Inline(self.n as u8, self.inline)
        } else {
            Spans::Heap(self.heap)
        }
    }
}

#[cfg(test)]
#[path = "plain_head_tests.rs"]
mod tests;
