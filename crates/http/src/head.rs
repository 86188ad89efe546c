//! Parsing one complete request head: httparse for the grammar, then the rules httparse leaves
//! to its caller: the target's length, `Host`, and how the body is framed (RFC 9112 §6), with
//! the request-smuggling defences.
//!
//! Framing rules (each refusal closes the connection after the answer):
//! - `Transfer-Encoding` in an HTTP/1.0 request: 400 (RFC 9112 §6.1 says its framing is
//!   faulty). Together with `Content-Length`: 400. Its last coding must be `chunked` (else
//!   400); any other coding before it: 501 (only chunked is decoded); `chunked` twice: 400.
//! - `Content-Length`: one field of digits only. Two fields, even equal (llhttp refuses
//!   them too), a list, a sign or whitespace inside: 400. Above `max_body_size`: 413.
//! - `Expect: 100-continue` is honoured in HTTP/1.1 (and ignored in 1.0, RFC 9110 §10.1.1);
//!   any other expectation: 417.

use std::mem::MaybeUninit;

use bytes::Bytes;

use crate::config::HttpServerConfig;
use crate::error::HttpError;
use crate::fields::{content_length, is_tchar, list, offset, parse_with_slots, transfer_codings};
use crate::message::{Headers, Spans, Version};

/// How the body of a request is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No body.
    None,
    /// `Content-Length` bytes (more than zero).
    Length(u64),
    /// Chunked transfer coding.
    Chunked,
}

/// A parsed, validated head.
#[derive(Debug)]
pub(crate) struct RequestHead {
    pub method: Bytes,
    pub target: Bytes,
    pub version: Version,
    pub headers: Headers,
    pub framing: Framing,
    pub keep_alive: bool,
    pub expect_continue: bool,
    /// `Connection: upgrade` with a non-empty `Upgrade` field (`CONNECT` is the decoder's).
    pub upgrade: bool,
}

/// Parses `head` (exactly one head, its empty line included).
pub(crate) fn parse_head(head: Bytes, cfg: &HttpServerConfig) -> Result<RequestHead, HttpError> {
    let parsed = parse_with_slots(cfg.max_header_count, |slots| parse_into(&head, slots));
    let (method, target, version, spans) = parsed.map_err(|e| grammar_error(e, &head, cfg))?;
    finish_head(head, (method, target, version, spans), cfg)
}

/// A head [`crate::plain_head::parse_plain`] split (`head`: exactly its bytes): the checks
/// after the grammar, as for one httparse parsed.
pub(crate) fn plain_head(
    head: Bytes,
    plain: crate::plain_head::PlainHead,
    cfg: &HttpServerConfig,
) -> Result<RequestHead, HttpError> {
    let parts = (plain.method, plain.target, plain.version, plain.spans);
    finish_head(head, parts, cfg)
}

/// The rules after the grammar: the target's length and bytes, then what the fields mean.
fn finish_head(
    head: Bytes,
    parsed: Parsed,
    cfg: &HttpServerConfig,
) -> Result<RequestHead, HttpError> {
    let (method, target, version, spans) = parsed;
    if (target.1 - target.0) as usize > cfg.max_uri_length {
        return Err(HttpError::UriTooLong {
            limit: cfg.max_uri_length,
        });
    }
    if head[target.0 as usize..target.1 as usize]
        .iter()
        .any(|&b| b >= 0x80)
    {
        // RFC 3986: non-ASCII must be percent-encoded (httparse lets it through, llhttp not).
        return Err(HttpError::bad(
            "HPE_INVALID_URL",
            "non-ASCII byte in the request target",
        ));
    }
    // The common method tokens and the target `/` as static bytes, and the head itself moved
    // into the fields: each view of the read's bytes is an atomic count taken and given back
    // on the read's shared buffer (two to four a request less).
    let method = shared_or_static(&head, method);
    let target = shared_or_static(&head, target);
    let headers = Headers::new(head, spans);
    let meaning = interpret(&headers, version, cfg)?;
    Ok(RequestHead {
        method,
        target,
        version,
        headers,
        framing: meaning.framing,
        keep_alive: meaning.keep_alive,
        expect_continue: meaning.expect_continue,
        upgrade: meaning.upgrade,
    })
}

/// The bytes of `span` in `head`: static ones when they are a common method or the target
/// `/`, else a view of `head`.
fn shared_or_static(head: &Bytes, span: Span) -> Bytes {
    // (Element patterns: compared in place, where slice literals would each call memcmp.)
    let common: &'static [u8] = match &head[span.0 as usize..span.1 as usize] {
        [b'/'] => b"/",
        [b'G', b'E', b'T'] => b"GET",
        [b'P', b'O', b'S', b'T'] => b"POST",
        [b'P', b'U', b'T'] => b"PUT",
        [b'H', b'E', b'A', b'D'] => b"HEAD",
        [b'D', b'E', b'L', b'E', b'T', b'E'] => b"DELETE",
        [b'O', b'P', b'T', b'I', b'O', b'N', b'S'] => b"OPTIONS",
        [b'P', b'A', b'T', b'C', b'H'] => b"PATCH",
        _ => return head.slice(span.0 as usize..span.1 as usize),
    };
    Bytes::from_static(common)
}

pub(crate) type Span = (u32, u32);
pub(crate) type Parsed = (Span, Span, Version, Spans);

pub(crate) fn parse_into<'b>(
    head: &'b [u8],
    slots: &mut [MaybeUninit<httparse::Header<'b>>],
) -> Result<Parsed, httparse::Error> {
    let mut req = httparse::Request::new(&mut []);
    match req.parse_with_uninit_headers(head, slots)? {
        httparse::Status::Complete(n) if n == head.len() => {}
        // The scanner found the end of the head; httparse must agree.
        _ => return Err(httparse::Error::NewLine),
    }
    let (Some(method), Some(path), Some(v)) = (req.method, req.path, req.version) else {
        return Err(httparse::Error::Token);
    };
    let span = |s: &[u8]| {
        let from = offset(head, s);
        (from, from + s.len() as u32)
    };
    let spans = req
        .headers
        .iter()
        .map(|h| {
            let (n, v) = (span(h.name.as_bytes()), span(h.value));
            [n.0, n.1, v.0, v.1]
        })
        .collect();
    let version = if v == 0 {
        Version::Http10
    } else {
        Version::Http11
    };
    Ok((
        span(method.as_bytes()),
        span(path.as_bytes()),
        version,
        spans,
    ))
}

/// Names an httparse failure the way llhttp would.
fn grammar_error(e: httparse::Error, head: &[u8], cfg: &HttpServerConfig) -> HttpError {
    use httparse::Error as E;
    match e {
        E::TooManyHeaders => HttpError::TooManyHeaders {
            limit: cfg.max_header_count,
        },
        E::Version => HttpError::bad("HPE_INVALID_VERSION", "invalid HTTP version"),
        E::HeaderName => HttpError::bad("HPE_INVALID_HEADER_TOKEN", "invalid header name"),
        E::HeaderValue => HttpError::bad("HPE_INVALID_HEADER_TOKEN", "invalid header value"),
        E::NewLine => HttpError::bad("HPE_LF_EXPECTED", "invalid line end"),
        E::Token | E::Status => {
            let method_ok = head
                .iter()
                .position(|&b| b == b' ')
                .is_some_and(|sp| sp > 0 && head[..sp].iter().all(|&b| is_tchar(b)));
            if method_ok {
                HttpError::bad("HPE_INVALID_URL", "invalid request target")
            } else {
                HttpError::bad("HPE_INVALID_METHOD", "invalid method")
            }
        }
    }
}

struct Meaning {
    framing: Framing,
    keep_alive: bool,
    expect_continue: bool,
    upgrade: bool,
}

fn interpret(
    headers: &Headers,
    version: Version,
    cfg: &HttpServerConfig,
) -> Result<Meaning, HttpError> {
    let mut content_length: Option<u64> = None;
    let mut te_fields = 0usize;
    let mut chunked_last = false;
    let mut chunked_count = 0usize;
    let mut other_coding = false;
    let mut hosts = 0usize;
    let (mut close, mut keep) = (false, false);
    let mut expect_continue = false;
    let (mut upgrade_token, mut upgrade_field) = (false, false);
    for (name, value) in headers.iter() {
        if !matches!(name.len(), 4 | 6 | 7 | 10 | 14 | 17) {
            continue; // none of the fields below
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            if content_length.is_some() {
                return Err(HttpError::bad(
                    "HPE_UNEXPECTED_CONTENT_LENGTH",
                    "duplicate Content-Length",
                ));
            }
            content_length = Some(parse_length(value)?);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            te_fields += 1;
            let codings = transfer_codings(value)
                .map_err(|reason| HttpError::bad("HPE_INVALID_TRANSFER_ENCODING", reason))?;
            for coding in codings {
                let is_chunked = coding.eq_ignore_ascii_case(b"chunked");
                chunked_count += usize::from(is_chunked);
                other_coding |= !is_chunked;
                chunked_last = is_chunked;
            }
        } else if name.eq_ignore_ascii_case(b"host") {
            hosts += 1;
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in list(value) {
                close |= token.eq_ignore_ascii_case(b"close");
                keep |= token.eq_ignore_ascii_case(b"keep-alive");
                upgrade_token |= token.eq_ignore_ascii_case(b"upgrade");
            }
        } else if name.eq_ignore_ascii_case(b"upgrade") {
            upgrade_field |= !value.is_empty();
        } else if name.eq_ignore_ascii_case(b"expect") && version == Version::Http11 {
            if value.eq_ignore_ascii_case(b"100-continue") {
                expect_continue = true;
            } else {
                return Err(HttpError::ExpectationFailed);
            }
        }
    }
    if hosts > 1 || (hosts == 0 && cfg.require_host && version == Version::Http11) {
        return Err(HttpError::bad(
            "ERR_HTTP_INVALID_HOST",
            "a request needs exactly one Host header",
        ));
    }
    let framing = if te_fields > 0 {
        if version == Version::Http10 {
            return Err(HttpError::bad(
                "HPE_INVALID_TRANSFER_ENCODING",
                "Transfer-Encoding in an HTTP/1.0 request",
            ));
        }
        if content_length.is_some() {
            return Err(HttpError::bad(
                "HPE_UNEXPECTED_CONTENT_LENGTH",
                "Content-Length with Transfer-Encoding",
            ));
        }
        if !chunked_last || chunked_count > 1 {
            return Err(HttpError::bad(
                "HPE_INVALID_TRANSFER_ENCODING",
                "chunked must be the last transfer coding, once",
            ));
        }
        if other_coding {
            return Err(HttpError::UnsupportedTransferCoding);
        }
        Framing::Chunked
    } else {
        match content_length {
            None | Some(0) => Framing::None,
            Some(n) if n > cfg.max_body_size => {
                return Err(HttpError::BodyTooLarge {
                    limit: cfg.max_body_size,
                })
            }
            Some(n) => Framing::Length(n),
        }
    };
    let keep_alive = match version {
        Version::Http11 => !close,
        Version::Http10 => keep && !close,
    };
    Ok(Meaning {
        framing,
        keep_alive,
        expect_continue: expect_continue && framing != Framing::None,
        // RFC 9110 §7.8: an Upgrade field means something only with the `upgrade` option of
        // Connection (llhttp asks the same).
        upgrade: upgrade_token && upgrade_field,
    })
}

fn parse_length(value: &[u8]) -> Result<u64, HttpError> {
    content_length(value)
        .ok_or_else(|| HttpError::bad("HPE_INVALID_CONTENT_LENGTH", "invalid Content-Length"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<RequestHead, HttpError> {
        parse_head(
            Bytes::copy_from_slice(s.as_bytes()),
            &HttpServerConfig::default(),
        )
    }

    #[test]
    fn a_simple_head_is_parsed_into_views() {
        let h = parse("GET /a?b HTTP/1.1\r\nHost: x\r\nX-Y:  z \r\n\r\n").unwrap();
        assert_eq!((&h.method[..], &h.target[..]), (&b"GET"[..], &b"/a?b"[..]));
        assert_eq!(h.version, Version::Http11);
        assert_eq!(h.headers.get("x-y"), Some(&b"z"[..]));
        assert_eq!(h.framing, Framing::None);
        assert!(h.keep_alive);
    }

    #[test]
    fn keep_alive_follows_the_version_and_connection() {
        let ka = |s: &str| parse(s).unwrap().keep_alive;
        assert!(!ka(
            "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        ));
        assert!(!ka("GET / HTTP/1.0\r\n\r\n"));
        assert!(ka("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        assert!(!ka(
            "GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade, close\r\n\r\n"
        ));
    }

    #[test]
    fn framing_and_smuggling_rules() {
        let code = |s: &str| parse(s).map(|h| h.framing).map_err(|e| e.code());
        let host = "Host: x\r\n";
        assert_eq!(
            code(&format!(
                "POST / HTTP/1.1\r\n{host}Content-Length: 5\r\n\r\n"
            )),
            Ok(Framing::Length(5))
        );
        assert_eq!(
            code(&format!(
                "POST / HTTP/1.1\r\n{host}Transfer-Encoding: chunked\r\n\r\n"
            )),
            Ok(Framing::Chunked)
        );
        let refused = [
            ("Content-Length: 5\r\nTransfer-Encoding: chunked", 400),
            ("Content-Length: 5\r\nContent-Length: 5", 400),
            ("Content-Length: 5, 5", 400),
            ("Content-Length: +5", 400),
            ("Content-Length: 99999999999999999999", 400),
            ("Transfer-Encoding: chunked, gzip", 400),
            ("Transfer-Encoding: gzip, chunked", 501),
            (
                "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
                400,
            ),
            ("Transfer-Encoding: identity", 400),
            ("Content-Length: 17000000", 413),
            ("Expect: bogus", 417),
            ("Host: y", 400),
        ];
        for (fields, status) in refused {
            let req = format!("POST / HTTP/1.1\r\n{host}{fields}\r\n\r\n");
            let e = parse(&req).unwrap_err();
            assert_eq!(e.status(), Some(status), "{fields}: {e}");
        }
        let e = parse("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap_err();
        assert_eq!(e.status(), Some(400));
        assert_eq!(
            parse("GET / HTTP/1.1\r\n\r\n").unwrap_err().status(),
            Some(400)
        );
    }

    #[test]
    fn too_many_headers_is_431_beyond_the_stack_array_too() {
        let mut req = String::from("GET / HTTP/1.1\r\nHost: x\r\n");
        for i in 0..100 {
            req.push_str(&format!("X-{i}: v\r\n"));
        }
        req.push_str("\r\n");
        let e = parse(&req).unwrap_err();
        assert_eq!(
            (e.status(), e.code()),
            (Some(431), "ERR_HTTP_TOO_MANY_HEADERS")
        );
        let mut ok = String::from("GET / HTTP/1.1\r\nHost: x\r\n");
        for i in 0..60 {
            ok.push_str(&format!("X-{i}: v\r\n"));
        }
        ok.push_str("\r\n");
        assert_eq!(parse(&ok).unwrap().headers.len(), 61);
    }
}
