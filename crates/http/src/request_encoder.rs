//! Encoding requests (Netty's `HttpRequestEncoder`): the request line, the application's
//! header fields, `Host` from the configuration, and the framing fields.
//!
//! Rules:
//! - The method must be a token, the target printable ASCII without SP (node's
//!   `ERR_INVALID_HTTP_TOKEN`, `ERR_UNESCAPED_CHARACTERS`); header names must be tokens and
//!   values must hold no CR, LF or other control character (the server side's checks,
//!   `ERR_INVALID_HTTP_TOKEN`, `ERR_INVALID_CHAR`). A violation fails that write only.
//! - Framing, when the application set neither `Content-Length` nor `Transfer-Encoding`: a
//!   whole request with a body, or a `POST`, `PUT` or `PATCH` with an empty one, gets
//!   `Content-Length`; a streamed HTTP/1.1 request gets `Transfer-Encoding: chunked` (a
//!   streamed HTTP/1.0 one needs a `Content-Length`: there is no other way to end it).
//! - A `Content-Length` the application set must match a whole body, and bounds a streamed
//!   one (checked piece by piece, and at `last` for the shortfall). A `Transfer-Encoding` it
//!   set must end with `chunked` (RFC 9112 §6.1), in HTTP/1.1, without `Content-Length`; the
//!   body is then chunk-encoded.
//! - Small bodies are copied behind the head (one write); larger ones are written as they are
//!   (no copy) after it.

use bytes::{BufMut, Bytes, BytesMut};

use netloop_transport::FileRegion;

use crate::client_message::HttpClientRequest;
use crate::encoder::COPY_LIMIT;
use crate::encoder::{encode_piece, put_decimal, put_field, BodyMode};
use crate::error::HttpError;
use crate::fields::{field_fault, is_tchar};
use crate::message::{HttpContent, Version};
use crate::response_head::SentRequest;

/// An encoded request.
#[derive(Debug)]
pub(crate) struct EncodedRequest {
    /// The bytes to write: the head (with a small body) and possibly the body after it.
    pub parts: Vec<Bytes>,
    /// A file region written after the parts (a request whose body is a file).
    pub file: Option<FileRegion>,
    /// What the response decoder needs to know (`id` is the caller's to set).
    pub sent: SentRequest,
    /// For a streamed request: how its pieces are written.
    pub body: Option<BodyMode>,
}

fn invalid(code: &'static str, reason: impl Into<String>) -> HttpError {
    HttpError::invalid_request(code, reason)
}

/// The fields of the request the codec needs to know about.
#[derive(Debug, Default)]
struct Known {
    length: Option<u64>,
    chunked: bool,
    host: bool,
    upgrade: bool,
}

fn check_fields(req: &HttpClientRequest) -> Result<Known, HttpError> {
    let mut known = Known::default();
    let mut transfer_encoding = false;
    for (name, value) in &req.headers {
        if let Some((code, reason)) = field_fault(name, value) {
            return Err(invalid(code, reason));
        }
        let is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
        if is("content-length") {
            let text = std::str::from_utf8(value).ok().map(str::trim);
            let n = text
                .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|t| t.parse::<u64>().ok())
                .filter(|_| known.length.is_none());
            known.length =
                Some(n.ok_or_else(|| invalid("ERR_HTTP_INVALID_HEADER_VALUE", "Content-Length"))?);
        } else if is("transfer-encoding") {
            transfer_encoding = true;
            let last = value
                .split(|&b| b == b',')
                .map(<[u8]>::trim_ascii)
                .rfind(|c| !c.is_empty());
            known.chunked = last.is_some_and(|c| c.eq_ignore_ascii_case(b"chunked"));
        } else if is("host") {
            known.host = true;
        } else if is("upgrade") {
            known.upgrade = true;
        }
    }
    if transfer_encoding {
        let reason = if req.version == Version::Http10 {
            "Transfer-Encoding in an HTTP/1.0 request"
        } else if known.length.is_some() {
            "Content-Length together with Transfer-Encoding"
        } else if !known.chunked {
            "the last transfer coding of a request must be chunked"
        } else {
            ""
        };
        if !reason.is_empty() {
            return Err(invalid("ERR_HTTP_INVALID_HEADER_VALUE", reason));
        }
    }
    Ok(known)
}

/// Encodes `req`, adding `host` as `Host` when the request has none.
pub(crate) fn encode_request(
    req: HttpClientRequest,
    host: Option<&Bytes>,
) -> Result<EncodedRequest, HttpError> {
    if req.method.is_empty() || !req.method.iter().all(|&b| is_tchar(b)) {
        return Err(invalid(
            "ERR_INVALID_HTTP_TOKEN",
            "the method must be a token",
        ));
    }
    if req.target.is_empty() || !req.target.iter().all(|&b| (0x21..0x7f).contains(&b)) {
        return Err(invalid(
            "ERR_UNESCAPED_CHARACTERS",
            "the request target must be printable ASCII without spaces",
        ));
    }
    let known = check_fields(&req)?;
    if req.file.is_some() && (req.streaming || !req.body.is_empty() || known.chunked) {
        return Err(invalid(
            "ERR_HTTP_FILE_BODY",
            "a request with a file region has no other body, is not streamed and not chunked",
        ));
    }
    let method = &req.method[..];
    let sent = SentRequest {
        id: 0,
        head: method == b"HEAD",
        connect: method == b"CONNECT",
        upgrade: known.upgrade,
    };
    // How the body is framed, and the field the codec adds for it.
    let (mode, add_length) = if req.streaming {
        match known.length {
            Some(n) => (BodyMode::Length(n), None),
            None if known.chunked || req.version == Version::Http11 => (BodyMode::Chunked, None),
            None => {
                return Err(invalid(
                    "ERR_HTTP_INVALID_HEADER_VALUE",
                    "a streamed HTTP/1.0 request needs a Content-Length",
                ))
            }
        }
    } else {
        let len = req
            .file
            .as_ref()
            .map_or(req.body.len() as u64, FileRegion::remaining);
        match known.length {
            Some(n) if n != len => {
                return Err(invalid(
                    "ERR_HTTP_CONTENT_LENGTH_MISMATCH",
                    format!("Content-Length {n} for a body of {len}"),
                ))
            }
            Some(n) => (BodyMode::Length(n), None),
            None if known.chunked => (BodyMode::Chunked, None),
            None => {
                let needs = len > 0 || matches!(method, b"POST" | b"PUT" | b"PATCH");
                (BodyMode::Length(len), needs.then_some(len))
            }
        }
    };
    let add_chunked = req.streaming && mode == BodyMode::Chunked && !known.chunked;
    let fields: usize = req.headers.iter().map(|(n, v)| n.len() + v.len() + 4).sum();
    let host = host.filter(|_| !known.host);
    let mut out = BytesMut::with_capacity(
        64 + req.method.len() + req.target.len() + fields + host.map_or(0, |h| h.len() + 8),
    );
    out.put_slice(&req.method);
    out.put_u8(b' ');
    out.put_slice(&req.target);
    out.put_u8(b' ');
    out.put_slice(req.version.as_str().as_bytes());
    out.put_slice(b"\r\n");
    if let Some(host) = host {
        // RFC 9112 §3.2: Host comes first.
        put_field(&mut out, b"Host", host);
    }
    for (name, value) in &req.headers {
        put_field(&mut out, name, value);
    }
    if let Some(n) = add_length {
        out.put_slice(b"Content-Length: ");
        put_decimal(&mut out, n);
        out.put_slice(b"\r\n");
    }
    if add_chunked {
        put_field(&mut out, b"Transfer-Encoding", b"chunked");
    }
    out.put_slice(b"\r\n");
    if req.streaming {
        return Ok(EncodedRequest {
            parts: vec![out.freeze()],
            file: None,
            sent,
            body: Some(mode),
        });
    }
    if let Some(file) = req.file {
        return Ok(EncodedRequest {
            parts: vec![out.freeze()],
            file: (file.remaining() > 0).then_some(file),
            sent,
            body: None,
        });
    }
    let body = if mode == BodyMode::Chunked {
        let mut chunked = BodyMode::Chunked;
        encode_piece(&mut chunked, req.body, true, &Vec::new())?
    } else if req.body.is_empty() {
        Vec::new()
    } else {
        vec![req.body]
    };
    let body_len: usize = body.iter().map(Bytes::len).sum();
    let mut parts = Vec::with_capacity(1 + body.len());
    if body_len <= COPY_LIMIT {
        for piece in &body {
            out.put_slice(piece);
        }
        parts.push(out.freeze());
    } else {
        parts.push(out.freeze());
        parts.extend(body);
    }
    Ok(EncodedRequest {
        parts,
        file: None,
        sent,
        body: None,
    })
}

/// Encodes one piece of a streamed request body; `mode` tracks what is left.
pub(crate) fn encode_content(
    mode: &mut BodyMode,
    content: HttpContent,
) -> Result<Vec<Bytes>, HttpError> {
    encode_piece(mode, content.data, content.last, &content.trailers).map_err(HttpError::for_client)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(req: HttpClientRequest) -> Result<String, &'static str> {
        let enc = encode_request(req, Some(&Bytes::from_static(b"h"))).map_err(|e| e.code())?;
        let all: Vec<u8> = enc.parts.iter().flat_map(|p| p.to_vec()).collect();
        Ok(String::from_utf8(all).unwrap())
    }

    #[test]
    fn framing_fields_are_added_when_the_request_has_none() {
        let get = HttpClientRequest::new("GET", "/");
        assert_eq!(text(get).unwrap(), "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
        let post = HttpClientRequest::new("POST", "/").header("host", "x");
        assert_eq!(
            text(post).unwrap(),
            "POST / HTTP/1.1\r\nhost: x\r\nContent-Length: 0\r\n\r\n"
        );
        let chunked = HttpClientRequest::new("POST", "/")
            .header("Transfer-Encoding", "chunked")
            .body("abc");
        assert!(text(chunked)
            .unwrap()
            .ends_with("\r\n\r\n3\r\nabc\r\n0\r\n\r\n"));
    }

    #[test]
    fn bad_requests_are_refused_with_node_codes() {
        let cases = [
            (HttpClientRequest::new("G T", "/"), "ERR_INVALID_HTTP_TOKEN"),
            (
                HttpClientRequest::new("GET", "/a b"),
                "ERR_UNESCAPED_CHARACTERS",
            ),
            (
                HttpClientRequest::new("GET", "/").header("X", "a\r\nb"),
                "ERR_INVALID_CHAR",
            ),
            (
                HttpClientRequest::new("PUT", "/")
                    .header("Content-Length", "3")
                    .body("ab"),
                "ERR_HTTP_CONTENT_LENGTH_MISMATCH",
            ),
            (
                HttpClientRequest::new("PUT", "/")
                    .header("Transfer-Encoding", "gzip")
                    .body("ab"),
                "ERR_HTTP_INVALID_HEADER_VALUE",
            ),
            (
                HttpClientRequest::new("PUT", "/")
                    .version(Version::Http10)
                    .streamed(),
                "ERR_HTTP_INVALID_HEADER_VALUE",
            ),
        ];
        for (req, code) in cases {
            assert_eq!(text(req.clone()), Err(code), "{req:?}");
        }
    }

    #[test]
    fn a_file_body_is_framed_by_its_length_and_sent_after_the_head() {
        use std::io::Write;
        let path = std::env::temp_dir().join(format!("netloop-req-file-{}", std::process::id()));
        std::fs::File::create(&path)
            .unwrap()
            .write_all(&[7u8; 500])
            .unwrap();
        let region = || FileRegion::open(&path, 100, Some(300)).unwrap();
        let put = HttpClientRequest::new("PUT", "/f").header("host", "h");
        let mut req = put.clone();
        req.file = Some(region());
        let enc = encode_request(req, None).unwrap();
        assert_eq!(enc.parts.len(), 1);
        assert_eq!(
            &enc.parts[0][..],
            b"PUT /f HTTP/1.1\r\nhost: h\r\nContent-Length: 300\r\n\r\n"
        );
        assert_eq!(enc.file.map(|f| f.count()), Some(300));
        let refused = [
            (
                put.clone().header("content-length", "299"),
                "ERR_HTTP_CONTENT_LENGTH_MISMATCH",
            ),
            (
                put.clone().header("transfer-encoding", "chunked"),
                "ERR_HTTP_FILE_BODY",
            ),
            (put.clone().body("x"), "ERR_HTTP_FILE_BODY"),
        ];
        for (mut req, code) in refused {
            req.file = Some(region());
            assert_eq!(
                encode_request(req, None).map(|_| ()).unwrap_err().code(),
                code
            );
        }
        std::fs::remove_file(path).unwrap();
    }
}
