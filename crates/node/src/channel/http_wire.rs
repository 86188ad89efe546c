//! HTTP messages across the JS boundary in a compact form both sides walk without parsing
//! text (src/http.ts reads and writes the same layout; all integers little-endian):
//!
//! ```text
//! Messages start with a kind byte (`protocol::HttpIn`: 0 request, 1 body piece;
//! `protocol::HttpOut`: 1 response, 2 body chunk).
//! request  (native → JS): id:f64 flags:u8 method:bytes target:bytes n:u32 (name:bytes value:bytes)*n body:bytes
//!                         flags: HttpRequestFlag bits (protocol.rs)
//! content  (native → JS): id:f64 flags:u8 data:bytes            flags: HttpContentFlag
//! response (JS → native): 1:u8 id:f64 status:u16 flags:u8 reason:bytes n:u32 (name value)*n body:bytes
//!                         id < 0: the oldest unanswered request; flags: HttpResponseFlag
//! content  (JS → native): 2:u8 id:f64 flags:u8 data:bytes       flags: HttpContentFlag
//! bytes := len:u32 data[len]
//! ```
//!
//! A request's strings are views of the delivery's arena in JS (no copy per header); headers
//! become a JS object only when read.

use bytes::Bytes;
use netloop_http::{HttpContent, HttpRequest, HttpResponse, Version};
use netloop_transport::Message;

use crate::protocol::{HttpContentFlag, HttpIn, HttpOut, HttpRequestFlag, HttpResponseFlag};

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// Appends `r` in the request layout, after a 0 byte (the kind: request).
pub fn put_request(out: &mut Vec<u8>, r: &HttpRequest) {
    out.push(HttpIn::Request as u8);
    out.extend_from_slice(&(r.id as f64).to_le_bytes());
    let bit = |on: bool, flag: HttpRequestFlag| if on { flag as u8 } else { 0 };
    let flags = bit(r.version == Version::Http11, HttpRequestFlag::Http11)
        | bit(r.keep_alive, HttpRequestFlag::KeepAlive)
        | bit(r.streaming, HttpRequestFlag::Streaming)
        | bit(r.expect_continue, HttpRequestFlag::ExpectContinue);
    out.push(flags);
    bytes(out, &r.method);
    bytes(out, &r.target);
    out.extend_from_slice(&(r.headers.len() as u32).to_le_bytes());
    for (name, value) in r.headers.iter() {
        bytes(out, name);
        bytes(out, value);
    }
    bytes(out, &r.body);
}

/// Appends `c` in the content layout, after a 1 byte (the kind: body piece).
pub fn put_content(out: &mut Vec<u8>, c: &HttpContent) {
    out.push(HttpIn::Content as u8);
    out.extend_from_slice(&(c.request_id.map_or(-1.0, |i| i as f64)).to_le_bytes());
    out.push(if c.last {
        HttpContentFlag::Last as u8
    } else {
        0
    });
    bytes(out, &c.data);
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or_else(|| "truncated HTTP message from JS".to_string())?;
        let s = &self.data[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<usize, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
    fn id(&mut self) -> Result<Option<u64>, String> {
        let b = self.take(8)?;
        let v = f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        Ok((v >= 0.0).then_some(v as u64))
    }
    fn bytes(&mut self) -> Result<Bytes, String> {
        let n = self.u32()?;
        Ok(Bytes::copy_from_slice(self.take(n)?))
    }
}

/// The response or content JS wrote, as the message the codec takes.
pub fn from_js(data: &[u8]) -> Result<Message, String> {
    const RESPONSE: u8 = HttpOut::Response as u8;
    const CONTENT: u8 = HttpOut::Content as u8;
    let mut r = Reader { data, at: 0 };
    match r.u8()? {
        RESPONSE => {
            let request_id = r.id()?;
            let s = r.take(2)?;
            let status = u16::from_le_bytes([s[0], s[1]]);
            let streaming = r.u8()? & HttpResponseFlag::Streaming as u8 != 0;
            let reason = r.bytes()?;
            let n = r.u32()?;
            let mut headers = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                headers.push((r.bytes()?, r.bytes()?));
            }
            let body = r.bytes()?;
            Ok(Message::user(HttpResponse {
                request_id,
                status,
                reason: (!reason.is_empty()).then_some(reason),
                headers,
                body,
                streaming,
            }))
        }
        CONTENT => {
            let request_id = r.id()?;
            let last = r.u8()? & HttpContentFlag::Last as u8 != 0;
            let data = r.bytes()?;
            let mut c = if last {
                HttpContent::last(data)
            } else {
                HttpContent::new(data)
            };
            c.request_id = request_id;
            Ok(Message::user(c))
        }
        other => Err(format!("unknown HTTP message tag {other} from JS")),
    }
}
