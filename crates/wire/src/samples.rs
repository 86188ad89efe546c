//! Fixed samples of the byte layouts that cross the JS boundary, for the round-trip spec
//! (__test__/wire-layouts-*.spec.ts, decision 0018): [`samples`] encodes fixed values with
//! the writers the hub uses (native → JS), and [`echo`] decodes a layout JS wrote with
//! the readers the ops use (JS → native) and gives the values back as JSON, byte strings as
//! hex. Both sides of every layout are then checked field by field against values the spec
//! states once. Nothing here is used by the engine; the two functions are small and pure.
//! crates/node exports them to JS (`wireSamples`, `wireEcho`).

use std::os::fd::AsRawFd;

use bytes::Bytes;
use netloop_http::DecodedResponse;
use netloop_http::{
    Decoded, HeaderList, HttpClientConfig, HttpClientRequest, HttpContent, HttpResponse,
    HttpServerConfig, RequestDecoder, ResponseDecoder, SentRequest, Version,
};
use netloop_resp::RespValue;
use netloop_transport::FileRegion;
use netloop_ws::{CloseCode, CloseFrame, WebSocketFrame};

use crate::big::BigChunks;
use crate::{file_wire, http_client_wire, http_wire, resp_wire, ws_wire};

/// The largest id a JS number holds exactly (2^53 - 1).
const MAX_ID: u64 = (1 << 53) - 1;

/// The encoded samples, one field per layout (the values are stated in the spec).
#[derive(Debug, Clone)]
pub struct Samples {
    /// `put_request`: every flag set, non-ASCII method and target, a 70,000-byte body,
    /// parsed headers (an empty value, an obs-text value, a repeated name), two trailers.
    pub http_request: Vec<u8>,
    /// `put_request`: no flag, HTTP/1.0, everything empty.
    pub http_request_empty: Vec<u8>,
    /// `put_request`: the empty request with one flag each (HTTP/1.1, keep-alive, streaming,
    /// expect-continue, upgrade), so that no two bits can be swapped unseen.
    pub http_request_flags: Vec<Vec<u8>>,
    /// `put_content`: a last piece with trailers, a middle piece with no request id, a last
    /// piece without trailers (request 0).
    pub http_content: Vec<Vec<u8>>,
    /// `put_response` (client): all flags, status 65535, obs-text reason, body, trailers.
    pub http_client_response: Vec<u8>,
    /// `put_response` (client): the sample with one flag each (HTTP/1.1, keep-alive,
    /// streaming, upgraded).
    pub http_client_response_flags: Vec<Vec<u8>>,
    /// `resp_wire::put`: one value of every RESP kind, nested.
    pub resp: Vec<u8>,
    /// `ws_wire::put`: text, binary, ping, pong, close with code, empty close.
    pub ws: Vec<Vec<u8>>,
}

fn field(name: &'static [u8], value: &'static [u8]) -> (Bytes, Bytes) {
    (Bytes::from_static(name), Bytes::from_static(value))
}

fn body() -> Bytes {
    (0..70_000u32)
        .map(|i| (i % 251) as u8)
        .collect::<Vec<_>>()
        .into()
}

/// The request the server codec decodes from `head` (a whole request, its body included).
///
/// # Panics
/// When `head` holds no whole request: a sample's or test's own data is wrong.
pub fn decode_request(head: &'static [u8]) -> netloop_http::HttpRequest {
    let mut input = Bytes::from_static(head);
    let mut out = Vec::new();
    RequestDecoder::new(HttpServerConfig::default())
        .decode(&mut input, &mut out)
        .expect("the request parses");
    out.into_iter()
        .find_map(|d| match d {
            Decoded::Request(r) => Some(*r),
            _ => None,
        })
        .expect("a whole request")
}

fn request() -> netloop_http::HttpRequest {
    let head: &[u8] = b"POST / HTTP/1.1\r\nHost: h\r\nX-Empty: \r\nX-Latin: caf\xe9\r\nX-Dup: 1\r\nX-Dup: 2\r\nConnection: upgrade\r\nUpgrade: x\r\nExpect: 100-continue\r\n\r\n";
    let mut r = decode_request(head);
    r.id = MAX_ID;
    r.method = Bytes::from_static(b"PROP\xc9FIND");
    r.target = Bytes::from(format!("/{}\u{e9}", "a".repeat(9_000)).into_bytes());
    r.body = body();
    r.keep_alive = true;
    r.streaming = true;
    r.expect_continue = true;
    r.upgrade = true;
    r.trailers = vec![field(b"X-T", b"\xff"), field(b"X-U", b"")];
    r
}

fn empty_request() -> netloop_http::HttpRequest {
    let mut r = decode_request(b"GET / HTTP/1.0\r\n\r\n");
    r.id = 0;
    r.method = Bytes::new();
    r.target = Bytes::new();
    r.keep_alive = false;
    r
}

fn client_response() -> netloop_http::HttpClientResponse {
    let mut decoder = ResponseDecoder::new(HttpClientConfig::default());
    decoder.push_request(SentRequest {
        id: 7,
        head: false,
        connect: false,
        upgrade: false,
    });
    let mut input = Bytes::from_static(
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Latin: \xe9\r\nX-Empty:\r\n\r\n",
    );
    let mut out = Vec::new();
    decoder
        .decode(&mut input, &mut out)
        .expect("the sample head parses");
    let mut r = out
        .into_iter()
        .find_map(|d| match d {
            DecodedResponse::Response(r) => Some(r),
            _ => None,
        })
        .expect("a response");
    r.id = MAX_ID;
    r.status = u16::MAX;
    r.reason = Bytes::from_static(b"Gr\xfc\xdfe");
    r.body = Bytes::from_static(b"\x00\xff");
    r.keep_alive = true;
    r.streaming = true;
    r.upgraded = true;
    r.trailers = vec![field(b"X-T", b"1")];
    r
}

fn resp() -> RespValue {
    let bulk = |b: &'static [u8]| RespValue::BulkString(Bytes::from_static(b));
    RespValue::Array(vec![
        RespValue::SimpleString(Bytes::from_static("OK é".as_bytes())),
        RespValue::Error(Bytes::from_static(b"ERR bad")),
        RespValue::Integer(i64::MIN),
        RespValue::Integer(-(MAX_ID as i64)),
        bulk(b""),
        bulk(b"\x00\xff"),
        RespValue::NullBulkString,
        RespValue::NullArray,
        RespValue::Null,
        RespValue::Boolean(true),
        RespValue::Boolean(false),
        RespValue::Double(-0.5),
        RespValue::BigNumber(Bytes::from_static(b"-123456789012345678901234567890")),
        RespValue::BulkError(Bytes::from_static(b"SYNTAX x")),
        RespValue::VerbatimString {
            format: *b"txt",
            text: Bytes::from_static("ünï".as_bytes()),
        },
        RespValue::Map(vec![(bulk(b"k"), RespValue::Integer(1))]),
        RespValue::Set(vec![RespValue::Integer(2)]),
        RespValue::Attribute {
            attributes: vec![(bulk(b"ttl"), RespValue::Integer(3))],
            value: Box::new(bulk(b"v")),
        },
        RespValue::Push(vec![bulk(b"message"), RespValue::Array(vec![])]),
    ])
}

fn ws() -> Vec<WebSocketFrame> {
    vec![
        WebSocketFrame::text("héllo ✓"),
        WebSocketFrame::binary(vec![0u8, 255, 128]),
        WebSocketFrame::Ping(Bytes::from_static(b"p")),
        WebSocketFrame::Pong(Bytes::new()),
        WebSocketFrame::Close(CloseFrame::new(CloseCode(4001), "ç")),
        WebSocketFrame::Close(CloseFrame::empty()),
    ]
}

/// The samples' layouts, encoded by the writers the hub uses.
pub fn samples() -> Samples {
    let encode = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut out = Vec::new();
        f(&mut out);
        out
    };
    let mut last = HttpContent::last(Bytes::from_static(b"\xe9nd"));
    last.request_id = Some(MAX_ID);
    last.trailers = vec![field(b"X-T", b"\xe9"), field(b"X-T", b"2")];
    let middle = HttpContent::new(Bytes::new());
    let mut bare = HttpContent::last(Bytes::from_static(b"x"));
    bare.request_id = Some(0);
    Samples {
        http_request: encode(&|o| http_wire::put_request(o, &request())),
        http_request_empty: encode(&|o| http_wire::put_request(o, &empty_request())),
        http_request_flags: (0..5)
            .map(|bit| {
                let mut r = empty_request();
                match bit {
                    0 => r.version = Version::Http11,
                    1 => r.keep_alive = true,
                    2 => r.streaming = true,
                    3 => r.expect_continue = true,
                    _ => r.upgrade = true,
                }
                encode(&|o| http_wire::put_request(o, &r))
            })
            .collect(),
        http_content: vec![
            encode(&|o| http_wire::put_content(o, &last)),
            encode(&|o| http_wire::put_content(o, &middle)),
            encode(&|o| http_wire::put_content(o, &bare)),
        ],
        http_client_response: encode(&|o| http_client_wire::put_response(o, &client_response())),
        http_client_response_flags: (0..4)
            .map(|bit| {
                let mut r = client_response();
                r.version = Version::Http10;
                r.keep_alive = bit == 1;
                r.streaming = bit == 2;
                r.upgraded = bit == 3;
                if bit == 0 {
                    r.version = Version::Http11;
                }
                encode(&|o| http_client_wire::put_response(o, &r))
            })
            .collect(),
        resp: encode(&|o| resp_wire::put(o, &resp())),
        ws: ws()
            .iter()
            .map(|f| encode(&|o| ws_wire::put(o, f)))
            .collect(),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn fields_json(fields: &HeaderList) -> String {
    let pairs: Vec<String> = fields
        .iter()
        .map(|(n, v)| format!("[\"{}\",\"{}\"]", hex(n), hex(v)))
        .collect();
    format!("[{}]", pairs.join(","))
}

/// A region's descriptor, position and count (the descriptor is closed when `r` drops: it was
/// handed over with the layout).
fn region_json(r: Option<&FileRegion>) -> String {
    r.map_or("null".into(), |r| {
        format!(
            "{{\"fd\":{},\"position\":{},\"count\":{}}}",
            r.file().as_raw_fd(),
            r.position(),
            r.count()
        )
    })
}

fn id_json(id: Option<u64>) -> String {
    id.map_or("null".into(), |i| i.to_string())
}

/// The values of `message` (what an op's reader made) as JSON.
fn http_json(message: netloop_transport::Message) -> Result<String, String> {
    let message = match message.downcast::<HttpResponse>() {
        Ok(r) => {
            return Ok(format!(
                "{{\"kind\":\"response\",\"requestId\":{},\"status\":{},\"reason\":{},\"headers\":{},\"body\":\"{}\",\"streaming\":{},\"file\":{}}}",
                id_json(r.request_id),
                r.status,
                r.reason.map_or("null".into(), |s| format!("\"{}\"", hex(&s))),
                fields_json(&r.headers),
                hex(&r.body),
                r.streaming,
                region_json(r.file.as_ref()),
            ))
        }
        Err(m) => m,
    };
    let message = match message.downcast::<HttpContent>() {
        Ok(c) => {
            return Ok(format!(
            "{{\"kind\":\"content\",\"requestId\":{},\"last\":{},\"data\":\"{}\",\"trailers\":{}}}",
            id_json(c.request_id),
            c.last,
            hex(&c.data),
            fields_json(&c.trailers),
        ))
        }
        Err(m) => m,
    };
    let message = match message.downcast::<netloop_http::HttpRequest>() {
        Ok(r) => {
            return Ok(format!(
                "{{\"kind\":\"serverRequest\",\"id\":{},\"method\":\"{}\",\"target\":\"{}\",\"http11\":{},\"keepAlive\":{},\"streaming\":{},\"expectContinue\":{},\"upgrade\":{},\"headers\":{},\"body\":\"{}\",\"trailers\":{}}}",
                r.id,
                hex(&r.method),
                hex(&r.target),
                r.version == Version::Http11,
                r.keep_alive,
                r.streaming,
                r.expect_continue,
                r.upgrade,
                fields_json(&r.headers.to_list()),
                hex(&r.body),
                fields_json(&r.trailers),
            ))
        }
        Err(m) => m,
    };
    match message.downcast::<HttpClientRequest>() {
        Ok(r) => Ok(format!(
            "{{\"kind\":\"request\",\"method\":\"{}\",\"target\":\"{}\",\"http10\":{},\"headers\":{},\"body\":\"{}\",\"streaming\":{},\"file\":{}}}",
            hex(&r.method),
            hex(&r.target),
            r.version == Version::Http10,
            fields_json(&r.headers),
            hex(&r.body),
            r.streaming,
            region_json(r.file.as_ref()),
        )),
        Err(m) => Err(format!("an unexpected message: {}", m.kind())),
    }
}

/// Decodes `layout` (a layout JS wrote: `kind` is `http`, `http-in` (a request or body piece
/// a JS handler fires on), `resp`, `file` or `ws`) with the reader the ops use and gives back what it read, as JSON (byte strings as hex; RESP: the protocol bytes
/// made natively; a file region's descriptor, closed on return as the region's owner). Fails
/// with the reader's error.
pub fn echo(kind: &str, layout: &[u8]) -> Result<String, String> {
    let data = Bytes::copy_from_slice(layout);
    match kind {
        "http" => http_wire::from_js(&data, &mut BigChunks::none()).and_then(http_json),
        "http-in" => http_wire::inbound_from_js(&data, &mut BigChunks::none()).and_then(http_json),
        "resp" => resp_wire::to_wire(&data).map(|b| format!("\"{}\"", hex(&b))),
        "file" => file_wire::from_js(&data).map(|r| region_json(Some(&r))),
        "ws" => ws_wire::from_js(&data).map(|f| {
            let (kind, payload) = match &f {
                WebSocketFrame::Text(d) => ("text", d.clone()),
                WebSocketFrame::Binary(d) => ("binary", d.clone()),
                WebSocketFrame::Ping(d) => ("ping", d.clone()),
                WebSocketFrame::Pong(d) => ("pong", d.clone()),
                WebSocketFrame::Close(c) => ("close", c.payload()),
                WebSocketFrame::Fragment(f) => ("fragment", f.data.clone()),
            };
            format!("{{\"kind\":\"{kind}\",\"payload\":\"{}\"}}", hex(&payload))
        }),
        other => Err(format!("no layout named {other}")),
    }
}
