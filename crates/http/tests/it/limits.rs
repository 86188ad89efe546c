//! Limits: answered natively with their status, then the connection closes.

use crate::common;

use common::*;
use netloop_http::HttpServerConfig;

fn refused(cfg: HttpServerConfig, input: &[u8]) -> (Vec<u16>, Vec<String>, bool) {
    let h = harness_with(cfg, Answer::Ok);
    h.feed(input);
    let text = h.output();
    let rs = parse_responses(&text, &[]);
    if let Some(last) = rs.last() {
        if last.status >= 400 {
            assert_eq!(last.header("connection"), Some("close"), "{text}");
            assert_eq!(last.header("content-length"), Some("0"));
        }
    }
    (
        rs.iter().map(|r| r.status).collect(),
        h.error_codes(),
        h.is_open(),
    )
}

#[test]
fn a_head_over_max_head_size_is_431_even_before_it_ends() {
    let cfg = HttpServerConfig {
        max_head_size: 256,
        ..config()
    };
    let mut req = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ".to_vec();
    req.extend(std::iter::repeat(b'a').take(300));
    assert_eq!(
        refused(cfg, &req),
        (vec![431], vec!["HPE_HEADER_OVERFLOW".into()], false)
    );
}

#[test]
fn a_target_over_max_uri_length_is_414() {
    let cfg = HttpServerConfig {
        max_uri_length: 100,
        ..config()
    };
    let long = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(120));
    assert_eq!(
        refused(cfg.clone(), long.as_bytes()),
        (vec![414], vec!["ERR_HTTP_URI_TOO_LONG".into()], false)
    );
    // Still arriving: refused once the request line passes the limit plus 64 bytes.
    let endless = format!("GET /{}", "a".repeat(200));
    assert_eq!(refused(cfg, endless.as_bytes()).0, [414]);
}

#[test]
fn a_body_over_max_body_size_is_413_from_its_length_or_its_chunks() {
    let cfg = HttpServerConfig {
        max_body_size: 10,
        ..config()
    };
    let by_length = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n";
    assert_eq!(
        refused(cfg.clone(), by_length),
        (vec![413], vec!["ERR_HTTP_BODY_TOO_LARGE".into()], false)
    );
    let chunked =
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\n";
    assert_eq!(refused(cfg, chunked).0, [413]);
}

#[test]
fn more_header_fields_than_max_header_count_is_431() {
    let cfg = HttpServerConfig {
        max_header_count: 4,
        ..config()
    };
    let req = "GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n";
    assert_eq!(
        refused(cfg, req.as_bytes()),
        (vec![431], vec!["ERR_HTTP_TOO_MANY_HEADERS".into()], false)
    );
}

#[test]
fn a_refusal_waits_for_the_responses_to_earlier_requests() {
    let h = harness(Answer::Never);
    h.feed(format!("{}GET / HTTP/1.1\nHost: x\r\n\r\n", get("/ok")).as_bytes());
    assert_eq!(h.output(), "", "request 0 is unanswered");
    assert_eq!(h.requests(), 1);
    assert_eq!(h.error_codes(), ["HPE_CR_EXPECTED"]);
    h.respond_ok(netloop_http::HttpResponse::new(200).for_request(0));
    assert_eq!(statuses(&h.output()), [200, 400]);
    assert!(!h.is_open());
}

#[test]
fn a_bad_chunk_in_an_aggregated_body_answers_that_request_with_400() {
    let (statuses, codes, open) = refused(
        config(),
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    );
    assert_eq!((statuses, open), (vec![400], false));
    assert_eq!(codes, ["HPE_INVALID_CHUNK_SIZE"]);
}

#[test]
fn input_after_a_refusal_is_ignored() {
    let h = harness(Answer::Ok);
    h.feed(b"GET / HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n");
    h.feed(get("/later").as_bytes());
    assert_eq!(statuses(&h.output()), [400]);
    assert_eq!(h.requests(), 0);
}
