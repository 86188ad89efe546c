//! Parsing one complete response head: httparse for the grammar (after the byte checks of
//! `scan.rs`), then how the body is framed (RFC 9112 §6.3), in this order:
//! 1. A response to `HEAD`, or a 1xx, 204 or 304: no body (`Content-Length` and
//!    `Transfer-Encoding` there are not looked at).
//! 2. A 2xx to `CONNECT`: the connection becomes a tunnel.
//! 3. `101`: the protocol switches if the request carried `Upgrade`; else the response is bad.
//! 4. `Transfer-Encoding` with `Content-Length` too: refused (RFC 9112 §6.3 says to handle it
//!    as an error; llhttp and the server side do). `Transfer-Encoding` whose last coding is
//!    `chunked`: chunked. Empty list elements or codings that are not tokens are refused
//!    (parsers that disagree on framing are how messages get smuggled).
//! 5. Any other `Transfer-Encoding`: the body lasts until the connection closes.
//! 6. `Content-Length`: that many bytes. One field holding one number (no lists, no equal
//!    duplicates: llhttp's and the server side's rule); anything else is refused.
//! 7. Otherwise: the body lasts until the connection closes.

use std::mem::MaybeUninit;

use bytes::Bytes;

use crate::client_config::HttpClientConfig;
use crate::error::HttpError;
use crate::fields::{content_length, list, offset, parse_with_slots, transfer_codings};
use crate::message::{Headers, Spans, Version};

/// How the body of a response is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResponseFraming {
    /// No body.
    None,
    /// `Content-Length` bytes (may be 0).
    Length(u64),
    /// Chunked transfer coding.
    Chunked,
    /// Until the connection closes.
    UntilClose,
    /// The connection switches protocols after the head.
    Switch,
}

/// What the request a response answers asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SentRequest {
    /// The request's id (see [`HttpClientResponse::id`](crate::HttpClientResponse)).
    pub id: u64,
    /// A `HEAD` request (its response has no body).
    pub head: bool,
    /// A `CONNECT` request (a 2xx response opens a tunnel).
    pub connect: bool,
    /// The request carried an `Upgrade` header (a `101` response switches protocols).
    pub upgrade: bool,
}

/// A parsed, validated response head.
#[derive(Debug)]
pub(crate) struct ResponseHead {
    pub status: u16,
    pub reason: Bytes,
    pub version: Version,
    pub headers: Headers,
    pub framing: ResponseFraming,
    pub keep_alive: bool,
}

fn bad(code: &'static str, reason: &'static str) -> HttpError {
    HttpError::BadResponse { code, reason }
}

/// Parses `head` (exactly one head, its empty line included) answering `req`.
pub(crate) fn parse_response_head(
    head: Bytes,
    req: SentRequest,
    cfg: &HttpClientConfig,
) -> Result<ResponseHead, HttpError> {
    let parsed = parse_with_slots(cfg.max_header_count, |slots| parse_into(&head, slots));
    let (status, version, spans) = parsed.map_err(|e| grammar_error(e, cfg))?;
    if status < 100 {
        return Err(bad("HPE_INVALID_STATUS", "status code below 100"));
    }
    // `HTTP/1.x SSS` then SP and the reason, or the end of the line (httparse checked it).
    let line_end = head.iter().position(|&b| b == b'\r').unwrap_or(12);
    let reason = if line_end > 13 {
        head.slice(13..line_end)
    } else {
        Bytes::new()
    };
    let headers = Headers::new(head, spans);
    let (framing, keep_alive) = interpret(&headers, status, version, req)?;
    Ok(ResponseHead {
        status,
        reason,
        version,
        headers,
        framing,
        keep_alive,
    })
}

type Parsed = (u16, Version, Spans);

fn parse_into<'b>(
    head: &'b [u8],
    slots: &mut [MaybeUninit<httparse::Header<'b>>],
) -> Result<Parsed, httparse::Error> {
    let mut res = httparse::Response::new(&mut []);
    let config = httparse::ParserConfig::default();
    match config.parse_response_with_uninit_headers(&mut res, head, slots)? {
        httparse::Status::Complete(n) if n == head.len() => {}
        // The scanner found the end of the head; httparse must agree.
        _ => return Err(httparse::Error::NewLine),
    }
    let (Some(code), Some(v)) = (res.code, res.version) else {
        return Err(httparse::Error::Status);
    };
    let spans = res
        .headers
        .iter()
        .map(|h| {
            let (name, value) = (h.name.as_bytes(), h.value);
            let (n, v) = (offset(head, name), offset(head, value));
            [n, n + name.len() as u32, v, v + value.len() as u32]
        })
        .collect();
    let version = if v == 0 {
        Version::Http10
    } else {
        Version::Http11
    };
    Ok((code, version, spans))
}

/// Names an httparse failure the way llhttp would.
fn grammar_error(e: httparse::Error, cfg: &HttpClientConfig) -> HttpError {
    use httparse::Error as E;
    match e {
        E::TooManyHeaders => HttpError::TooManyHeaders {
            limit: cfg.max_header_count,
        },
        E::Version => bad("HPE_INVALID_VERSION", "invalid HTTP version"),
        E::HeaderName => bad("HPE_INVALID_HEADER_TOKEN", "invalid header name"),
        E::HeaderValue => bad("HPE_INVALID_HEADER_TOKEN", "invalid header value"),
        E::NewLine => bad("HPE_LF_EXPECTED", "invalid line end"),
        E::Token | E::Status => bad("HPE_INVALID_STATUS", "invalid status line"),
    }
}

/// What the fields say about framing and the connection.
#[derive(Default)]
struct Fields {
    length: Option<u64>,
    transfer_encoding: bool,
    chunked_last: bool,
    close: bool,
    keep: bool,
}

fn read_fields(headers: &Headers) -> Result<Fields, HttpError> {
    let mut f = Fields::default();
    for (name, value) in headers.iter() {
        if !matches!(name.len(), 10 | 14 | 17) {
            continue; // none of the fields below
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            // One field with one number, as the server side and llhttp require (RFC 9110
            // §8.6 lets a recipient accept equal duplicates; we don't).
            if f.length.is_some() {
                return Err(bad(
                    "HPE_UNEXPECTED_CONTENT_LENGTH",
                    "duplicate Content-Length",
                ));
            }
            f.length = Some(parse_length(value)?);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            f.transfer_encoding = true;
            let codings = transfer_codings(value)
                .map_err(|reason| bad("HPE_INVALID_TRANSFER_ENCODING", reason))?;
            for coding in codings {
                f.chunked_last = coding.eq_ignore_ascii_case(b"chunked");
            }
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in list(value) {
                f.close |= token.eq_ignore_ascii_case(b"close");
                f.keep |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        }
    }
    Ok(f)
}

fn interpret(
    headers: &Headers,
    status: u16,
    version: Version,
    req: SentRequest,
) -> Result<(ResponseFraming, bool), HttpError> {
    let no_body = req.head || (100..200).contains(&status) && status != 101;
    let switch = (req.connect && (200..300).contains(&status)) || status == 101;
    let fields = if no_body || switch || matches!(status, 204 | 304) {
        connection_only(headers)
    } else {
        read_fields(headers)?
    };
    let mut keep_alive = match version {
        Version::Http11 => !fields.close,
        Version::Http10 => fields.keep && !fields.close,
    };
    let framing = if no_body || matches!(status, 204 | 304) {
        ResponseFraming::None
    } else if switch {
        if status == 101 && !req.upgrade {
            return Err(bad(
                "HPE_INVALID_STATUS",
                "101 Switching Protocols to a request without Upgrade",
            ));
        }
        keep_alive = false;
        ResponseFraming::Switch
    } else if fields.transfer_encoding {
        if fields.length.is_some() {
            // RFC 9112 §6.3: "ought to be handled as an error" (response splitting); llhttp
            // and the server side refuse it too.
            return Err(bad(
                "HPE_UNEXPECTED_CONTENT_LENGTH",
                "Content-Length with Transfer-Encoding",
            ));
        }
        if fields.chunked_last {
            // In HTTP/1.0 the framing is faulty (RFC 9112 §6.1): decode it as chunked, then
            // close.
            if version == Version::Http10 {
                keep_alive = false;
            }
            ResponseFraming::Chunked
        } else {
            keep_alive = false;
            ResponseFraming::UntilClose
        }
    } else if let Some(n) = fields.length {
        ResponseFraming::Length(n)
    } else {
        keep_alive = false;
        ResponseFraming::UntilClose
    };
    Ok((framing, keep_alive))
}

/// Only the `Connection` field, for a response without a body.
fn connection_only(headers: &Headers) -> Fields {
    let mut f = Fields::default();
    for value in headers.get_all("connection") {
        for token in list(value) {
            f.close |= token.eq_ignore_ascii_case(b"close");
            f.keep |= token.eq_ignore_ascii_case(b"keep-alive");
        }
    }
    f
}

fn parse_length(value: &[u8]) -> Result<u64, HttpError> {
    content_length(value).ok_or_else(|| bad("HPE_INVALID_CONTENT_LENGTH", "invalid Content-Length"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_for(s: &str, req: SentRequest) -> Result<ResponseHead, HttpError> {
        parse_response_head(
            Bytes::copy_from_slice(s.as_bytes()),
            req,
            &HttpClientConfig::default(),
        )
    }

    fn parse(s: &str) -> Result<ResponseHead, HttpError> {
        parse_for(s, SentRequest::default())
    }

    #[test]
    fn a_simple_head_is_parsed_into_views() {
        let h = parse("HTTP/1.1 200 OK fine\r\nContent-Length: 3\r\nX: y\r\n\r\n").unwrap();
        assert_eq!((h.status, &h.reason[..]), (200, &b"OK fine"[..]));
        assert_eq!(h.framing, ResponseFraming::Length(3));
        assert!(h.keep_alive);
        assert_eq!(h.headers.get("x"), Some(&b"y"[..]));
        let h = parse("HTTP/1.0 404\r\n\r\n").unwrap();
        assert_eq!((h.status, h.reason.len()), (404, 0));
        assert_eq!(h.framing, ResponseFraming::UntilClose);
        assert!(!h.keep_alive);
    }

    #[test]
    fn framing_follows_rfc_9112_section_6_3_in_order() {
        let f = |s: &str, req: SentRequest| parse_for(s, req).map(|h| (h.framing, h.keep_alive));
        let get = SentRequest::default();
        let head = SentRequest { head: true, ..get };
        let connect = SentRequest {
            connect: true,
            ..get
        };
        let cl = "Content-Length: 5\r\n";
        assert_eq!(
            f(&format!("HTTP/1.1 200 OK\r\n{cl}\r\n"), head),
            Ok((ResponseFraming::None, true))
        );
        for status in ["100", "204", "304"] {
            assert_eq!(
                f(&format!("HTTP/1.1 {status} X\r\n{cl}\r\n"), get)
                    .unwrap()
                    .0,
                ResponseFraming::None
            );
        }
        assert_eq!(
            f("HTTP/1.1 200 OK\r\n\r\n", connect),
            Ok((ResponseFraming::Switch, false))
        );
        assert_eq!(
            f("HTTP/1.1 101 S\r\n\r\n", get).unwrap_err().code(),
            "HPE_INVALID_STATUS"
        );
        assert_eq!(
            f(
                &format!("HTTP/1.1 200 OK\r\n{cl}Transfer-Encoding: chunked\r\n\r\n"),
                get
            )
            .unwrap_err()
            .code(),
            "HPE_UNEXPECTED_CONTENT_LENGTH"
        );
        assert_eq!(
            f("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", get),
            Ok((ResponseFraming::Chunked, false))
        );
        assert_eq!(
            f(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
                get
            ),
            Ok((ResponseFraming::UntilClose, false))
        );
        assert_eq!(
            f("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", get),
            Ok((ResponseFraming::Length(5), true))
        );
        for (fields, code) in [
            (
                "Content-Length: 5\r\nContent-Length: 6",
                "HPE_UNEXPECTED_CONTENT_LENGTH",
            ),
            (
                "Content-Length: 5\r\nContent-Length: 5",
                "HPE_UNEXPECTED_CONTENT_LENGTH",
            ),
            ("Content-Length: 5, 5", "HPE_INVALID_CONTENT_LENGTH"),
            ("Content-Length: +5", "HPE_INVALID_CONTENT_LENGTH"),
            ("Content-Length: 5 5", "HPE_INVALID_CONTENT_LENGTH"),
        ] {
            let e = f(&format!("HTTP/1.1 200 OK\r\n{fields}\r\n\r\n"), get).unwrap_err();
            assert_eq!(e.code(), code, "{fields}");
        }
    }
}
