//! Response encoding: framing headers, Date, validation.

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use common::*;
use netloop_http::{format_date, HttpResponse, HttpServerConfig};
use netloop_transport::Message;

static WALL: AtomicU64 = AtomicU64::new(1_709_251_200);

fn moving_clock() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(WALL.load(Ordering::SeqCst))
}

#[test]
fn the_date_shows_the_wall_clocks_second_from_one_read_burst_to_the_next() {
    let h = harness_with(
        HttpServerConfig {
            wall_clock: moving_clock,
            ..config()
        },
        Answer::Ok,
    );
    let date = |h: &Harness| {
        h.feed(get("/").as_bytes());
        parse_responses(&h.output(), &[])[0]
            .header("date")
            .unwrap()
            .to_string()
    };
    let first = date(&h);
    assert_eq!(date(&h), first, "the same second");
    WALL.fetch_add(5, Ordering::SeqCst);
    let later = date(&h);
    assert_ne!(later, first, "the next read burst reads the clock again");
    let secs = WALL.load(Ordering::SeqCst);
    assert_eq!(
        later,
        String::from_utf8_lossy(&format_date(UNIX_EPOCH + Duration::from_secs(secs)))
    );
}

#[test]
fn status_line_reason_and_fields_are_written_as_given() {
    let h = harness(Answer::Never);
    h.feed(get("/").as_bytes());
    let mut res = HttpResponse::new(299)
        .header("X-A", "1")
        .header("Date", "custom");
    res.reason = Some(Bytes::from_static(b"Fine"));
    h.respond_ok(res);
    let text = h.output();
    assert_eq!(
        text,
        "HTTP/1.1 299 Fine\r\nX-A: 1\r\nDate: custom\r\nContent-Length: 0\r\n\r\n"
    );
}

#[test]
fn no_content_gets_no_length_and_no_body() {
    let h = harness(Answer::Never);
    h.feed(get("/").as_bytes());
    h.respond_ok(HttpResponse::new(204).body("ignored"));
    let text = h.output();
    assert!(!text.contains("Content-Length"), "{text}");
    assert!(text.ends_with("\r\n\r\n"));
}

#[test]
fn header_injection_and_bad_names_fail_the_write_and_write_nothing() {
    let h = harness(Answer::Never);
    h.feed(get("/").as_bytes());
    let bad = [
        HttpResponse::new(200).header("X", "a\r\nSet-Cookie: x"),
        HttpResponse::new(200).header("Bad Name", "a"),
        HttpResponse::new(200)
            .header("Content-Length", "3")
            .body("ab"),
        HttpResponse::new(200).header("Transfer-Encoding", "chunked"),
        HttpResponse::new(42),
    ];
    let codes: Vec<_> = bad
        .into_iter()
        .map(|r| h.respond(r).unwrap().unwrap_err().code().to_string())
        .collect();
    assert_eq!(
        codes,
        [
            "ERR_INVALID_CHAR",
            "ERR_INVALID_HTTP_TOKEN",
            "ERR_HTTP_CONTENT_LENGTH_MISMATCH",
            "ERR_HTTP_INVALID_HEADER_VALUE",
            "ERR_HTTP_INVALID_STATUS_CODE"
        ]
    );
    assert_eq!(h.output(), "");
    h.respond_ok(HttpResponse::new(200));
    assert_eq!(
        statuses(&h.output()),
        [200],
        "the request can still be answered"
    );
}

#[test]
fn a_large_body_is_written_as_the_same_bytes_without_a_copy() {
    let h = harness(Answer::Never);
    h.feed(get("/").as_bytes());
    let body = Bytes::from(vec![b'z'; 100_000]);
    h.respond_ok(HttpResponse::new(200).body(body.clone()));
    let _head = h.ch.read_outbound().unwrap();
    let sent = h.ch.read_outbound().unwrap();
    assert_eq!(sent.as_bytes().unwrap().as_ptr(), body.as_ptr());
}

#[test]
fn raw_bytes_pass_through_unchanged() {
    let h = harness(Answer::Never);
    assert!(h.ch.write_outbound(Bytes::from_static(b"raw")));
    assert_eq!(h.output(), "raw");
}

#[test]
fn a_streamed_response_with_a_length_checks_it() {
    let h = harness(Answer::Never);
    h.feed(get("/").as_bytes());
    h.respond_ok(
        HttpResponse::new(200)
            .header("Content-Length", "4")
            .streamed(),
    );
    let over = h.send(Message::user(netloop_http::HttpContent::last("12345")));
    assert_eq!(
        over.unwrap().unwrap_err().code(),
        "ERR_HTTP_CONTENT_LENGTH_MISMATCH"
    );
    assert!(!h.is_open(), "a broken body closes the connection");
}
