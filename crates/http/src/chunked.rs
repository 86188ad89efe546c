//! [`ChunkedBody`]: the chunked transfer coding of a request body (RFC 9112 §7.1), strict.
//!
//! - chunk-size: 1 to 16 hex digits, nothing before them; then optional extensions
//!   (`;name[=token or quoted-string]`, no whitespace, as llhttp); the line ends
//!   with CRLF (a bare LF or CR is refused); the line is at most [`MAX_CHUNK_LINE`] bytes.
//! - chunk-data is followed by exactly CRLF.
//! - The trailer section is scanned like a head (same byte checks, `max_head_size`) and its
//!   fields are delivered with the last piece.
//!
//! Every failure is a 400 with llhttp's code (`HPE_INVALID_CHUNK_SIZE`, ...). As the head
//! scanner, verdicts depend only on the bytes, not on how reads split them.

use bytes::Bytes;

use crate::error::HttpError;
use crate::fields::is_tchar;
use crate::input::Input;
use crate::message::HeaderList;
use crate::scan::{LineScanner, ScanLimits};

/// Longest chunk-size line, extensions included (CRLF excluded).
pub const MAX_CHUNK_LINE: usize = 4096;

#[derive(Debug)]
enum Phase {
    /// Reading a chunk-size line.
    Size,
    /// In chunk data, this many bytes left.
    Data(u64),
    /// Expecting the CRLF that ends chunk data.
    DataEnd,
    /// After the last chunk: the trailer section.
    Trailers(LineScanner),
    Done,
}

/// What one step of the chunked decoder yields.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Body bytes.
    Data(Bytes),
    /// The end of the body, with the trailer fields.
    End(HeaderList),
}

/// The decoding state of one chunked body.
#[derive(Debug)]
pub(crate) struct ChunkedBody {
    phase: Phase,
    /// Body bytes so far (for the size limit).
    received: u64,
    max_body: u64,
    max_trailers: usize,
}

fn invalid_size(reason: &'static str) -> HttpError {
    HttpError::bad("HPE_INVALID_CHUNK_SIZE", reason)
}

impl ChunkedBody {
    pub(crate) fn new(max_body: u64, max_trailers: usize) -> Self {
        ChunkedBody {
            phase: Phase::Size,
            received: 0,
            max_body,
            max_trailers,
        }
    }

    /// Decodes one piece from the front of `input`; `Ok(None)`: more bytes are needed.
    pub(crate) fn step(&mut self, input: &mut impl Input) -> Result<Option<Piece>, HttpError> {
        loop {
            let buf = input.bytes();
            match &mut self.phase {
                Phase::Size => {
                    let Some((line_len, size)) = size_line(buf)? else {
                        return Ok(None);
                    };
                    input.skip(line_len);
                    if size == 0 {
                        self.phase = Phase::Trailers(LineScanner::default());
                        continue;
                    }
                    self.received = self.received.saturating_add(size);
                    if self.received > self.max_body {
                        return Err(HttpError::BodyTooLarge {
                            limit: self.max_body,
                        });
                    }
                    self.phase = Phase::Data(size);
                }
                Phase::Data(left) => {
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    let n = (*left).min(buf.len() as u64) as usize;
                    *left -= n as u64;
                    if *left == 0 {
                        self.phase = Phase::DataEnd;
                    }
                    return Ok(Some(Piece::Data(input.take(n))));
                }
                Phase::DataEnd => {
                    match buf {
                        [] | [b'\r'] => return Ok(None),
                        [b'\r', b'\n', ..] => {}
                        _ => {
                            return Err(HttpError::bad(
                                "HPE_STRICT",
                                "chunk data not followed by CRLF",
                            ))
                        }
                    }
                    input.skip(2);
                    self.phase = Phase::Size;
                }
                Phase::Trailers(scanner) => {
                    if buf.starts_with(b"\r\n") {
                        input.skip(2);
                        self.phase = Phase::Done;
                        return Ok(Some(Piece::End(Vec::new())));
                    }
                    if buf.is_empty() || buf == b"\r" {
                        return Ok(None);
                    }
                    let limits = ScanLimits {
                        max_head: self.max_trailers,
                        max_first_line: None,
                    };
                    let Some(len) = scanner.scan(buf, limits)? else {
                        return Ok(None);
                    };
                    let section = input.take(len);
                    self.phase = Phase::Done;
                    return Ok(Some(Piece::End(parse_trailers(&section)?)));
                }
                Phase::Done => return Ok(None),
            }
        }
    }
}

/// Parses a chunk-size line at the front of `buf`: `Some((bytes including CRLF, size))`.
fn size_line(buf: &[u8]) -> Result<Option<(usize, u64)>, HttpError> {
    let window = &buf[..buf.len().min(MAX_CHUNK_LINE + 2)];
    let Some(lf) = window.iter().position(|&b| b == b'\n') else {
        // Refuse early what no continuation can fix, in byte order.
        check_line(window, false)?;
        if buf.len() > MAX_CHUNK_LINE + 1 {
            return Err(invalid_size("chunk-size line too long"));
        }
        return Ok(None);
    };
    if lf == 0 || buf[lf - 1] != b'\r' {
        check_line(&buf[..lf], false)?;
        return Err(HttpError::bad(
            "HPE_CR_EXPECTED",
            "bare LF after a chunk size",
        ));
    }
    let size = check_line(&buf[..lf - 1], true)?;
    Ok(Some((lf + 1, size)))
}

/// Where the chunk-extension grammar is, after the hex digits of a chunk-size line:
/// `*( ";" token [ "=" ( token / quoted-string ) ] )`, no whitespace (llhttp refuses it too).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ext {
    /// After the size or a complete extension: `;` or the end.
    Between,
    /// After `;`: the first character of a name.
    NameStart,
    Name,
    /// After `=`: a token or a quoted string.
    ValueStart,
    Token,
    Quoted,
    Escape,
}

fn is_qdtext(b: u8) -> bool {
    matches!(b, b'\t' | b' ' | 0x21 | 0x23..=0x5b | 0x5d..=0x7e | 0x80..=0xff)
}

/// Checks a (possibly partial) chunk-size line and returns its size when `complete`. A
/// partial line is accepted when some continuation could make it valid, so the verdict does
/// not depend on where reads split it.
fn check_line(line: &[u8], complete: bool) -> Result<u64, HttpError> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits > 16 {
        return Err(invalid_size("chunk size overflows"));
    }
    let rest = &line[digits..];
    if digits == 0 && (complete || !rest.is_empty()) {
        return Err(invalid_size("chunk size is not a hex number"));
    }
    let bad_ext = || HttpError::bad("HPE_INVALID_CHUNK_SIZE", "invalid chunk extension");
    let mut state = Ext::Between;
    for (i, &b) in rest.iter().enumerate() {
        if b == b'\r' && i + 1 == rest.len() && !complete {
            break; // the line's CR; its LF has not arrived
        }
        state = match (state, b) {
            (Ext::Between | Ext::Name | Ext::Token, b';') => Ext::NameStart,
            (Ext::NameStart | Ext::Name, c) if is_tchar(c) => Ext::Name,
            (Ext::Name, b'=') => Ext::ValueStart,
            (Ext::ValueStart, b'"') => Ext::Quoted,
            (Ext::ValueStart | Ext::Token, c) if is_tchar(c) => Ext::Token,
            (Ext::Quoted, b'"') => Ext::Between,
            (Ext::Quoted, b'\\') => Ext::Escape,
            (Ext::Quoted, c) if is_qdtext(c) => Ext::Quoted,
            (Ext::Escape, c) if c == b'\t' || (c >= 0x20 && c != 0x7f) => Ext::Quoted,
            (Ext::Between, _) if digits > 0 && i == 0 => {
                return Err(invalid_size("garbage after the chunk size"))
            }
            _ => return Err(bad_ext()),
        };
    }
    if !complete {
        return Ok(0);
    }
    if !matches!(state, Ext::Between | Ext::Name | Ext::Token) {
        return Err(bad_ext());
    }
    let hex = std::str::from_utf8(&line[..digits]).map_err(|_| invalid_size("not hex"))?;
    u64::from_str_radix(hex, 16).map_err(|_| invalid_size("chunk size overflows"))
}

/// The fields of a trailer section (scanned already: ends with the empty line).
fn parse_trailers(section: &Bytes) -> Result<HeaderList, HttpError> {
    let mut slots = [httparse::EMPTY_HEADER; 32];
    match httparse::parse_headers(section, &mut slots) {
        Ok(httparse::Status::Complete((n, fields))) if n == section.len() => Ok(fields
            .iter()
            .map(|h| {
                (
                    section.slice_ref(h.name.as_bytes()),
                    section.slice_ref(h.value),
                )
            })
            .collect()),
        Err(httparse::Error::TooManyHeaders) => Err(HttpError::TooManyHeaders { limit: 32 }),
        _ => Err(HttpError::bad(
            "HPE_INVALID_HEADER_TOKEN",
            "invalid trailer field",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(input: &[u8]) -> Result<(Vec<u8>, HeaderList, bool), HttpError> {
        let mut body = ChunkedBody::new(1 << 20, 1024);
        let mut buf = Bytes::copy_from_slice(input);
        let mut data = Vec::new();
        while let Some(p) = body.step(&mut buf)? {
            match p {
                Piece::Data(d) => data.extend_from_slice(&d),
                Piece::End(t) => return Ok((data, t, true)),
            }
        }
        Ok((data, Vec::new(), false))
    }

    #[test]
    fn decodes_chunks_extensions_and_trailers() {
        let (data, trailers, done) =
            decode(b"4;ext=1\r\nWiki\r\n5;a;b=\"c\\\"\"\r\npedia\r\n0\r\nX-T: v\r\n\r\n").unwrap();
        assert_eq!(data, b"Wikipedia");
        assert!(done);
        assert_eq!(trailers.len(), 1);
        assert_eq!(&trailers[0].1[..], b"v");
    }

    #[test]
    fn refuses_malformed_sizes_and_missing_crlf() {
        let bad: [&[u8]; 12] = [
            b"4;\r\n",
            b"4 ;a\r\n",
            b"4;a=\r\n",
            b"4;a=\"b\r\n",
            b"x\r\n",
            b" 4\r\nWiki\r\n",
            b"4\nWiki\r\n",
            b"4\r\nWikiXX",
            b"4x\r\nWiki\r\n",
            b"11111111111111111\r\n",
            b"4\r\nWiki\r\n0\r\nX: a\nb\r\n\r\n",
            b"4\x00\r\n",
        ];
        for input in bad {
            let e = decode(input).unwrap_err();
            assert_eq!(
                e.status(),
                Some(400),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn a_body_past_the_limit_is_413() {
        let mut body = ChunkedBody::new(8, 1024);
        let mut buf = Bytes::from_static(b"9\r\n");
        assert_eq!(body.step(&mut buf).unwrap_err().status(), Some(413));
    }
}
