//! `Expect: 100-continue` and `HEAD`.

use crate::common;

use common::*;
use netloop_http::HttpResponse;

const EXPECT: &str =
    "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n";

#[test]
fn continue_is_sent_when_the_body_is_wanted_and_the_request_then_completes() {
    let h = harness(Answer::Ok);
    h.feed(EXPECT.as_bytes());
    assert_eq!(h.output(), "HTTP/1.1 100 Continue\r\n\r\n");
    assert_eq!(h.requests(), 0, "the body has not arrived");
    h.feed(b"hello");
    assert_eq!(&h.seen.borrow().requests[0].body[..], b"hello");
    assert!(h.seen.borrow().requests[0].expect_continue);
    assert_eq!(statuses(&h.output()), [200]);
    assert!(h.is_open());
}

#[test]
fn continue_waits_for_the_responses_to_earlier_requests() {
    let h = harness(Answer::Never);
    h.feed(format!("{}{EXPECT}", get("/first")).as_bytes());
    assert_eq!(h.output(), "", "the 100 belongs after the first response");
    h.respond_ok(HttpResponse::new(200).body("1").for_request(0));
    let text = h.output();
    assert!(
        text.ends_with("\r\n\r\n1HTTP/1.1 100 Continue\r\n\r\n"),
        "{text:?}"
    );
}

#[test]
fn a_final_answer_before_the_body_skips_continue_and_closes() {
    let h = harness(Answer::Never);
    h.feed(format!("{}{EXPECT}", get("/first")).as_bytes());
    // The application refuses the upload before answering the first request.
    h.respond(HttpResponse::new(401).for_request(1));
    h.respond_ok(HttpResponse::new(200).for_request(0));
    let rs = parse_responses(&h.output(), &[]);
    assert_eq!(rs.iter().map(|r| r.status).collect::<Vec<_>>(), [200, 401]);
    assert_eq!(rs[1].header("connection"), Some("close"));
    assert!(!h.is_open());
}

#[test]
fn another_expectation_is_refused_with_417_and_closes() {
    let h = harness(Answer::Ok);
    h.feed(b"POST / HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 1\r\n\r\nx");
    assert_eq!(statuses(&h.output()), [417]);
    assert_eq!(h.error_codes(), ["ERR_HTTP_EXPECTATION_FAILED"]);
    assert!(!h.is_open());
}

#[test]
fn expect_in_http10_is_ignored() {
    let h = harness(Answer::Ok);
    h.feed(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx");
    assert_eq!(statuses(&h.output()), [200]);
}

#[test]
fn head_keeps_content_length_and_writes_no_body() {
    let h = harness(Answer::Never);
    h.feed(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n");
    h.feed(get("/").as_bytes());
    h.respond_ok(HttpResponse::new(200).body("twelve bytes"));
    h.respond_ok(HttpResponse::new(200).body("body"));
    let text = h.output();
    let rs = parse_responses(&text, &[true]);
    assert_eq!(rs[0].header("content-length"), Some("12"));
    assert_eq!(rs[0].body, "");
    assert_eq!(rs[1].body, "body");
    assert!(!text.contains("twelve"));
}

#[test]
fn head_with_an_explicit_length_and_no_body_keeps_that_length() {
    let h = harness(Answer::Never);
    h.feed(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n");
    h.respond_ok(HttpResponse::new(200).header("Content-Length", "1234"));
    let text = h.output();
    assert!(text.contains("Content-Length: 1234\r\n"), "{text}");
    assert!(text.ends_with("\r\n\r\n"));
}
