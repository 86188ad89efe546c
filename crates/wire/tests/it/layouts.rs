//! Each byte layout without Node: values encoded by the writers the hub uses, then the bytes
//! walked field by field against the definitions in `netloop_wire::protocol` (offsets, flag
//! bits, tags); layouts JS writes built by hand and read by the readers the ops use.
//! (`__test__/wire-layouts-*.spec.ts` checks the same layouts against the TS side.)

use std::os::fd::IntoRawFd;

use bytes::Bytes;
use netloop_codec::{HAProxyCommand, HAProxyMessage, HAProxyProtocol, HAProxyTlv, HAProxyVersion};
use netloop_http::{HttpClientConfig, HttpContent, ResponseDecoder, SentRequest, Version};
use netloop_resp::RespValue;
use netloop_wire::big::BigChunks;
use netloop_wire::protocol::{
    HttpClientResponseFlag, HttpContentFlag, HttpIn, HttpRequestAt, HttpRequestFlag, Outcome,
    RecordField, RecordValue as _, RespTag, WsFrameKind,
};
use netloop_wire::{
    file_wire, haproxy_wire, http_client_wire, http_wire, record, resp_wire, ws_wire,
};
use netloop_ws::{CloseCode, CloseFrame, WebSocketFrame};

/// Walks a layout: little-endian integers and `len:u32 data[len]` fields.
struct Walk<'a>(&'a [u8]);

impl Walk<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }
    fn u8(&mut self) -> u8 {
        self.take(1)[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take(2).try_into().unwrap())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn bytes(&mut self) -> Vec<u8> {
        let n = self.u32() as usize;
        self.take(n).to_vec()
    }
    fn fields(&mut self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let n = self.u32();
        (0..n).map(|_| (self.bytes(), self.bytes())).collect()
    }
}

fn pair(name: &[u8], value: &[u8]) -> (Vec<u8>, Vec<u8>) {
    (name.to_vec(), value.to_vec())
}

#[test]
fn an_http_request_lies_at_its_declared_offsets_in_its_declared_field_order() {
    let mut r = netloop_wire::samples::decode_request(
        b"POST /p HTTP/1.1\r\nHost: h\r\nX-Latin: caf\xe9\r\nContent-Length: 3\r\n\r\nabc",
    );
    r.id = (1 << 53) - 1;
    r.body = Bytes::from_static(b"abc");
    r.keep_alive = true;
    r.upgrade = false;
    r.trailers = vec![(Bytes::from_static(b"X-T"), Bytes::from_static(b"\xff"))];

    let mut buf = Vec::new();
    http_wire::put_request(&mut buf, &r);
    assert_eq!(buf[0], HttpIn::Request as u8, "the kind byte");
    let fixed = &buf[1..];
    let id = HttpRequestAt::Id as usize;
    assert_eq!(
        f64::from_le_bytes(fixed[id..id + 8].try_into().unwrap()),
        ((1u64 << 53) - 1) as f64
    );
    assert_eq!(
        fixed[HttpRequestAt::Flags as usize],
        HttpRequestFlag::Http11 as u8 | HttpRequestFlag::KeepAlive as u8,
        "exactly the flags that hold"
    );
    assert_eq!(fixed[HttpRequestAt::Version as usize], 11);
    let mut w = Walk(&fixed[HttpRequestAt::Fields as usize..]);
    assert_eq!(w.bytes(), b"POST", "method");
    assert_eq!(w.bytes(), b"/p", "target");
    assert_eq!(w.bytes(), b"abc", "body");
    let headers = w.fields();
    assert!(
        headers.contains(&pair(b"X-Latin", b"caf\xe9")),
        "{headers:?}"
    );
    assert!(headers.contains(&pair(b"Host", b"h")));
    assert_eq!(w.fields(), vec![pair(b"X-T", b"\xff")], "trailers");
    assert!(w.0.is_empty(), "nothing after the last field");
}

#[test]
fn a_body_piece_carries_its_trailers_only_when_its_flag_says_so() {
    let piece = |last: bool, trailers: bool| {
        let mut buf = Vec::new();
        let c = HttpContent {
            request_id: Some(9),
            data: Bytes::from_static(b"xy"),
            last,
            trailers: if trailers {
                vec![(Bytes::from_static(b"A"), Bytes::from_static(b"1"))]
            } else {
                Vec::new()
            },
        };
        http_wire::put_content(&mut buf, &c);
        buf
    };
    let last = piece(true, true);
    let mut w = Walk(&last);
    assert_eq!(w.u8(), HttpIn::Content as u8);
    assert_eq!(w.f64(), 9.0);
    assert_eq!(
        w.u8(),
        HttpContentFlag::Last as u8 | HttpContentFlag::Trailers as u8
    );
    assert_eq!(w.bytes(), b"xy");
    assert_eq!(w.fields(), vec![pair(b"A", b"1")]);
    assert!(w.0.is_empty());

    // Trailers on a middle piece are not sent (only the last piece has them).
    let middle = piece(false, true);
    let mut w = Walk(&middle);
    w.take(9);
    assert_eq!(w.u8(), 0, "no flag");
    assert_eq!(w.bytes(), b"xy");
    assert!(w.0.is_empty(), "no trailer field");
}

/// A request with every field set: every flag, HTTP/1.1, non-ASCII bytes, a repeated and an
/// empty header, a body and trailers.
fn full_request() -> netloop_http::HttpRequest {
    let mut r = netloop_wire::samples::decode_request(
        b"PUT /p HTTP/1.1\r\nHost: h\r\nX-Dup: 1\r\nX-Empty: \r\nx-dup: caf\xe9\r\nContent-Length: 3\r\n\r\nabc",
    );
    r.id = (1 << 53) - 1;
    r.method = Bytes::from_static(b"PROP\xc9FIND");
    r.target = Bytes::from_static(b"/p?q=\xe9");
    r.keep_alive = true;
    r.streaming = true;
    r.expect_continue = true;
    r.upgrade = true;
    r.trailers = vec![
        (Bytes::from_static(b"X-T"), Bytes::from_static(b"\xff")),
        (Bytes::from_static(b"X-U"), Bytes::new()),
    ];
    r
}

/// `r` written by `put_request` and read back by `request_from_js`.
fn request_round_trip(r: &netloop_http::HttpRequest) -> netloop_http::HttpRequest {
    let mut buf = Vec::new();
    http_wire::put_request(&mut buf, r);
    http_wire::request_from_js(&Bytes::from(buf), &mut BigChunks::none()).expect("read back")
}

/// Every field of two requests, the headers as (name, value) lists.
fn assert_same_request(got: &netloop_http::HttpRequest, want: &netloop_http::HttpRequest) {
    assert_eq!(got.id, want.id, "id");
    assert_eq!(got.method, want.method, "method");
    assert_eq!(got.target, want.target, "target");
    assert_eq!(got.version, want.version, "version");
    assert_eq!(got.headers.to_list(), want.headers.to_list(), "headers");
    assert_eq!(got.body, want.body, "body");
    assert_eq!(got.streaming, want.streaming, "streaming");
    assert_eq!(got.trailers, want.trailers, "trailers");
    assert_eq!(got.keep_alive, want.keep_alive, "keep_alive");
    assert_eq!(got.expect_continue, want.expect_continue, "expect_continue");
    assert_eq!(got.upgrade, want.upgrade, "upgrade");
}

#[test]
fn a_request_js_passes_on_is_read_back_with_every_field_it_was_written_with() {
    let full = full_request();
    assert_eq!(full.headers.len(), 5);
    assert_same_request(&request_round_trip(&full), &full);
    assert_eq!(
        request_round_trip(&full)
            .headers
            .get_all("X-DUP")
            .collect::<Vec<_>>(),
        [&b"1"[..], &b"caf\xe9"[..]],
        "repeated fields in order, looked up by any case"
    );

    // Everything empty, no flag, HTTP/1.0; then each flag alone (no two can be swapped).
    let mut empty = full_request();
    empty.id = 0;
    empty.method = Bytes::new();
    empty.target = Bytes::new();
    empty.version = Version::Http10;
    empty.headers = Default::default();
    empty.body = Bytes::new();
    empty.trailers = Vec::new();
    (
        empty.keep_alive,
        empty.streaming,
        empty.expect_continue,
        empty.upgrade,
    ) = (false, false, false, false);
    assert_same_request(&request_round_trip(&empty), &empty);
    for bit in 0..5 {
        let mut r = empty.clone();
        match bit {
            0 => r.version = Version::Http11,
            1 => r.keep_alive = true,
            2 => r.streaming = true,
            3 => r.expect_continue = true,
            _ => r.upgrade = true,
        }
        assert_same_request(&request_round_trip(&r), &r);
    }
}

#[test]
fn a_request_layout_cut_short_or_overlong_or_of_another_kind_is_refused() {
    let mut buf = Vec::new();
    http_wire::put_request(&mut buf, &full_request());
    for cut in 0..buf.len() {
        let data = Bytes::copy_from_slice(&buf[..cut]);
        assert!(
            http_wire::request_from_js(&data, &mut BigChunks::none()).is_err(),
            "cut at {cut}"
        );
    }
    let mut longer = buf.clone();
    longer.push(0);
    let data = Bytes::from(longer);
    assert!(http_wire::request_from_js(&data, &mut BigChunks::none()).is_err());
    let mut bad_version = buf.clone();
    bad_version[1 + HttpRequestAt::Version as usize] = 20;
    let data = Bytes::from(bad_version);
    assert!(http_wire::request_from_js(&data, &mut BigChunks::none()).is_err());
    let mut negative_id = buf.clone();
    negative_id[1..9].copy_from_slice(&(-1.0f64).to_le_bytes());
    let data = Bytes::from(negative_id);
    assert!(http_wire::request_from_js(&data, &mut BigChunks::none()).is_err());
    let data = Bytes::from(buf);
    assert!(
        http_wire::content_from_js(&data, &mut BigChunks::none()).is_err(),
        "a request is not a body piece"
    );
}

#[test]
fn a_body_piece_js_passes_on_is_read_back_with_its_data_id_last_bit_and_trailers() {
    let pieces = [
        HttpContent {
            request_id: Some((1 << 53) - 1),
            data: Bytes::from_static(b"\xe9nd"),
            last: true,
            trailers: vec![
                (Bytes::from_static(b"X-T"), Bytes::from_static(b"\xe9")),
                (Bytes::from_static(b"X-T"), Bytes::from_static(b"2")),
            ],
        },
        HttpContent::new(Bytes::new()),
        HttpContent {
            request_id: Some(0),
            ..HttpContent::last(Bytes::from_static(b"x"))
        },
    ];
    for c in &pieces {
        let mut buf = Vec::new();
        http_wire::put_content(&mut buf, c);
        let data = Bytes::from(buf);
        let got = http_wire::content_from_js(&data, &mut BigChunks::none()).expect("read back");
        assert_eq!(&got, c);
        let msg = http_wire::inbound_from_js(&data, &mut BigChunks::none()).expect("a message");
        assert!(
            msg.downcast::<HttpContent>().is_ok(),
            "the codec's message type"
        );
    }
}

#[test]
fn a_client_response_is_laid_out_field_by_field() {
    let mut decoder = ResponseDecoder::new(HttpClientConfig::default());
    decoder.push_request(SentRequest {
        id: 7,
        head: false,
        connect: false,
        upgrade: false,
    });
    let mut input =
        Bytes::from_static(b"HTTP/1.0 404 Not Found\r\nContent-Length: 2\r\nX-A: b\r\n\r\nno");
    let mut out = Vec::new();
    decoder
        .decode(&mut input, &mut out)
        .expect("the response parses");
    let r = out
        .into_iter()
        .find_map(|d| match d {
            netloop_http::DecodedResponse::Response(r) => Some(r),
            _ => None,
        })
        .expect("a response");
    let mut buf = Vec::new();
    http_client_wire::put_response(&mut buf, &r);
    let mut w = Walk(&buf);
    assert_eq!(w.u8(), HttpIn::Response as u8);
    assert_eq!(w.f64(), 7.0, "the request's id");
    let flags = w.u8();
    assert_eq!(flags & HttpClientResponseFlag::Http11 as u8, 0, "HTTP/1.0");
    assert_eq!(w.u16(), 404);
    assert_eq!(w.bytes(), b"Not Found");
    assert_eq!(w.bytes(), b"no", "body");
    assert!(w.fields().contains(&pair(b"X-A", b"b")));
    assert_eq!(w.fields(), Vec::<(Vec<u8>, Vec<u8>)>::new(), "no trailers");
    assert!(w.0.is_empty());
}

/// A response as JS writes it: `1:u8 id:f64 status:u16 flags:u8 reason n (name value)*n body`.
fn js_response(status: u16) -> Vec<u8> {
    let mut b = vec![1u8];
    b.extend_from_slice(&(-1.0f64).to_le_bytes());
    b.extend_from_slice(&status.to_le_bytes());
    b.push(0);
    http_wire::bytes(&mut b, b"OK");
    b.extend_from_slice(&1u32.to_le_bytes());
    http_wire::bytes(&mut b, b"Content-Type");
    http_wire::bytes(&mut b, b"text/plain");
    http_wire::bytes(&mut b, b"hi");
    b
}

#[test]
fn a_response_js_wrote_is_read_whole_and_refused_when_cut_anywhere() {
    let whole = js_response(200);
    let id = http_wire::freeze(&whole).expect("a whole response freezes");
    http_wire::release_frozen(id);
    for cut in 1..whole.len() {
        let e = http_wire::freeze(&whole[..cut]).expect_err("a cut layout is refused");
        assert_eq!(e.code, "ERR_HTTP_RESPONSE", "cut at {cut}: {}", e.message);
    }
}

#[test]
fn resp_values_are_tag_led_with_little_endian_bodies() {
    let mut buf = Vec::new();
    resp_wire::put(
        &mut buf,
        &RespValue::Array(vec![
            RespValue::Integer(-2),
            RespValue::BulkString(Bytes::from_static(b"ab")),
            RespValue::Boolean(true),
        ]),
    );
    let mut w = Walk(&buf);
    assert_eq!(w.u8(), RespTag::Array as u8);
    assert_eq!(w.u32(), 3, "the count");
    assert_eq!(w.u8(), RespTag::Integer as u8);
    assert_eq!(i64::from_le_bytes(w.take(8).try_into().unwrap()), -2);
    assert_eq!(w.u8(), RespTag::Bulk as u8);
    assert_eq!(w.bytes(), b"ab");
    assert_eq!(w.u8(), RespTag::Boolean as u8);
    assert_eq!(w.u8(), 1);
    assert!(w.0.is_empty());
    // What JS writes in the same format becomes RESP's own bytes.
    assert_eq!(
        resp_wire::to_wire(&buf).expect("valid"),
        Bytes::from_static(b"*3\r\n:-2\r\n$2\r\nab\r\n#t\r\n")
    );
}

#[test]
fn a_websocket_close_carries_its_code_big_endian_then_its_reason() {
    let mut buf = Vec::new();
    let close = WebSocketFrame::Close(CloseFrame::new(CloseCode::GOING_AWAY, "bye"));
    ws_wire::put(&mut buf, &close);
    assert_eq!(
        buf,
        [&[WsFrameKind::Close as u8, 0x03, 0xe9][..], b"bye"].concat()
    );
    let mut empty = Vec::new();
    ws_wire::put(&mut empty, &WebSocketFrame::Close(CloseFrame::empty()));
    assert_eq!(empty, [WsFrameKind::Close as u8], "no code: the kind alone");
    let mut text = Vec::new();
    ws_wire::put(
        &mut text,
        &WebSocketFrame::Text(Bytes::from_static("✓".as_bytes())),
    );
    assert_eq!(
        text,
        [&[WsFrameKind::Text as u8][..], "✓".as_bytes()].concat()
    );
    for frame in [buf, empty, text] {
        let back = ws_wire::from_js(&Bytes::from(frame.clone())).expect("readable");
        let mut again = Vec::new();
        ws_wire::put(&mut again, &back);
        assert_eq!(again, frame, "read back as written");
    }
}

#[test]
fn a_file_region_layout_names_a_shared_file_its_position_and_count() {
    let fd = std::fs::File::open("/dev/null")
        .expect("/dev/null")
        .into_raw_fd();
    let id = file_wire::share(u32::try_from(fd).unwrap()).expect("shared");
    let layout = |id: u32, position: f64, count: f64| {
        let mut b = Vec::new();
        b.extend_from_slice(&(id | 1 << 31).to_le_bytes());
        b.extend_from_slice(&position.to_le_bytes());
        b.extend_from_slice(&count.to_le_bytes());
        b
    };
    let whole = layout(id, 5.0, 7.0);
    assert_eq!(whole.len(), 20);
    let region = file_wire::from_js(&Bytes::from(whole.clone())).expect("a region");
    assert_eq!((region.position(), region.count()), (5, 7));
    assert!(
        file_wire::from_js(&Bytes::copy_from_slice(&whole[..19])).is_err(),
        "cut"
    );
    assert!(
        file_wire::from_js(&Bytes::from(layout(id, -1.0, 7.0))).is_err(),
        "bad position"
    );
    file_wire::release(id);
    assert!(file_wire::from_js(&Bytes::from(whole)).is_err(), "released");
}

#[test]
fn a_proxy_header_becomes_its_strings_and_one_from_js_its_bytes() {
    let src = "1.2.3.4:1000".parse().unwrap();
    let dst = "5.6.7.8:2000".parse().unwrap();
    let mut m = HAProxyMessage::tcp(src, dst);
    m.version = HAProxyVersion::V2;
    m.command = HAProxyCommand::Proxy;
    m.tlvs = vec![HAProxyTlv {
        kind: 0x20,
        value: Bytes::from_static(&[0xab, 0x01]),
    }];
    let s = haproxy_wire::strings(&m);
    assert_eq!(
        s,
        [
            "2",
            "PROXY",
            HAProxyProtocol::Tcp4.name(),
            "1.2.3.4",
            "1000",
            "5.6.7.8",
            "2000",
            "32:ab01"
        ]
        .map(String::from)
    );

    let header = |version, kind| haproxy_wire::Header {
        version,
        local: false,
        source: (Some("1.2.3.4".into()), Some(1000)),
        destination: (Some("5.6.7.8".into()), Some(2000)),
        tlvs: vec![(kind, Bytes::from_static(b"x"))],
    };
    let mut v1 = header(1, 1);
    v1.tlvs.clear();
    let bytes = haproxy_wire::encode(v1).expect("v1");
    assert_eq!(&bytes[..], b"PROXY TCP4 1.2.3.4 5.6.7.8 1000 2000\r\n");
    let v2 = haproxy_wire::encode(header(2, 0x20)).expect("v2");
    assert_eq!(&v2[..12], b"\r\n\r\n\0\r\nQUIT\n", "the v2 signature");
    let e = haproxy_wire::encode(header(2, 256)).expect_err("a two-byte TLV type");
    assert_eq!(e.code, "ERR_INVALID_ARG_VALUE");
    let mut bad = header(1, 1);
    bad.source.1 = Some(70_000);
    assert_eq!(
        haproxy_wire::encode(bad).expect_err("a port").code,
        "ERR_INVALID_ARG_VALUE"
    );
}

#[test]
fn a_record_is_six_fields_and_its_error_fields_say_whose_error() {
    assert_eq!(record::RECORD, RecordField::Length as usize);
    assert_eq!(RecordField::Kind as usize, 0);
    assert_eq!(RecordField::C as usize, record::RECORD - 1);
    use netloop_wire::outbox::ErrorRef;
    assert_eq!(
        record::error_fields(ErrorRef::Native(4.0)),
        (4.0, Outcome::NativeError.value())
    );
    assert_eq!(
        record::error_fields(ErrorRef::Js(9.0)),
        (9.0, Outcome::JsError.value())
    );
}
