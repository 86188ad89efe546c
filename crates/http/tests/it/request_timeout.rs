//! `request_timeout` (node:http's `requestTimeout`): a whole request, head and body, must
//! arrive in time, else 408 and close.

use crate::common;

use std::time::Duration;

use common::*;
use netloop_http::HttpServerConfig;

fn with_request_timeout(ms: u64) -> Harness {
    let cfg = HttpServerConfig {
        request_timeout: Some(Duration::from_millis(ms)),
        header_timeout: None,
        ..config()
    };
    harness_with(cfg, Answer::Ok)
}

const POST_HEAD: &str = "POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n";

fn assert_408_and_closed(h: &Harness) {
    let out = h.output();
    assert_eq!(statuses(&out).last(), Some(&408), "{out}");
    assert!(out.contains("HTTP/1.1 408 Request Timeout\r\n"), "{out}");
    assert_eq!(h.error_codes(), vec!["ERR_HTTP_REQUEST_TIMEOUT"]);
    assert!(!h.is_open(), "the connection closes after the 408");
}

#[test]
fn the_default_is_node_s_300_seconds_and_zero_is_refused() {
    assert_eq!(
        HttpServerConfig::default().request_timeout,
        Some(Duration::from_secs(300))
    );
    let zero = HttpServerConfig {
        request_timeout: Some(Duration::ZERO),
        ..HttpServerConfig::default()
    };
    assert_eq!(zero.validate().unwrap_err().code(), "ERR_INVALID_ARG_VALUE");
}

#[test]
fn a_body_that_stops_arriving_gets_408_when_the_clock_runs_out() {
    let h = with_request_timeout(1000);
    h.feed(format!("{POST_HEAD}abc").as_bytes());
    h.ch.advance_time(Duration::from_millis(999));
    assert!(h.is_open());
    assert_eq!(h.requests(), 0);
    h.ch.advance_time(Duration::from_millis(2));
    assert_408_and_closed(&h);
}

#[test]
fn the_clock_covers_head_and_body_together() {
    let h = with_request_timeout(1000);
    h.feed(b"POST /up HTTP/1.1\r\nHost: t\r\n");
    h.ch.advance_time(Duration::from_millis(600));
    h.feed(b"Content-Length: 10\r\n\r\nabc");
    h.ch.advance_time(Duration::from_millis(300));
    assert!(h.is_open());
    h.ch.advance_time(Duration::from_millis(101));
    assert_408_and_closed(&h);
}

#[test]
fn a_slow_request_complete_in_time_is_answered_and_its_clock_stops() {
    let h = with_request_timeout(1000);
    h.feed(format!("{POST_HEAD}abc").as_bytes());
    h.ch.advance_time(Duration::from_millis(900));
    h.feed(b"defghij");
    assert_eq!(h.requests(), 1);
    h.ch.advance_time(Duration::from_secs(10));
    assert!(
        h.is_open(),
        "a kept-alive connection between requests is not timed out"
    );
    assert_eq!(statuses(&h.output()), [200]);
    assert!(h.error_codes().is_empty());
}

#[test]
fn a_later_request_gets_its_own_clock_from_its_first_byte() {
    let h = with_request_timeout(1000);
    h.feed(get("/a").as_bytes());
    h.ch.advance_time(Duration::from_secs(5));
    h.feed(POST_HEAD.as_bytes());
    h.ch.advance_time(Duration::from_millis(999));
    assert!(h.is_open());
    h.ch.advance_time(Duration::from_millis(2));
    let out = h.output();
    assert_eq!(statuses(&out), [200, 408], "{out}");
    assert!(!h.is_open());
}
