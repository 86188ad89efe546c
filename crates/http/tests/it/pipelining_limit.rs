//! `max_pipelined_requests`: at the limit the codec stops decoding and reading (backpressure,
//! not an error) and goes on as responses complete.

use crate::common;

use common::*;
use netloop_http::{HttpResponse, HttpServerConfig};

fn limited(max: usize, answer: Answer) -> Harness {
    let cfg = HttpServerConfig {
        max_pipelined_requests: Some(max),
        ..config()
    };
    harness_with(cfg, answer)
}

fn five_gets() -> String {
    (0..5).map(|i| get(&format!("/{i}"))).collect()
}

fn auto_read(h: &Harness) -> bool {
    h.ch.channel().is_auto_read()
}

#[test]
fn at_the_limit_later_requests_wait_and_reading_stops_until_responses_complete() {
    let h = limited(2, Answer::Never);
    h.feed(five_gets().as_bytes());
    assert_eq!(h.requests(), 2, "only as many as the limit");
    assert!(!auto_read(&h), "reading paused");
    h.respond_ok(HttpResponse::new(200).body("0"));
    assert_eq!(h.requests(), 3, "a completed response lets one more in");
    assert!(!auto_read(&h), "at the limit again");
    for body in ["1", "2", "3", "4"] {
        h.respond_ok(HttpResponse::new(200).body(body));
    }
    assert_eq!(h.requests(), 5);
    assert!(
        auto_read(&h),
        "reading resumed once below the limit with nothing buffered"
    );
    let bodies: Vec<_> = parse_responses(&h.output(), &[])
        .into_iter()
        .map(|p| p.body)
        .collect();
    assert_eq!(bodies, ["0", "1", "2", "3", "4"]);
    assert!(h.is_open());
    assert!(h.error_codes().is_empty(), "the limit is not an error");
}

#[test]
fn requests_answered_at_once_never_pause_the_connection() {
    let h = limited(2, Answer::Ok);
    h.feed(five_gets().as_bytes());
    assert_eq!(
        h.requests(),
        5,
        "each answer made room for the next buffered request"
    );
    assert_eq!(statuses(&h.output()), [200; 5]);
    assert!(auto_read(&h));
}

#[test]
fn bytes_read_while_paused_are_decoded_after_the_resume() {
    let h = limited(1, Answer::Never);
    h.feed(get("/a").as_bytes());
    assert!(!auto_read(&h));
    // What a read batch already under way still brings.
    h.feed(get("/b").as_bytes());
    assert_eq!(h.requests(), 1);
    h.respond_ok(HttpResponse::new(200).body("a"));
    assert_eq!(h.requests(), 2);
    h.respond_ok(HttpResponse::new(200).body("b"));
    assert!(auto_read(&h));
    assert_eq!(statuses(&h.output()), [200, 200]);
}

#[test]
fn an_application_that_turned_auto_read_off_gets_its_read_once_the_codec_resumes() {
    let h = limited(1, Answer::Never);
    h.ch.channel()
        .set_option(netloop_transport::ChannelOption::AutoRead(false))
        .unwrap();
    h.feed(format!("{}{}", get("/a"), get("/b")).as_bytes());
    assert_eq!(h.requests(), 1);
    h.ch.channel().read(); // held back while paused
    h.respond_ok(HttpResponse::new(200).body("a"));
    assert_eq!(h.requests(), 2);
    assert!(!auto_read(&h), "the application's setting is left alone");
}

#[test]
fn zero_is_refused() {
    let zero = HttpServerConfig {
        max_pipelined_requests: Some(0),
        ..HttpServerConfig::default()
    };
    assert_eq!(zero.validate().unwrap_err().code(), "ERR_INVALID_ARG_VALUE");
}

#[test]
fn the_head_clock_does_not_run_while_requests_wait_for_the_limit() {
    let cfg = HttpServerConfig {
        max_pipelined_requests: Some(1),
        header_timeout: Some(std::time::Duration::from_millis(1000)),
        request_timeout: Some(std::time::Duration::from_millis(1000)),
        ..config()
    };
    let h = harness_with(cfg, Answer::Never);
    h.feed(format!("{}{}", get("/a"), get("/b")).as_bytes());
    h.ch.advance_time(std::time::Duration::from_secs(5));
    assert!(h.is_open(), "the waiting request is the server's delay");
    assert_eq!(h.output(), "");
    h.respond_ok(HttpResponse::new(200).body("a"));
    assert_eq!(h.requests(), 2);
    h.respond_ok(HttpResponse::new(200).body("b"));
    assert_eq!(statuses(&h.output()), [200, 200]);
}
