//! The client codec writing requests: the request line, framing fields, `Host`, streamed
//! bodies, and refusals that fail only their write.

use crate::client_support;

use bytes::Bytes;
use client_support::*;
use netloop_http::{HttpClientConfig, HttpClientRequest, HttpContent, Version};
use netloop_transport::Message;

#[test]
fn a_body_gets_its_content_length() {
    let c = client();
    c.request(
        HttpClientRequest::new("PUT", "/x")
            .header("Host", "h")
            .body("abc"),
    );
    assert_eq!(
        c.output(),
        "PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
    );
}

#[test]
fn a_small_request_is_one_buffer_and_a_large_body_follows_the_head_uncopied() {
    let c = client();
    c.request(HttpClientRequest::new("POST", "/").body("small"));
    assert_eq!(c.ch.outbound_len(), 1);
    c.output();
    let big = Bytes::from(vec![b'z'; 100_000]);
    c.request(HttpClientRequest::new("POST", "/").body(big.clone()));
    assert_eq!(c.ch.outbound_len(), 2);
    c.ch.read_outbound();
    let body = c.ch.read_outbound().unwrap();
    assert_eq!(body.as_bytes().unwrap().as_ptr(), big.as_ptr(), "no copy");
}

#[test]
fn host_comes_from_the_config_when_the_request_has_none() {
    let c = client_with(HttpClientConfig {
        host: Some(Bytes::from_static(b"example.com:8080")),
        ..HttpClientConfig::default()
    });
    c.request(HttpClientRequest::new("GET", "/").header("Accept", "*/*"));
    c.request(HttpClientRequest::new("GET", "/").header("host", "other"));
    assert_eq!(
        c.output(),
        "GET / HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n\r\nGET / HTTP/1.1\r\nhost: other\r\n\r\n"
    );
}

#[test]
fn a_post_with_an_empty_body_gets_content_length_zero_and_a_get_nothing() {
    let c = client();
    c.request(HttpClientRequest::new("POST", "/"));
    c.request(HttpClientRequest::new("GET", "/"));
    assert_eq!(
        c.output(),
        "POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\nGET / HTTP/1.1\r\n\r\n"
    );
}

#[test]
fn a_streamed_request_is_chunked_and_ends_with_its_trailers() {
    let c = client();
    c.request(HttpClientRequest::new("POST", "/up").streamed());
    c.send_ok(Message::user(HttpContent::new("hello")));
    let mut last = HttpContent::last("!");
    last.trailers
        .push((Bytes::from_static(b"X-Sum"), Bytes::from_static(b"6")));
    c.send_ok(Message::user(last));
    assert_eq!(
        c.output(),
        "POST /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1\r\n!\r\n0\r\nX-Sum: 6\r\n\r\n"
    );
    let after = c.send(Message::user(HttpContent::new("more")));
    assert_eq!(
        after.unwrap().unwrap_err().code(),
        "ERR_STREAM_WRITE_AFTER_END"
    );
}

#[test]
fn a_streamed_request_with_content_length_is_sent_raw_and_may_not_exceed_it() {
    let c = client();
    c.request(
        HttpClientRequest::new("POST", "/")
            .header("Content-Length", "4")
            .streamed(),
    );
    c.send_ok(Message::user(HttpContent::new("ab")));
    let over = c.send(Message::user(HttpContent::new("cde")));
    assert_eq!(
        over.unwrap().unwrap_err().code(),
        "ERR_HTTP_CONTENT_LENGTH_MISMATCH"
    );
    c.send_ok(Message::user(HttpContent::last("cd")));
    assert_eq!(
        c.output(),
        "POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd"
    );
}

#[test]
fn an_http_10_request_line_is_written_as_such() {
    let c = client();
    c.request(HttpClientRequest::new("GET", "/old").version(Version::Http10));
    assert_eq!(c.output(), "GET /old HTTP/1.0\r\n\r\n");
    let streamed = c.send(Message::user(
        HttpClientRequest::new("POST", "/")
            .version(Version::Http10)
            .streamed(),
    ));
    assert_eq!(
        streamed.unwrap().unwrap_err().code(),
        "ERR_HTTP_INVALID_HEADER_VALUE",
        "a streamed HTTP/1.0 request needs a Content-Length"
    );
}

#[test]
fn an_invalid_header_name_fails_only_that_write() {
    let c = client();
    let bad = c.send(Message::user(
        HttpClientRequest::new("GET", "/").header("Bad Name", "v"),
    ));
    assert_eq!(bad.unwrap().unwrap_err().code(), "ERR_INVALID_HTTP_TOKEN");
    assert_eq!(c.output(), "", "nothing written");
    assert!(c.is_open());
    c.request(HttpClientRequest::new("GET", "/"));
    assert_eq!(c.output(), "GET / HTTP/1.1\r\n\r\n");
    // The refused request had id 0: the response answers id 1.
    c.feed(b"HTTP/1.1 204 No Content\r\n\r\n");
    assert_eq!(c.responses()[0].id, 1);
    assert!(c.error_codes().is_empty());
}

#[test]
fn other_refusals_name_their_cause() {
    let cases = [
        (
            HttpClientRequest::new("GET", "/a b"),
            "ERR_UNESCAPED_CHARACTERS",
        ),
        (
            HttpClientRequest::new("GE(T", "/"),
            "ERR_INVALID_HTTP_TOKEN",
        ),
        (
            HttpClientRequest::new("GET", "/").header("X", "a\nb"),
            "ERR_INVALID_CHAR",
        ),
        (
            HttpClientRequest::new("POST", "/")
                .header("Content-Length", "9")
                .body("short"),
            "ERR_HTTP_CONTENT_LENGTH_MISMATCH",
        ),
    ];
    let c = client();
    for (req, code) in cases {
        let r = c.send(Message::user(req));
        assert_eq!(r.unwrap().unwrap_err().code(), code);
    }
    let stray = c.send(Message::user(HttpContent::new("x")));
    assert_eq!(
        stray.unwrap().unwrap_err().code(),
        "ERR_STREAM_WRITE_AFTER_END"
    );
    assert_eq!(c.output(), "");
}
