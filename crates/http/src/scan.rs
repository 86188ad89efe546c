//! [`LineScanner`]: finds the end of a request head (or of a trailer section) while checking,
//! byte by byte, what httparse is lenient about: bare LF and bare CR line ends, obs-fold
//! (a line starting with whitespace), control characters, and the size limits.
//!
//! Ground rules:
//! - The verdict depends only on the bytes, never on how they were split into reads: the
//!   scanner looks at each byte once, in order, and every check is decided by that byte and
//!   the one before it (a CR waits for the next byte). So a one-shot parse and a parse fed
//!   one byte at a time fail with the same error at the same byte.
//! - Positions are offsets from the start of the head in the unconsumed input; the caller
//!   resets the scanner when it consumes a head.

use crate::error::HttpError;

const CR: u8 = b'\r';
const LF: u8 = b'\n';

/// Bytes with no special meaning in a head: HTAB, SP, VCHAR and obs-text (not CR, LF, other
/// controls or DEL).
static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i == 0x09 || (i >= 0x20 && i != 0x7f);
        i += 1;
    }
    t
};

/// Limits one scan applies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanLimits {
    /// Bytes allowed before the end of the head; at this offset without an end: 431.
    pub max_head: usize,
    /// Bytes allowed in the first line (request line) before its end: 414. `None` for a
    /// trailer section (no request line).
    pub max_first_line: Option<usize>,
}

/// The first position in `buf[from..end]` holding a byte that is not [`PLAIN`] (`end` if
/// none). Eight bytes at a time first, without branches per byte (a word with a byte below
/// 0x20 or a DEL stops it; a tab, which is plain, too, and the bytewise search then goes on
/// past it), then the bytes from the word that holds the special one.
pub(crate) fn skip_plain(buf: &[u8], mut from: usize, end: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while from + 8 <= end {
        let mut word = [0u8; 8];
        word.copy_from_slice(&buf[from..from + 8]);
        let w = u64::from_le_bytes(word);
        // Some byte below 0x20 (exact for "any": a borrow only follows a byte that set it).
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
        // Some byte equal to 0x7f (a zero byte of `w ^ 0x7f..`).
        let del = (w ^ (ONES * 0x7f)).wrapping_sub(ONES) & !(w ^ (ONES * 0x7f)) & HIGH;
        if control | del != 0 {
            break;
        }
        from += 8;
    }
    buf[from..end]
        .iter()
        .position(|&c| !PLAIN[usize::from(c)])
        .map_or(end, |p| from + p)
}

/// Incremental scan state of one head.
#[derive(Debug, Default, Clone)]
pub(crate) struct LineScanner {
    /// Next byte to look at.
    pos: usize,
    /// Where the current line starts.
    line_start: usize,
    /// The first line has ended.
    past_first_line: bool,
}

impl LineScanner {
    /// True before any byte of this head was looked at.
    pub(crate) fn at_start(&self) -> bool {
        self.pos == 0
    }

    /// Scans `buf` (the head so far) from where the last call stopped. `Ok(Some(n))`: the
    /// head is complete and `n` bytes long, its empty line included; `Ok(None)`: more bytes
    /// are needed.
    pub(crate) fn scan(
        &mut self,
        buf: &[u8],
        limits: ScanLimits,
    ) -> Result<Option<usize>, HttpError> {
        while self.pos < buf.len() {
            let i = self.pos;
            let in_first_line = limits.max_first_line.is_some() && !self.past_first_line;
            // The first position a limit forbids (checked in byte order).
            let first_line_end = match limits.max_first_line {
                Some(max) if in_first_line => max,
                _ => usize::MAX,
            };
            if i >= first_line_end {
                return Err(HttpError::UriTooLong {
                    limit: first_line_end.saturating_sub(64),
                });
            }
            if i >= limits.max_head {
                return Err(HttpError::HeadTooLarge {
                    limit: limits.max_head,
                });
            }
            let b = buf[i];
            let prev = if i > 0 { buf[i - 1] } else { 0 };
            if prev == CR && b != LF {
                return Err(HttpError::bad("HPE_LF_EXPECTED", "bare CR in the head"));
            }
            if i == self.line_start && (b == b' ' || b == b'\t') {
                return Err(if in_first_line {
                    HttpError::bad("HPE_INVALID_METHOD", "whitespace before the method")
                } else {
                    HttpError::bad(
                        "HPE_INVALID_HEADER_TOKEN",
                        "obs-fold (a header line starting with whitespace)",
                    )
                });
            }
            if PLAIN[usize::from(b)] {
                // Skip the run of ordinary bytes up to the next special one or limit.
                let end = buf.len().min(limits.max_head).min(first_line_end);
                self.pos = skip_plain(buf, i + 1, end.max(i + 1));
                continue;
            }
            match b {
                LF => {
                    if prev != CR {
                        return Err(HttpError::bad("HPE_CR_EXPECTED", "bare LF in the head"));
                    }
                    let empty = i == self.line_start + 1;
                    if empty && in_first_line {
                        return Err(HttpError::bad("HPE_INVALID_METHOD", "empty request line"));
                    }
                    self.pos = i + 1;
                    if empty {
                        return Ok(Some(i + 1));
                    }
                    self.past_first_line = true;
                    self.line_start = i + 1;
                    continue;
                }
                CR => {}
                _ => {
                    return Err(HttpError::bad(
                        "HPE_INVALID_HEADER_TOKEN",
                        "control character in the head",
                    ));
                }
            }
            self.pos = i + 1;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: ScanLimits = ScanLimits {
        max_head: 1024,
        max_first_line: Some(100),
    };

    fn scan_all(buf: &[u8]) -> Result<Option<usize>, HttpError> {
        LineScanner::default().scan(buf, HEAD)
    }

    fn scan_bytewise(buf: &[u8]) -> Result<Option<usize>, HttpError> {
        let mut s = LineScanner::default();
        for n in 1..=buf.len() {
            if let Some(r) = s.scan(&buf[..n], HEAD).transpose() {
                return r.map(Some);
            }
        }
        Ok(None)
    }

    #[test]
    fn finds_the_end_of_a_head_whatever_the_split() {
        let head = b"GET / HTTP/1.1\r\nHost: a\r\n\r\nbody";
        assert_eq!(scan_all(head), Ok(Some(27)));
        assert_eq!(scan_bytewise(head), Ok(Some(27)));
        assert_eq!(scan_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r"), Ok(None));
    }

    #[test]
    fn refuses_what_httparse_lets_through_with_the_same_verdict_split_or_not() {
        let cases: [(&[u8], &str); 6] = [
            (b"GET / HTTP/1.1\nHost: a\r\n\r\n", "HPE_CR_EXPECTED"),
            (b"GET / HTTP/1.1\r\nHost: a\rX\r\n\r\n", "HPE_LF_EXPECTED"),
            (
                b"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n",
                "HPE_INVALID_HEADER_TOKEN",
            ),
            (
                b"GET / HTTP/1.1\r\nA: b\x01c\r\n\r\n",
                "HPE_INVALID_HEADER_TOKEN",
            ),
            (b"\r\n", "HPE_INVALID_METHOD"),
            (b" GET / HTTP/1.1\r\n\r\n", "HPE_INVALID_METHOD"),
        ];
        for (input, code) in cases {
            let one = scan_all(input).unwrap_err();
            assert_eq!(one.code(), code, "{:?}", String::from_utf8_lossy(input));
            assert_eq!(scan_bytewise(input).unwrap_err(), one);
        }
    }

    #[test]
    fn skip_plain_stops_at_the_first_control_byte_or_del_wherever_it_lies() {
        for len in 0..40 {
            for at in 0..len {
                for special in [b'\r', b'\n', 0x00, 0x1f, 0x7f] {
                    let mut buf = vec![b'a'; len];
                    buf[at] = special;
                    assert_eq!(
                        skip_plain(&buf, 0, len),
                        at,
                        "{special:#x} at {at} of {len}"
                    );
                }
                let mut tabs = vec![b'\t'; len];
                tabs[at] = b'\r';
                assert_eq!(skip_plain(&tabs, 0, len), at, "tabs are plain");
            }
            let high = vec![0x80u8; len];
            assert_eq!(skip_plain(&high, 0, len), len, "obs-text is plain");
        }
    }

    #[test]
    fn a_long_request_line_is_414_and_a_long_head_431() {
        let line = [b'a'; 200];
        assert_eq!(scan_all(&line).unwrap_err().status(), Some(414));
        let mut head = b"GET / HTTP/1.1\r\n".to_vec();
        head.extend(std::iter::repeat(b'x').take(2000));
        assert_eq!(scan_all(&head).unwrap_err().status(), Some(431));
        assert_eq!(scan_bytewise(&head).unwrap_err().status(), Some(431));
    }
}
