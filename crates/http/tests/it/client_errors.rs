//! The client codec refusing responses: malformed ones, unexpected ones, limits, a connection
//! that ends too early. Each is one `exceptionCaught` and the channel closes.

use crate::client_support;

use client_support::*;
use netloop_http::HttpClientConfig;

fn refused(response: &[u8]) -> (Vec<String>, bool, usize) {
    let c = client();
    c.get();
    c.get();
    c.feed(response);
    c.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"); // ignored after the error
    (c.error_codes(), c.is_open(), c.responses().len())
}

#[test]
fn malformed_responses_are_refused_with_llhttp_codes_and_the_channel_closes() {
    let cases: [(&[u8], &str); 9] = [
        (b"HTTP/1.1 2000 OK\r\n\r\n", "HPE_INVALID_STATUS"),
        (b"HTTP/1.1 OK\r\n\r\n", "HPE_INVALID_STATUS"),
        (b"HTTP/1.1 099 Low\r\n\r\n", "HPE_INVALID_STATUS"),
        (b"ICY 200 OK\r\n\r\n", "HPE_INVALID_CONSTANT"),
        (b"HTTP/2.0 200 OK\r\n\r\n", "HPE_INVALID_VERSION"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "HPE_UNEXPECTED_CONTENT_LENGTH",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HPE_INVALID_CHUNK_SIZE",
        ),
        (
            b"HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n",
            "HPE_CR_EXPECTED",
        ),
        (
            b"HTTP/1.1 200 OK\r\nX-A: b\r\n  folded\r\nContent-Length: 0\r\n\r\n",
            "HPE_INVALID_HEADER_TOKEN",
        ),
    ];
    for (response, code) in cases {
        let (codes, open, responses) = refused(response);
        let text = String::from_utf8_lossy(response);
        assert_eq!(codes, [code], "{text:?}");
        assert!(!open, "the channel closes after {text:?}");
        assert_eq!(responses, 0, "nothing fired for {text:?}");
    }
}

#[test]
fn a_control_character_or_bare_cr_in_a_head_is_refused() {
    for response in [
        &b"HTTP/1.1 200 OK\r\nX: a\x01b\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX : a\r\n\r\n",
    ] {
        let (codes, open, _) = refused(response);
        assert_eq!(codes.len(), 1, "{:?}", String::from_utf8_lossy(response));
        assert!(codes[0].starts_with("HPE_"), "{codes:?}");
        assert!(!open);
    }
}

#[test]
fn a_101_to_a_request_without_upgrade_is_refused() {
    let (codes, open, _) = refused(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n");
    assert_eq!(codes, ["HPE_INVALID_STATUS"]);
    assert!(!open);
}

#[test]
fn a_response_with_no_request_waiting_is_unexpected() {
    let c = client();
    c.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(c.error_codes(), ["ERR_HTTP_UNEXPECTED_RESPONSE"]);
    assert!(!c.is_open());
    // One more than the requests written, in the same read: the first is delivered.
    let c = client();
    c.get();
    c.feed(b"HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n");
    assert_eq!(c.responses().len(), 1);
    assert_eq!(c.error_codes(), ["ERR_HTTP_UNEXPECTED_RESPONSE"]);
}

#[test]
fn the_connection_ending_inside_a_content_length_body_is_aborted() {
    let c = client();
    c.get();
    c.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort");
    c.ch.close();
    assert_eq!(c.error_codes(), ["ECONNRESET"]);
    assert!(c.responses().is_empty());
}

#[test]
fn the_connection_ending_inside_a_head_or_a_chunked_body_is_aborted_but_not_before_any_byte() {
    for partial in [
        &b"HTTP/1.1 200 OK\r\nContent-"[..],
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
    ] {
        let c = client();
        c.get();
        c.feed(partial);
        c.ch.close();
        assert_eq!(c.error_codes(), ["ECONNRESET"]);
    }
    let c = client();
    c.get();
    c.ch.close();
    assert!(
        c.error_codes().is_empty(),
        "no response byte: only inactive"
    );
}

#[test]
fn a_body_over_max_body_size_is_refused() {
    let cfg = HttpClientConfig {
        max_body_size: 4,
        ..HttpClientConfig::default()
    };
    let bodies: [&[u8]; 3] = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\n",
        b"HTTP/1.1 200 OK\r\n\r\n12345",
    ];
    for response in bodies {
        let c = client_with(cfg.clone());
        c.get();
        c.feed(response);
        assert_eq!(c.error_codes(), ["ERR_HTTP_BODY_TOO_LARGE"]);
        assert!(!c.is_open());
    }
}

#[test]
fn a_head_over_max_head_size_or_max_header_count_is_refused_before_it_ends() {
    let c = client_with(HttpClientConfig {
        max_head_size: 64,
        ..HttpClientConfig::default()
    });
    c.get();
    c.feed(b"HTTP/1.1 200 OK\r\nX-Long: ");
    c.feed(&[b'a'; 100]);
    assert_eq!(c.error_codes(), ["HPE_HEADER_OVERFLOW"]);
    assert!(!c.is_open());
    let c = client_with(HttpClientConfig {
        max_header_count: 2,
        ..HttpClientConfig::default()
    });
    c.get();
    c.feed(b"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n");
    assert_eq!(c.error_codes(), ["ERR_HTTP_TOO_MANY_HEADERS"]);
}
