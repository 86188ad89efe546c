//! Encoding responses (Netty's `HttpResponseEncoder`): the status line, the application's
//! header fields, and the fields the codec owns: `Content-Length` or `Transfer-Encoding:
//! chunked`, `Date`, `Connection`.
//!
//! Rules:
//! - Header names must be tokens and values must hold no CR, LF or other control character
//!   (no response splitting); a violation fails that write (`ERR_INVALID_HTTP_TOKEN`,
//!   `ERR_INVALID_CHAR`, node's codes). `Transfer-Encoding` is the codec's to set.
//! - A whole response gets `Content-Length: body.len()`; a `Content-Length` the application
//!   set must match, except for `HEAD` requests and 304 (the length of what a GET would get).
//! - No body for `HEAD`, 1xx, 204 and 304; no `Content-Length` added for 1xx and 204.
//! - A streamed response with a `Content-Length` sends its pieces as they are; without one it
//!   is chunked for HTTP/1.1 and delimited by closing the connection for HTTP/1.0.
//! - Small bodies are copied behind the head (one write); larger ones are written as they are
//!   (no copy) after it.

use bytes::{BufMut, Bytes, BytesMut};

use netloop_transport::FileRegion;

use crate::error::HttpError;
use crate::fields::{field_fault, is_field_text};
use crate::message::{HeaderList, HttpResponse, Version};
use crate::status::reason_phrase;

/// Bodies up to this size are copied into the head's buffer.
pub(crate) const COPY_LIMIT: usize = 2048;

/// How the rest of a streamed body is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyMode {
    /// Nothing is written (HEAD, 204, 304, 1xx).
    Discard,
    /// As is, this many bytes left (`Content-Length`).
    Length(u64),
    /// Chunked transfer coding.
    Chunked,
    /// As is, until the connection closes (HTTP/1.0 without a length).
    UntilClose,
}

/// What the codec knows of the request a response answers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Answering<'a> {
    pub head: bool,
    pub version: Version,
    /// The connection may stay open after this response (request and server agree).
    pub keep_alive: bool,
    pub date: Option<&'a [u8]>,
    /// The request asks to leave HTTP ([`crate::HttpRequest::upgrade`]).
    pub upgrade: bool,
    /// A `CONNECT` request.
    pub connect: bool,
}

impl Answering<'_> {
    /// True when a response with `status` hands the connection over to another protocol:
    /// `101 Switching Protocols` to an upgrade request, a 2xx to `CONNECT` (RFC 9110 §7.8,
    /// §9.3.6). Such a response has no body and no framing fields, keeps the application's
    /// `Connection` fields, and the codec passes bytes through after it.
    pub(crate) fn switches(&self, status: u16) -> bool {
        switches(self.upgrade, self.connect, status)
    }
}

/// See [`Answering::switches`] (`upgrade`, `connect`: what the request asked).
pub(crate) fn switches(upgrade: bool, connect: bool, status: u16) -> bool {
    (upgrade && status == 101) || (connect && (200..300).contains(&status))
}

/// An encoded response head (and body when whole).
#[derive(Debug)]
pub(crate) struct Encoded {
    /// The head (with the body behind it when that is copied).
    pub head: Bytes,
    /// The body as a part of its own (not copied behind the head), if any.
    pub body: Option<Bytes>,
    /// A file region sent after the parts (the body of a response with a file).
    pub file: Option<FileRegion>,
    /// The connection closes after this response.
    pub close: bool,
    /// For a streamed response: how its pieces are written.
    pub mode: Option<BodyMode>,
}

/// The framing-relevant fields the application set.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Owned {
    pub length: Option<u64>,
    pub close: bool,
    pub keep_alive: bool,
    pub date: bool,
}

/// Checks the application's fields; returns what the codec needs to know of them.
pub(crate) fn check_fields(headers: &HeaderList) -> Result<Owned, HttpError> {
    let mut owned = Owned::default();
    for (name, value) in headers {
        if let Some((code, reason)) = field_fault(name, value) {
            return Err(HttpError::invalid_response(code, reason));
        }
        let is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
        if is("content-length") {
            let text = std::str::from_utf8(value).ok().map(str::trim);
            let n = text
                .and_then(|t| t.parse::<u64>().ok())
                .filter(|_| owned.length.is_none());
            owned.length = Some(n.ok_or_else(|| {
                HttpError::invalid_response("ERR_HTTP_INVALID_HEADER_VALUE", "Content-Length")
            })?);
        } else if is("transfer-encoding") {
            return Err(HttpError::invalid_response(
                "ERR_HTTP_INVALID_HEADER_VALUE",
                "Transfer-Encoding is set by the codec (stream the body instead)",
            ));
        } else if is("connection") {
            for t in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                owned.close |= t.eq_ignore_ascii_case(b"close");
                owned.keep_alive |= t.eq_ignore_ascii_case(b"keep-alive");
            }
        } else if is("date") {
            owned.date = true;
        }
    }
    Ok(owned)
}

/// Checks what can be checked of `resp` before it is queued (a write that fails here fails
/// at once, with nothing written).
pub(crate) fn check(resp: &HttpResponse, head: bool) -> Result<(), HttpError> {
    let owned = check_head(resp)?;
    if resp.file.is_some() && (resp.streaming || !resp.body.is_empty()) {
        return Err(HttpError::invalid_response(
            "ERR_HTTP_FILE_BODY",
            "a response with a file region has no other body and is not streamed",
        ));
    }
    check_length(&owned, resp.status, resp.streaming, resp.body_len(), head)
}

/// Checks the status, reason phrase and fields of `resp`; what the codec needs of its fields.
pub(crate) fn check_head(resp: &HttpResponse) -> Result<Owned, HttpError> {
    if !(100..=999).contains(&resp.status) {
        return Err(HttpError::invalid_response(
            "ERR_HTTP_INVALID_STATUS_CODE",
            format!("status {}", resp.status),
        ));
    }
    if let Some(reason) = &resp.reason {
        if !reason.iter().all(|&b| is_field_text(b)) {
            return Err(HttpError::invalid_response(
                "ERR_INVALID_CHAR",
                "reason phrase",
            ));
        }
    }
    check_fields(&resp.headers)
}

/// A `Content-Length` the application set must match a whole body (not checked for HEAD
/// requests, 1xx, 204 and 304).
pub(crate) fn check_length(
    owned: &Owned,
    status: u16,
    streaming: bool,
    body_len: usize,
    head: bool,
) -> Result<(), HttpError> {
    let no_body = head || matches!(status, 100..=199 | 204 | 304);
    if let (Some(n), false, false) = (owned.length, streaming, no_body) {
        if n != body_len as u64 {
            return Err(HttpError::invalid_response(
                "ERR_HTTP_CONTENT_LENGTH_MISMATCH",
                format!("Content-Length {n} for a body of {body_len}"),
            ));
        }
    }
    Ok(())
}

/// True for interim (1xx) responses, after which the final one is still expected.
pub(crate) fn is_interim(status: u16) -> bool {
    (100..200).contains(&status)
}

/// How a response is framed: decided from its status, the fields the application set and the
/// request it answers (shared by [`encode`] and frozen responses).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub interim: bool,
    /// The response hands the connection over ([`Answering::switches`]).
    pub switching: bool,
    pub no_body: bool,
    pub mode: BodyMode,
    pub close: bool,
    /// The body is copied behind the head.
    pub inline_body: bool,
    /// The application's `Connection` fields are left out (replaced by `Connection: close`).
    pub drop_connection: bool,
}

impl Plan {
    pub(crate) fn new(
        status: u16,
        owned: &Owned,
        streaming: bool,
        body_len: usize,
        req: &Answering<'_>,
    ) -> Plan {
        let interim = is_interim(status);
        let switching = req.switches(status);
        let no_body = req.head || interim || switching || status == 204 || status == 304;
        let mode = match (streaming, owned.length) {
            _ if no_body => BodyMode::Discard,
            (_, Some(n)) => BodyMode::Length(n),
            (true, None) if req.version == Version::Http11 => BodyMode::Chunked,
            (true, None) => BodyMode::UntilClose,
            (false, None) => BodyMode::Length(body_len as u64),
        };
        let close = !interim
            && !switching
            && (!req.keep_alive || owned.close || mode == BodyMode::UntilClose);
        Plan {
            interim,
            switching,
            no_body,
            mode,
            close,
            inline_body: !streaming && !no_body && body_len <= COPY_LIMIT,
            drop_connection: (close || interim) && !owned.close && !switching,
        }
    }

    /// Writes the fields the codec owns (`Date`, `Content-Length` or `Transfer-Encoding`,
    /// `Connection`) and the empty line ending the head.
    pub(crate) fn put_tail(
        &self,
        out: &mut BytesMut,
        status: u16,
        owned: &Owned,
        streaming: bool,
        body_len: usize,
        req: &Answering<'_>,
    ) {
        if self.switching && !self.interim {
            // A 2xx to CONNECT: a Date, and nothing that frames a body (there is none).
            if let (Some(date), false) = (req.date, owned.date) {
                put_field(out, b"Date", date);
            }
        } else if !self.interim {
            if let (Some(date), false) = (req.date, owned.date) {
                put_field(out, b"Date", date);
            }
            let add_length = owned.length.is_none() && !streaming && !matches!(status, 204 | 304);
            if add_length {
                out.put_slice(b"Content-Length: ");
                put_decimal(out, body_len as u64);
                out.put_slice(b"\r\n");
            }
            let chunked_head = req.head && streaming && owned.length.is_none();
            if (self.mode == BodyMode::Chunked || chunked_head) && req.version == Version::Http11 {
                put_field(out, b"Transfer-Encoding", b"chunked");
            }
            if self.close && !owned.close {
                put_field(out, b"Connection", b"close");
            } else if !self.close && req.version == Version::Http10 && !owned.keep_alive {
                put_field(out, b"Connection", b"keep-alive");
            }
        }
        out.put_slice(b"\r\n");
    }
}

/// `HTTP/1.1 <status> <reason>\r\n`.
pub(crate) fn put_status_line(out: &mut BytesMut, status: u16, reason: Option<&[u8]>) {
    out.put_slice(b"HTTP/1.1 ");
    put_decimal(out, u64::from(status));
    out.put_u8(b' ');
    out.put_slice(reason.unwrap_or(reason_phrase(status).as_bytes()));
    out.put_slice(b"\r\n");
}

/// Encodes `resp` (checked by [`check`]) answering `req`.
pub(crate) fn encode(resp: HttpResponse, req: Answering<'_>) -> Result<Encoded, HttpError> {
    let owned = check_fields(&resp.headers)?;
    let status = resp.status;
    let full_len = resp.body_len();
    let mut plan = Plan::new(status, &owned, resp.streaming, full_len, &req);
    // A file is never copied behind the head.
    plan.inline_body &= resp.file.is_none();
    let reason_len = resp.reason.as_ref().map_or(32, |r| r.len());
    let fields: usize = resp
        .headers
        .iter()
        .map(|(n, v)| n.len() + v.len() + 4)
        .sum();
    let body_len = if plan.inline_body { resp.body.len() } else { 0 };
    let mut out = BytesMut::with_capacity(128 + reason_len + fields + body_len);
    put_status_line(&mut out, status, resp.reason.as_deref());
    for (name, value) in &resp.headers {
        if plan.drop_connection && name.eq_ignore_ascii_case(b"connection") {
            continue; // replaced by `Connection: close`
        }
        put_field(&mut out, name, value);
    }
    plan.put_tail(&mut out, status, &owned, resp.streaming, full_len, &req);
    let mut body = None;
    if plan.inline_body {
        out.put_slice(&resp.body);
    } else if !plan.no_body && !resp.streaming && !resp.body.is_empty() {
        body = Some(resp.body);
    }
    let file = resp.file.filter(|f| !plan.no_body && f.remaining() > 0);
    Ok(Encoded {
        head: out.freeze(),
        body,
        file,
        close: plan.close,
        mode: resp.streaming.then_some(plan.mode),
    })
}

/// The answer the codec writes itself for a refused request.
pub(crate) fn encode_refusal(status: u16, date: Option<&[u8]>) -> Bytes {
    let mut out = BytesMut::with_capacity(128);
    out.put_slice(b"HTTP/1.1 ");
    put_decimal(&mut out, u64::from(status));
    out.put_u8(b' ');
    out.put_slice(reason_phrase(status).as_bytes());
    out.put_slice(b"\r\n");
    if let Some(date) = date {
        put_field(&mut out, b"Date", date);
    }
    out.put_slice(b"Content-Length: 0\r\nConnection: close\r\n\r\n");
    out.freeze()
}

/// `100 Continue`.
pub(crate) const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Encodes one piece of a streamed body; `mode` tracks what is left. Returns the bytes to
/// write, and whether the connection must close after them (a broken length).
pub(crate) fn encode_piece(
    mode: &mut BodyMode,
    data: Bytes,
    last: bool,
    trailers: &HeaderList,
) -> Result<Vec<Bytes>, HttpError> {
    let mismatch =
        |what: String| HttpError::invalid_response("ERR_HTTP_CONTENT_LENGTH_MISMATCH", what);
    match mode {
        BodyMode::Discard => Ok(Vec::new()),
        BodyMode::UntilClose => Ok(if data.is_empty() {
            Vec::new()
        } else {
            vec![data]
        }),
        BodyMode::Length(left) => {
            if data.len() as u64 > *left {
                return Err(mismatch(format!(
                    "{} bytes more than Content-Length",
                    data.len() as u64 - *left
                )));
            }
            *left -= data.len() as u64;
            if last && *left > 0 {
                return Err(mismatch(format!(
                    "body ended {left} bytes short of Content-Length"
                )));
            }
            Ok(if data.is_empty() {
                Vec::new()
            } else {
                vec![data]
            })
        }
        BodyMode::Chunked => {
            check_fields(trailers)?;
            let mut parts = Vec::with_capacity(3);
            if !data.is_empty() {
                let mut size = BytesMut::with_capacity(20 + data.len().min(COPY_LIMIT));
                put_hex(&mut size, data.len() as u64);
                size.put_slice(b"\r\n");
                if data.len() <= COPY_LIMIT {
                    size.put_slice(&data);
                    size.put_slice(b"\r\n");
                    parts.push(size.freeze());
                } else {
                    parts.push(size.freeze());
                    parts.push(data);
                    parts.push(Bytes::from_static(b"\r\n"));
                }
            }
            if last {
                let mut end = BytesMut::with_capacity(5 + trailers.len() * 32);
                end.put_slice(b"0\r\n");
                for (n, v) in trailers {
                    put_field(&mut end, n, v);
                }
                end.put_slice(b"\r\n");
                parts.push(end.freeze());
            }
            Ok(parts)
        }
    }
}

pub(crate) fn put_field(out: &mut BytesMut, name: &[u8], value: &[u8]) {
    out.put_slice(name);
    out.put_slice(b": ");
    out.put_slice(value);
    out.put_slice(b"\r\n");
}

pub(crate) fn put_decimal(out: &mut BytesMut, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.put_slice(&digits[i..]);
}

fn put_hex(out: &mut BytesMut, n: u64) {
    let width = (64 - n.leading_zeros()).div_ceil(4).max(1);
    for shift in (0..width).rev() {
        out.put_u8(b"0123456789abcdef"[((n >> (shift * 4)) & 0xf) as usize]);
    }
}
