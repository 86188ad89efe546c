//! The client codec after a protocol switch: `101` to an `Upgrade` request, a 2xx to
//! `CONNECT`. Bytes pass through both ways.

use crate::client_support;

use client_support::*;
use netloop_http::HttpClientRequest;
use netloop_transport::Message;

#[test]
fn a_101_switch_delivers_the_bytes_after_its_head_raw_and_raw_writes_pass_through() {
    let c = client();
    c.request(
        HttpClientRequest::new("GET", "/chat")
            .header("Host", "x")
            .header("Connection", "Upgrade")
            .header("Upgrade", "websocket"),
    );
    c.output();
    c.feed(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x02hi");
    let r = &c.responses()[0];
    assert!(r.upgraded && !r.keep_alive);
    assert_eq!(r.status, 101);
    assert_eq!(c.raw(), b"\x81\x02hi");
    c.feed(b"HTTP/1.1 200 OK\r\n\r\n"); // not HTTP any more
    assert_eq!(c.responses().len(), 1);
    assert_eq!(c.raw(), b"\x81\x02hiHTTP/1.1 200 OK\r\n\r\n");
    c.send_ok(Message::Bytes(b"\x01\x00"[..].into()));
    assert_eq!(c.output(), "\u{1}\u{0}");
    let refused = c.send(Message::user(HttpClientRequest::new("GET", "/")));
    assert!(
        matches!(refused, Some(Err(_))),
        "HTTP after the switch fails"
    );
    c.ch.close();
    assert!(c.error_codes().is_empty());
}

#[test]
fn a_2xx_to_connect_opens_a_tunnel() {
    let c = client();
    c.request(HttpClientRequest::new("CONNECT", "db:5432").header("Host", "db:5432"));
    assert_eq!(
        c.output(),
        "CONNECT db:5432 HTTP/1.1\r\nHost: db:5432\r\n\r\n"
    );
    c.feed(b"HTTP/1.1 200 Connection Established\r\nContent-Length: 99\r\n\r\n");
    let r = &c.responses()[0];
    assert!(r.upgraded && r.body.is_empty());
    c.feed(b"server bytes");
    assert_eq!(c.raw(), b"server bytes");
    c.send_ok(Message::Bytes(b"client bytes"[..].into()));
    assert_eq!(c.output(), "client bytes");
}

#[test]
fn a_refused_connect_is_an_ordinary_response() {
    let c = client();
    c.request(HttpClientRequest::new("CONNECT", "db:5432").header("Host", "db:5432"));
    c.get();
    c.feed(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nnoHTTP/1.1 204 No Content\r\n\r\n");
    let rs = c.responses();
    assert_eq!(rs.len(), 2);
    assert!(!rs[0].upgraded && &rs[0].body[..] == b"no");
}
