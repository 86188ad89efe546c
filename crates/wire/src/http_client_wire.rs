//! An `HttpClientCodec`'s messages across the JS boundary (src/http-wire.ts reads and writes
//! the same layouts; integers little-endian, `bytes := len:u32 data[len]`):
//!
//! ```text
//! response (native → JS): 2:u8 id:f64 flags:u8 status:u16 reason:bytes body:bytes
//!                         n:u32 (name:bytes value:bytes)*n  t:u32 (name:bytes value:bytes)*t
//!                         flags: HttpClientResponseFlag bits; t: the trailers of a whole
//!                         chunked body
//! request  (JS → native): 4:u8 flags:u8 method:bytes target:bytes n:u32 (name value)*n body:bytes
//!                         flags: HttpClientRequestFlag bits
//! ```
//!
//! Body pieces use http_wire.rs's content layouts: a streamed response's pieces carry its id,
//! and the id of a piece JS writes after a streamed request is not read.

use bytes::Bytes;
use netloop_http::{HttpClientRequest, HttpClientResponse, Version};

use crate::http_wire::{bytes, put_fields, put_headers, read_fields, Reader};
use crate::protocol::{HttpClientRequestFlag, HttpClientResponseFlag, HttpIn};

/// Appends `r` in the response layout, after its kind byte.
pub fn put_response(out: &mut Vec<u8>, r: &HttpClientResponse) {
    out.push(HttpIn::Response as u8);
    out.extend_from_slice(&(r.id as f64).to_le_bytes());
    let bit = |on: bool, flag: HttpClientResponseFlag| if on { flag as u8 } else { 0 };
    out.push(
        bit(r.version == Version::Http11, HttpClientResponseFlag::Http11)
            | bit(r.keep_alive, HttpClientResponseFlag::KeepAlive)
            | bit(r.streaming, HttpClientResponseFlag::Streaming)
            | bit(r.upgraded, HttpClientResponseFlag::Upgraded),
    );
    out.extend_from_slice(&r.status.to_le_bytes());
    bytes(out, &r.reason);
    bytes(out, &r.body);
    put_headers(out, &r.headers);
    put_fields(out, &r.trailers);
}

/// The request in the layout above (its kind byte already read); strings and body are views
/// of `r`'s bytes.
pub fn read_request<C: crate::big::Chunk>(
    r: &mut Reader<'_>,
    big: &mut crate::big::BigChunks<C>,
) -> Result<HttpClientRequest, String> {
    let flags = r.u8()?;
    // Read first: from here on the descriptor is the region's, whatever follows.
    let file = if flags & HttpClientRequestFlag::File as u8 != 0 {
        Some(crate::file_wire::read_region(r)?)
    } else {
        None
    };
    let method = r.bytes()?;
    let target = r.bytes()?;
    let headers = read_fields(r)?;
    let body: Bytes = r.body(big)?;
    let mut req = HttpClientRequest::new(method, target).body(body);
    req.file = file;
    req.headers = headers;
    req.streaming = flags & HttpClientRequestFlag::Streaming as u8 != 0;
    if flags & HttpClientRequestFlag::Http10 as u8 != 0 {
        req.version = Version::Http10;
    }
    Ok(req)
}
