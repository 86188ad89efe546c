//! Keep-alive and close rules of HTTP/1.0 and 1.1 (Netty's HttpServerKeepAliveHandler).

use crate::common;

use common::*;
use netloop_http::{HttpContent, HttpResponse};
use netloop_transport::Message;

#[test]
fn http11_stays_open_without_a_connection_header() {
    let h = harness(Answer::Ok);
    h.feed(get("/").as_bytes());
    let r = &parse_responses(&h.output(), &[])[0];
    assert_eq!(r.header("connection"), None);
    assert_eq!(r.header("content-length"), Some("2"));
    assert_eq!(r.header("date"), Some(FIXED_DATE));
    assert!(h.is_open());
}

#[test]
fn connection_close_is_echoed_then_the_connection_closes_and_later_requests_are_dropped() {
    let h = harness(Answer::Ok);
    let close = "GET /1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    h.feed(format!("{close}{}", get("/2")).as_bytes());
    let rs = parse_responses(&h.output(), &[]);
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].header("connection"), Some("close"));
    assert!(!h.is_open());
    assert_eq!(
        h.requests(),
        1,
        "the request after the close is not delivered"
    );
}

#[test]
fn http10_closes_unless_it_asks_for_keep_alive() {
    let h = harness(Answer::Ok);
    h.feed(b"GET / HTTP/1.0\r\n\r\n");
    assert_eq!(
        parse_responses(&h.output(), &[])[0].header("connection"),
        Some("close")
    );
    assert!(!h.is_open());

    let h = harness(Answer::Ok);
    h.feed(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let rs = parse_responses(&h.output(), &[]);
    assert_eq!(rs.len(), 2);
    assert!(rs
        .iter()
        .all(|r| r.header("connection") == Some("keep-alive")));
    assert!(h.is_open());
}

#[test]
fn a_response_saying_connection_close_closes_after_it_and_fails_later_held_ones() {
    let h = harness(Answer::Never);
    h.feed(format!("{}{}", get("/a"), get("/b")).as_bytes());
    let held = h.ch.channel().write_future(Message::user(
        HttpResponse::new(200).body("b").for_request(1),
    ));
    h.ch.channel().flush();
    h.ch.run_pending_tasks();
    assert!(held.result().is_none());
    h.respond_ok(
        HttpResponse::new(200)
            .header("Connection", "close")
            .for_request(0),
    );
    let rs = parse_responses(&h.output(), &[]);
    assert_eq!(rs.len(), 1);
    assert!(!h.is_open());
    let failed = held.result().expect("completed").unwrap_err();
    assert_eq!(failed.code(), "ERR_CHANNEL_CLOSED");
}

#[test]
fn a_streamed_http10_response_is_delimited_by_closing() {
    let h = harness(Answer::Never);
    h.feed(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    h.respond_ok(HttpResponse::new(200).streamed());
    h.send(Message::user(HttpContent::new("abc")));
    assert!(h.is_open());
    h.send(Message::user(HttpContent::last("def")));
    let text = h.output();
    assert!(text.contains("Connection: close\r\n"), "{text}");
    assert!(!text.contains("chunked"));
    assert!(text.ends_with("\r\n\r\nabcdef"));
    assert!(!h.is_open());
}

#[test]
fn a_streamed_http11_response_is_chunked_and_keeps_the_connection() {
    let h = harness(Answer::Never);
    h.feed(get("/").as_bytes());
    h.respond_ok(HttpResponse::new(200).streamed());
    h.send(Message::user(HttpContent::new("abc")));
    let mut last = HttpContent::last("");
    last.trailers.push(("X-Sum".into(), "1".into()));
    h.send(Message::user(last));
    let text = h.output();
    assert!(text.contains("Transfer-Encoding: chunked\r\n"));
    assert!(
        text.ends_with("\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\n\r\n"),
        "{text:?}"
    );
    assert!(h.is_open());
}

#[test]
fn half_closed_input_closes_once_the_pending_responses_are_written() {
    let h = harness(Answer::Never);
    h.feed(get("/").as_bytes());
    h.ch.pipeline()
        .fire_user_event_triggered(Box::new(netloop_transport::ChannelInputShutdown));
    h.ch.run_pending_tasks();
    assert!(h.is_open(), "a response is still owed");
    h.respond_ok(HttpResponse::new(204));
    assert_eq!(statuses(&h.output()), [204]);
    assert!(!h.is_open());
}
