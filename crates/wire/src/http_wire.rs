//! HTTP messages across the JS boundary in a compact form both sides walk without parsing
//! text (src/http.ts reads and writes the same layout; all integers little-endian):
//!
//! ```text
//! Messages start with a kind byte (`protocol::HttpIn`: 0 request, 1 body piece;
//! `protocol::HttpOut`: 1 response, 2 body chunk).
//! request  (native → JS): id:f64 flags:u8 version:u8 method:bytes target:bytes body:bytes n:u32 (name:bytes value:bytes)*n
//!                         t:u32 (name value)*t   (t: the trailers of a whole chunked body)
//!                         flags: HttpRequestFlag bits; the fixed part's offsets and the
//!                         fields' order are declared once (HttpRequestAt, HttpRequestField in
//!                         protocol/formats.rs) and read from there by both sides
//! content  (native → JS): id:f64 flags:u8 data:bytes [t:u32 (name value)*t]
//!                         flags: HttpContentFlag; the trailers only with its Trailers bit
//!                         Both also JS → native: a request or body piece a JS handler
//!                         fires on to a native handler (`WireKind::ReadHttp`), read by
//!                         `request_from_js`/`content_from_js` (body: as below)
//! response (JS → native): 1:u8 id:f64 status:u16 flags:u8 reason:bytes n:u32 (name value)*n body:bytes
//!                         id < 0: the oldest unanswered request; flags: HttpResponseFlag
//! content  (JS → native): 2:u8 id:f64 flags:u8 data:bytes [t:u32 (name value)*t]
//!                         flags: HttpContentFlag (trailers as native → JS)
//! frozen   (JS → native): 3:u8 id:f64 frozen:u32                 a response of `httpFreeze`
//! bytes := len:u32 data[len]
//! body  := bytes | 0xFFFF_FFFF:u32 index:u32   (JS → native: a big chunk of the op batch, taken
//!                                              without a copy; for bodies of 8 KiB and more)
//! ```
//!
//! An `HttpClientCodec`'s messages (a response read, kind 2; a request written, kind 4) have
//! their layouts in http_client_wire.rs; body pieces use the content layouts above both ways.
//!
//! A request's strings are views of the delivery's arena in JS (no copy per header); headers
//! become a JS object only when read. A written response's strings and body are views of the
//! op's bytes (no copy each).
//!
//! Frozen responses (`HttpResponse.freeze()` in JS): `httpFreeze` checks and encodes a
//! response once ([`netloop_http::FrozenResponse`]) and files it in a table of the calling
//! thread under a small id; writes name the id (13 bytes in the op arena, nothing decoded or
//! checked again); `httpRelease` (JS's FinalizationRegistry) frees the id. Ground rule: the
//! table is thread-local: a JS object, its `httpFreeze` call and the loop that applies its
//! writes are on one JS thread. An op naming an id is applied before the JS job that made it
//! ends (at the end of the delivery, or in a microtask), so before any finalization callback
//! can free the id.

use std::cell::RefCell;

use bytes::Bytes;
use netloop_http::{
    FrozenResponse, HeaderList, Headers, HttpContent, HttpRequest, HttpResponse, Version,
};
use netloop_transport::Message;

use crate::big::BigChunks;
use crate::error::WireError;
use crate::slots::Slots;

use crate::protocol::{
    HttpContentFlag, HttpIn, HttpOut, HttpRequestAt, HttpRequestField, HttpRequestFlag,
    HttpResponseFlag,
};

pub fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// Appends `r` in the request layout ([`HttpRequestAt`], [`HttpRequestField`]), after its
/// kind byte.
pub fn put_request(out: &mut Vec<u8>, r: &HttpRequest) {
    out.push(HttpIn::Request as u8);
    let bit = |on: bool, flag: HttpRequestFlag| if on { flag as u8 } else { 0 };
    let flags = bit(r.version == Version::Http11, HttpRequestFlag::Http11)
        | bit(r.keep_alive, HttpRequestFlag::KeepAlive)
        | bit(r.streaming, HttpRequestFlag::Streaming)
        | bit(r.expect_continue, HttpRequestFlag::ExpectContinue)
        | bit(r.upgrade, HttpRequestFlag::Upgrade);
    let at = out.len();
    out.resize(at + HttpRequestAt::Fields as usize, 0);
    let fixed = &mut out[at..];
    let id = HttpRequestAt::Id as usize;
    fixed[id..id + 8].copy_from_slice(&(r.id as f64).to_le_bytes());
    fixed[HttpRequestAt::Flags as usize] = flags;
    fixed[HttpRequestAt::Version as usize] = match r.version {
        Version::Http10 => 10,
        Version::Http11 => 11,
    };
    for field in REQUEST_FIELDS {
        match field {
            HttpRequestField::Method => bytes(out, &r.method),
            HttpRequestField::Target => bytes(out, &r.target),
            HttpRequestField::Body => bytes(out, &r.body),
            HttpRequestField::Headers => put_headers(out, &r.headers),
            HttpRequestField::Trailers => put_fields(out, &r.trailers),
        }
    }
}

/// [`HttpRequestField`]'s variants in their order (a unit test checks it is theirs).
const REQUEST_FIELDS: [HttpRequestField; 5] = [
    HttpRequestField::Method,
    HttpRequestField::Target,
    HttpRequestField::Body,
    HttpRequestField::Headers,
    HttpRequestField::Trailers,
];

/// Appends the header fields read, as `n:u32 (name:bytes value:bytes)*n`.
pub fn put_headers(out: &mut Vec<u8>, headers: &Headers) {
    out.extend_from_slice(&(headers.len() as u32).to_le_bytes());
    for (name, value) in headers.iter() {
        bytes(out, name);
        bytes(out, value);
    }
}

/// Appends `fields` as `n:u32 (name:bytes value:bytes)*n`.
pub fn put_fields(out: &mut Vec<u8>, fields: &HeaderList) {
    out.extend_from_slice(&(fields.len() as u32).to_le_bytes());
    for (name, value) in fields {
        bytes(out, name);
        bytes(out, value);
    }
}

/// Appends `c` in the content layout, after a 1 byte (the kind: body piece).
pub fn put_content(out: &mut Vec<u8>, c: &HttpContent) {
    out.push(HttpIn::Content as u8);
    out.extend_from_slice(&(c.request_id.map_or(-1.0, |i| i as f64)).to_le_bytes());
    let trailers = c.last && !c.trailers.is_empty();
    let bit = |on: bool, flag: HttpContentFlag| if on { flag as u8 } else { 0 };
    out.push(bit(c.last, HttpContentFlag::Last) | bit(trailers, HttpContentFlag::Trailers));
    bytes(out, &c.data);
    if trailers {
        put_fields(out, &c.trailers);
    }
}

pub struct Reader<'a> {
    pub data: &'a Bytes,
    pub at: usize,
}

impl Reader<'_> {
    fn end(&self, n: usize) -> Result<usize, String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len());
        end.ok_or_else(|| "truncated HTTP message from JS".to_string())
    }
    pub fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.end(n)?;
        let s = &self.data[self.at..end];
        self.at = end;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<usize, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
    pub fn f64(&mut self) -> Result<f64, String> {
        let b = self.take(8)?;
        Ok(f64::from_le_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    }
    pub fn id(&mut self) -> Result<Option<u64>, String> {
        let b = self.take(8)?;
        let v = f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        Ok((v >= 0.0).then_some(v as u64))
    }
    /// The next `body`: bytes in the layout, or a big chunk of the batch (no copy either way).
    pub fn body<C: crate::big::Chunk>(&mut self, big: &mut BigChunks<C>) -> Result<Bytes, String> {
        if self.data.len() >= self.at + 4 && self.data[self.at..self.at + 4] == [0xff; 4] {
            self.at += 4;
            let i = self.u32()?;
            return Ok(big.take(i).0);
        }
        self.bytes()
    }
    /// A view of the next `len:u32 data` (no copy).
    pub fn bytes(&mut self) -> Result<Bytes, String> {
        let n = self.u32()?;
        let end = self.end(n)?;
        let b = self.data.slice(self.at..end);
        self.at = end;
        Ok(b)
    }
}

thread_local! {
    /// The frozen responses of this thread by id (`None`: a free id, reused first).
    static FROZEN: RefCell<Slots<FrozenResponse>> = const { RefCell::new(Slots::new()) };
}

/// The response in the layout above: checked and encoded once, filed under the id returned.
/// Fails with what writing it would fail with (`ERR_INVALID_HTTP_TOKEN`, ...).
pub fn freeze(layout: &[u8]) -> Result<u32, WireError> {
    let data = Bytes::copy_from_slice(layout);
    let frozen = match read_response(&mut Reader { data: &data, at: 1 }, &mut BigChunks::none()) {
        Ok(resp) => resp
            .freeze()
            .map_err(|e| WireError::new(e.code(), e.to_string())),
        Err(e) => Err(WireError::new("ERR_HTTP_RESPONSE", e)),
    };
    let frozen = frozen?;
    Ok(FROZEN.with(|t| t.borrow_mut().insert(frozen)))
}

/// Frees the id of a frozen response (its JS object was collected). Writes already made
/// keep their own reference.
pub fn release_frozen(id: u32) {
    FROZEN.with(|t| t.borrow_mut().remove(id as usize));
}

/// `n:u32 (name:bytes value:bytes)*n`, views of `r`'s bytes.
pub fn read_fields(r: &mut Reader<'_>) -> Result<HeaderList, String> {
    let n = r.u32()?;
    let mut fields = Vec::with_capacity(n.min(256));
    for _ in 0..n {
        fields.push((r.bytes()?, r.bytes()?));
    }
    Ok(fields)
}

fn read_response<C: crate::big::Chunk>(
    r: &mut Reader<'_>,
    big: &mut BigChunks<C>,
) -> Result<HttpResponse, String> {
    let request_id = r.id()?;
    let s = r.take(2)?;
    let status = u16::from_le_bytes([s[0], s[1]]);
    let flags = r.u8()?;
    let streaming = flags & HttpResponseFlag::Streaming as u8 != 0;
    // Read first: from here on the descriptor is the region's, whatever follows.
    let file = if flags & HttpResponseFlag::File as u8 != 0 {
        Some(crate::file_wire::read_region(r)?)
    } else {
        None
    };
    let reason = r.bytes()?;
    let headers = read_fields(r)?;
    let body = r.body(big)?;
    Ok(HttpResponse {
        request_id,
        status,
        reason: (!reason.is_empty()).then_some(reason),
        headers,
        body,
        file,
        streaming,
    })
}

/// A body piece after its kind byte (the same layout either way: `put_content`'s).
fn read_content<C: crate::big::Chunk>(
    r: &mut Reader<'_>,
    big: &mut BigChunks<C>,
) -> Result<HttpContent, String> {
    let request_id = r.id()?;
    let flags = r.u8()?;
    let data = r.body(big)?;
    let mut c = if flags & HttpContentFlag::Last as u8 != 0 {
        HttpContent::last(data)
    } else {
        HttpContent::new(data)
    };
    if flags & HttpContentFlag::Trailers as u8 != 0 {
        c.trailers = read_fields(r)?;
    }
    c.request_id = request_id;
    Ok(c)
}

/// The largest request id a JS number holds exactly (2^53 - 1).
const MAX_SAFE_ID: f64 = 9_007_199_254_740_991.0;

/// Reads the kind byte, checked to be `kind`.
fn expect_kind(r: &mut Reader<'_>, kind: HttpIn) -> Result<(), String> {
    match r.u8()? {
        k if k == kind as u8 => Ok(()),
        other => Err(format!("HTTP message kind {other} from JS, not {kind:?}")),
    }
}

/// The request JS passes on to a native handler, read from `put_request`'s layout (kind byte
/// first): every field as `put_request` wrote it. Strings, headers and body are views of
/// `data` (a body lent as a big chunk is taken from `big`). Fails on a layout cut short, a
/// kind, id or version it cannot be, or bytes left over.
pub fn request_from_js<C: crate::big::Chunk>(
    data: &Bytes,
    big: &mut BigChunks<C>,
) -> Result<HttpRequest, String> {
    let mut r = Reader { data, at: 0 };
    expect_kind(&mut r, HttpIn::Request)?;
    let fixed = r.take(HttpRequestAt::Fields as usize)?;
    let id = HttpRequestAt::Id as usize;
    let mut id_bytes = [0u8; 8];
    id_bytes.copy_from_slice(&fixed[id..id + 8]);
    let id = f64::from_le_bytes(id_bytes);
    if !(id >= 0.0 && id.fract() == 0.0 && id <= MAX_SAFE_ID) {
        return Err(format!("HTTP request id {id} from JS"));
    }
    let flags = fixed[HttpRequestAt::Flags as usize];
    let version = match fixed[HttpRequestAt::Version as usize] {
        10 => Version::Http10,
        11 => Version::Http11,
        other => return Err(format!("HTTP version {other} from JS")),
    };
    let flag = |f: HttpRequestFlag| flags & f as u8 != 0;
    let mut req = HttpRequest {
        id: id as u64,
        method: Bytes::new(),
        target: Bytes::new(),
        version,
        headers: Headers::default(),
        body: Bytes::new(),
        streaming: flag(HttpRequestFlag::Streaming),
        trailers: Vec::new(),
        keep_alive: flag(HttpRequestFlag::KeepAlive),
        expect_continue: flag(HttpRequestFlag::ExpectContinue),
        upgrade: flag(HttpRequestFlag::Upgrade),
    };
    for field in REQUEST_FIELDS {
        match field {
            HttpRequestField::Method => req.method = r.bytes()?,
            HttpRequestField::Target => req.target = r.bytes()?,
            HttpRequestField::Body => req.body = r.body(big)?,
            HttpRequestField::Headers => req.headers = read_headers(&mut r)?,
            HttpRequestField::Trailers => req.trailers = read_fields(&mut r)?,
        }
    }
    finished(&r)?;
    Ok(req)
}

/// `n:u32 (name:bytes value:bytes)*n` as [`Headers`] whose spans point into the layout (no
/// copy).
fn read_headers(r: &mut Reader<'_>) -> Result<Headers, String> {
    let n = r.u32()?;
    let mut spans = Vec::with_capacity(n.min(256));
    let span = |r: &mut Reader<'_>| -> Result<[u32; 2], String> {
        let len = r.u32()?;
        let from = r.at;
        r.take(len)?;
        let to = |v: usize| u32::try_from(v).map_err(|_| "HTTP headers past 4 GiB".to_string());
        Ok([to(from)?, to(r.at)?])
    };
    for _ in 0..n {
        let [a, b] = span(r)?;
        let [c, d] = span(r)?;
        spans.push([a, b, c, d]);
    }
    Headers::from_spans(r.data.clone(), spans)
        .ok_or_else(|| "HTTP header spans out of range".into())
}

/// The body piece JS passes on to a native handler, read from `put_content`'s layout (kind
/// byte first). Fails as [`request_from_js`] does.
pub fn content_from_js<C: crate::big::Chunk>(
    data: &Bytes,
    big: &mut BigChunks<C>,
) -> Result<HttpContent, String> {
    let mut r = Reader { data, at: 0 };
    expect_kind(&mut r, HttpIn::Content)?;
    let c = read_content(&mut r, big)?;
    finished(&r)?;
    Ok(c)
}

fn finished(r: &Reader<'_>) -> Result<(), String> {
    match r.data.len() - r.at {
        0 => Ok(()),
        n => Err(format!("{n} bytes after an HTTP message from JS")),
    }
}

/// The request or body piece a JS handler fires on (`WireKind::ReadHttp` from JS), as the
/// message the server codec would have fired.
pub fn inbound_from_js<C: crate::big::Chunk>(
    data: &Bytes,
    big: &mut BigChunks<C>,
) -> Result<Message, String> {
    match data.first() {
        Some(&k) if k == HttpIn::Request as u8 => request_from_js(data, big).map(Message::user),
        Some(&k) if k == HttpIn::Content as u8 => content_from_js(data, big).map(Message::user),
        Some(other) => Err(format!("unknown inbound HTTP message kind {other} from JS")),
        None => Err("empty HTTP message from JS".into()),
    }
}

/// A frozen response's write (`3:u8 id:f64 frozen:u32`) read where JS wrote it (the op
/// arena), as [`from_js`] reads it, without making `Bytes` of its 13 bytes first: `None` for
/// any other layout (then `from_js` reads it).
pub fn frozen_from_js(data: &[u8]) -> Option<Result<Message, String>> {
    match data {
        [tag, rest @ ..] if *tag == HttpOut::Frozen as u8 => Some(match rest {
            [i @ .., f0, f1, f2, f3] if i.len() == 8 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(i);
                let v = f64::from_le_bytes(b);
                let request_id = (v >= 0.0).then_some(v as u64);
                let id = u32::from_le_bytes([*f0, *f1, *f2, *f3]) as usize;
                frozen_message(request_id, id)
            }
            _ if rest.len() >= 12 => {
                // (bytes after the op, ignored as `from_js` ignores them)
                return frozen_from_js(&data[..13]);
            }
            _ => Err("truncated HTTP message from JS".to_string()),
        }),
        _ => None,
    }
}

/// The write of frozen response `id` (for request `request_id`; `None`: the front one).
fn frozen_message(request_id: Option<u64>, id: usize) -> Result<Message, String> {
    let frozen = FROZEN.with(|t| {
        let t = t.borrow();
        t.get_ref(id).map(|f| match request_id {
            Some(rid) => f.for_request(rid),
            None => f.clone(),
        })
    });
    let frozen = frozen.ok_or_else(|| format!("no frozen HTTP response {id}"))?;
    Ok(Message::User(netloop_http::boxed_frozen(frozen)))
}

/// The response or content JS wrote, as the message the codec takes.
pub fn from_js<C: crate::big::Chunk>(
    data: &Bytes,
    big: &mut BigChunks<C>,
) -> Result<Message, String> {
    const RESPONSE: u8 = HttpOut::Response as u8;
    const CONTENT: u8 = HttpOut::Content as u8;
    const FROZEN_RESPONSE: u8 = HttpOut::Frozen as u8;
    const REQUEST: u8 = HttpOut::Request as u8;
    let mut r = Reader { data, at: 0 };
    match r.u8()? {
        RESPONSE => read_response(&mut r, big).map(Message::user),
        FROZEN_RESPONSE => {
            let request_id = r.id()?;
            let id = r.u32()?;
            frozen_message(request_id, id)
        }
        CONTENT => read_content(&mut r, big).map(Message::user),
        REQUEST => crate::http_client_wire::read_request(&mut r, big).map(Message::user),
        other => Err(format!("unknown HTTP message tag {other} from JS")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_fields_are_written_in_their_declared_order() {
        for (i, f) in REQUEST_FIELDS.iter().enumerate() {
            assert_eq!(*f as usize, i);
        }
    }
}
