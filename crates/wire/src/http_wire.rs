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
            let frozen = FROZEN.with(|t| t.borrow().get(id));
            let frozen = frozen.ok_or_else(|| format!("no frozen HTTP response {id}"))?;
            Ok(Message::user(match request_id {
                Some(rid) => frozen.for_request(rid),
                None => frozen,
            }))
        }
        CONTENT => {
            let request_id = r.id()?;
            let flags = r.u8()?;
            let data = r.body(big)?;
            let mut c = if flags & HttpContentFlag::Last as u8 != 0 {
                HttpContent::last(data)
            } else {
                HttpContent::new(data)
            };
            if flags & HttpContentFlag::Trailers as u8 != 0 {
                c.trailers = read_fields(&mut r)?;
            }
            c.request_id = request_id;
            Ok(Message::user(c))
        }
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
