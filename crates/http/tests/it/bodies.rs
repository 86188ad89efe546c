//! Request bodies: Content-Length and chunked, aggregated or streamed, split anywhere.

use crate::common;

use bytes::Bytes;
use common::*;
use netloop_http::HttpServerConfig;

const CHUNKED: &str = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
                       5;ext=\"q\"\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\nX-Trailer: t\r\n\r\n";

fn body_of(h: &Harness) -> (Vec<u8>, Vec<(Bytes, Bytes)>) {
    let seen = h.seen.borrow();
    let req = &seen.requests[0];
    if !req.streaming {
        return (req.body.to_vec(), req.trailers.clone());
    }
    let mut body = Vec::new();
    let mut trailers = Vec::new();
    for c in &seen.contents {
        body.extend_from_slice(&c.data);
        if c.last {
            trailers = c.trailers.clone();
        }
    }
    (body, trailers)
}

#[test]
fn a_chunked_body_split_at_every_byte_boundary_gives_the_same_request() {
    for split in 0..=CHUNKED.len() {
        let h = harness(Answer::Ok);
        h.feed(&CHUNKED.as_bytes()[..split]);
        h.feed(&CHUNKED.as_bytes()[split..]);
        let (body, trailers) = body_of(&h);
        assert_eq!(body, b"hello world!", "split at {split}");
        assert_eq!(trailers.len(), 1);
        assert_eq!(&trailers[0].0[..], b"X-Trailer");
        assert_eq!(statuses(&h.output()), [200], "split at {split}");
        assert!(h.error_codes().is_empty());
    }
}

#[test]
fn a_chunked_body_fed_one_byte_at_a_time_gives_the_same_request() {
    let h = harness(Answer::Ok);
    for b in CHUNKED.as_bytes() {
        h.feed(&[*b]);
    }
    assert_eq!(body_of(&h).0, b"hello world!");
    assert_eq!(h.requests(), 1);
}

fn small_aggregation() -> HttpServerConfig {
    HttpServerConfig {
        aggregate_limit: 8,
        ..config()
    }
}

#[test]
fn a_chunked_body_past_the_aggregation_limit_is_streamed_from_where_it_is() {
    for split in 0..=CHUNKED.len() {
        let h = harness_with(small_aggregation(), Answer::Ok);
        h.feed(&CHUNKED.as_bytes()[..split]);
        h.feed(&CHUNKED.as_bytes()[split..]);
        assert!(h.seen.borrow().requests[0].streaming, "split at {split}");
        let (body, trailers) = body_of(&h);
        assert_eq!(body, b"hello world!", "split at {split}");
        assert_eq!(trailers.len(), 1);
        let seen = h.seen.borrow();
        assert!(seen.contents.last().unwrap().last);
        assert_eq!(seen.contents.iter().filter(|c| c.last).count(), 1);
        assert_eq!(statuses(&h.output()), [200]);
    }
}

#[test]
fn a_content_length_body_above_the_limit_is_streamed_as_views_of_the_reads() {
    let h = harness_with(small_aggregation(), Answer::Ok);
    h.feed(b"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n0123456789");
    {
        let seen = h.seen.borrow();
        assert!(seen.requests[0].streaming);
        assert_eq!(seen.requests[0].body.len(), 0);
        assert_eq!(&seen.contents[0].data[..], b"0123456789");
        assert!(!seen.contents[0].last);
    }
    h.feed(b"abcdefghij");
    h.feed(get("/next").as_bytes());
    let seen = h.seen.borrow();
    assert!(seen.contents[1].last);
    assert_eq!(seen.requests.len(), 2);
    assert_eq!(statuses(&h.output()), [200, 200]);
}

#[test]
fn small_bodies_arrive_whole_in_the_request() {
    let h = harness(Answer::Ok);
    h.feed(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nab");
    assert_eq!(h.requests(), 0);
    h.feed(b"c");
    assert_eq!(&h.seen.borrow().requests[0].body[..], b"abc");
    assert!(h.seen.borrow().contents.is_empty());
}

#[test]
fn a_connection_ending_inside_a_streamed_body_reports_aborted() {
    let h = harness_with(small_aggregation(), Answer::Ok);
    h.feed(b"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n0123");
    h.ch.close();
    assert_eq!(h.error_codes(), ["ECONNRESET"]);
}

#[test]
fn empty_lines_before_a_request_are_ignored() {
    let h = harness(Answer::Ok);
    h.feed(b"\r\n\r\n");
    h.feed(b"\r");
    h.feed(format!("\n{}", get("/")).as_bytes());
    assert_eq!(statuses(&h.output()), [200]);
}
