//! Protocol upgrades: `Connection: upgrade` with `Upgrade` (WebSocket, h2c), and `CONNECT`.

use crate::common;

use common::*;
use netloop_http::HttpResponse;
use netloop_transport::{ChannelInputShutdown, Message};

const WS_UPGRADE: &str = "GET /chat HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n";

fn switching() -> HttpResponse {
    HttpResponse::new(101)
        .header("Upgrade", "websocket")
        .header("Connection", "Upgrade")
}

fn raw(h: &Harness) -> String {
    String::from_utf8_lossy(&h.seen.borrow().raw).into_owned()
}

#[test]
fn an_upgrade_request_is_marked_and_the_codec_reads_nothing_after_it() {
    let h = harness(Answer::Never);
    h.feed(format!("{WS_UPGRADE}\u{81}\u{5}frame").as_bytes());
    assert_eq!(h.requests(), 1);
    assert!(h.seen.borrow().requests[0].upgrade);
    assert_eq!(raw(&h), "", "the bytes after it wait for the answer");
    assert!(
        h.seen.borrow().errors.is_empty(),
        "they are not parsed as HTTP"
    );
    assert!(
        !h.ch.channel().is_auto_read(),
        "reading stops while the answer is awaited"
    );
}

#[test]
fn a_101_is_written_as_given_then_bytes_pass_through_both_ways() {
    let h = harness(Answer::Never);
    h.feed(format!("{WS_UPGRADE}left over").as_bytes());
    h.respond_ok(switching());
    assert_eq!(
        h.output(),
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        "no Date, no framing, the application's Connection kept"
    );
    assert_eq!(
        raw(&h),
        "left over",
        "the bytes read with the request come first"
    );
    assert!(h.ch.channel().is_auto_read(), "reading resumes");
    h.feed(b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(
        raw(&h),
        "left overGET / HTTP/1.1\r\n\r\n",
        "not HTTP any more"
    );
    assert_eq!(h.requests(), 1);
    assert!(matches!(
        h.send(Message::from(b"pong".to_vec())),
        Some(Ok(()))
    ));
    assert_eq!(h.output(), "pong", "writes pass through unframed");
    match h.respond(HttpResponse::new(200)) {
        Some(Err(e)) => assert_eq!(e.code(), "ERR_HTTP_HEADERS_SENT"),
        other => panic!("an HTTP response after the switch: {other:?}"),
    }
    assert!(h.is_open());
}

#[test]
fn a_declined_upgrade_goes_on_with_http_and_the_requests_after_it() {
    let h = harness(Answer::Never);
    h.feed(format!("{WS_UPGRADE}{}", get("/next")).as_bytes());
    assert_eq!(h.requests(), 1);
    h.respond_ok(HttpResponse::new(426).body("no").for_request(0));
    h.ch.run_pending_tasks();
    assert_eq!(h.requests(), 2, "the request after it is decoded");
    assert!(!h.seen.borrow().requests[1].upgrade);
    h.respond_ok(HttpResponse::new(200).body("next").for_request(1));
    assert_eq!(statuses(&h.output()), [426, 200]);
    assert!(h.ch.channel().is_auto_read());
    assert_eq!(raw(&h), "");
}

#[test]
fn an_upgrade_answered_from_inside_channel_read_declines_at_once() {
    // Answer::Ok answers 200 while the request is being fired.
    let h = harness(Answer::Ok);
    h.feed(format!("{WS_UPGRADE}{}", get("/next")).as_bytes());
    assert_eq!(h.requests(), 2);
    assert_eq!(statuses(&h.output()), [200, 200]);
    assert!(h.ch.channel().is_auto_read());
}

#[test]
fn connection_upgrade_without_an_upgrade_field_is_plain_http() {
    let h = harness(Answer::Ok);
    h.feed(
        format!(
            "GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\n\r\n{}",
            get("/b")
        )
        .as_bytes(),
    );
    assert_eq!(h.requests(), 2);
    assert!(!h.seen.borrow().requests[0].upgrade);
    // And an Upgrade field without the Connection option.
    let h = harness(Answer::Ok);
    h.feed(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n");
    assert!(!h.seen.borrow().requests[0].upgrade);
}

#[test]
fn connect_answered_2xx_opens_a_tunnel_without_framing_fields() {
    let h = harness(Answer::Never);
    h.feed(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n\x16\x03\x01");
    let req = h.seen.borrow().requests[0].clone();
    assert!(req.upgrade && req.is_connect());
    assert_eq!(&req.target[..], b"example.com:443");
    h.respond_ok(HttpResponse::new(200));
    let out = h.output();
    assert_eq!(
        out,
        format!("HTTP/1.1 200 OK\r\nDate: {FIXED_DATE}\r\n\r\n"),
        "no Content-Length in a 2xx to CONNECT (RFC 9110 §9.3.6)"
    );
    assert_eq!(h.seen.borrow().raw, b"\x16\x03\x01");
    assert!(h.is_open());
}

#[test]
fn connect_refused_with_an_error_status_stays_http() {
    let h = harness(Answer::Never);
    h.feed(format!("CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\n\r\n{}", get("/x")).as_bytes());
    h.respond_ok(HttpResponse::new(403).body("no").for_request(0));
    h.ch.run_pending_tasks();
    assert_eq!(h.requests(), 2);
    assert_eq!(raw(&h), "");
}

#[test]
fn removing_the_codec_while_an_upgrade_waits_hands_over_the_bytes_and_reading() {
    // What a library that writes its own 101 (ws) does: take the codec out, write raw bytes.
    let h = harness(Answer::Never);
    h.feed(format!("{WS_UPGRADE}early").as_bytes());
    assert!(!h.ch.channel().is_auto_read());
    h.ch.pipeline().remove("http").expect("the codec is there");
    h.ch.run_pending_tasks();
    assert_eq!(raw(&h), "early");
    assert!(h.ch.channel().is_auto_read(), "reading is given back");
    h.feed(b"more");
    assert_eq!(raw(&h), "earlymore");
}

#[test]
fn after_a_switch_the_peers_half_closure_is_the_new_protocols_business() {
    let h = harness(Answer::Never);
    h.feed(b"CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\n\r\n");
    h.respond_ok(HttpResponse::new(200));
    h.ch.pipeline()
        .fire_user_event_triggered(Box::new(ChannelInputShutdown));
    h.ch.run_pending_tasks();
    assert!(h.is_open(), "the tunnel may still answer");
    assert!(matches!(
        h.send(Message::from(b"late reply".to_vec())),
        Some(Ok(()))
    ));
    assert!(h.output().ends_with("late reply"));
}
