//! The client codec reading responses: framing, aggregation, pipelining, interim responses.

use crate::client_support;

use client_support::*;
use netloop_http::{HttpClientConfig, HttpClientRequest, Version};
use netloop_transport::{ChannelInputShutdown, ChannelOptions, EmbeddedChannel, ReadCounter};
use std::rc::Rc;

#[test]
fn a_content_length_body_is_delivered_whole_in_the_response() {
    let c = client();
    c.get();
    c.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello");
    let r = &c.responses()[0];
    assert_eq!((r.id, r.status, &r.reason[..]), (0, 200, &b"OK"[..]));
    assert_eq!(r.version, Version::Http11);
    assert_eq!(&r.body[..], b"hello");
    assert_eq!(r.headers.get("x-a"), Some(&b"b"[..]));
    assert!(r.keep_alive && !r.streaming && !r.upgraded);
    assert!(c.is_open());
    assert!(c.error_codes().is_empty());
}

#[test]
fn a_chunked_body_is_joined_with_its_trailers() {
    let c = client();
    c.get();
    c.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5;x=y\r\npedia\r\n0\r\nX-Sum: 9\r\n\r\n");
    let r = &c.responses()[0];
    assert_eq!(&r.body[..], b"Wikipedia");
    assert_eq!(r.trailers.len(), 1);
    assert_eq!(
        (&r.trailers[0].0[..], &r.trailers[0].1[..]),
        (&b"X-Sum"[..], &b"9"[..])
    );
    assert!(r.keep_alive);
}

#[test]
fn a_close_delimited_body_ends_when_the_connection_does() {
    let c = client();
    c.get();
    c.feed(b"HTTP/1.1 200 OK\r\n\r\nsome ");
    c.feed(b"bytes");
    assert!(c.responses().is_empty(), "the end is not known yet");
    c.ch.close();
    let r = &c.responses()[0];
    assert_eq!(&r.body[..], b"some bytes");
    assert!(
        !r.keep_alive,
        "a close-delimited body never keeps the connection"
    );
    assert!(c.error_codes().is_empty());
}

#[test]
fn an_input_shutdown_ends_a_close_delimited_body_too() {
    let c = client();
    c.request(HttpClientRequest::new("GET", "/").version(Version::Http10));
    c.feed(b"HTTP/1.0 200 OK\r\n\r\nold");
    c.ch.pipeline()
        .fire_user_event_triggered(Box::new(ChannelInputShutdown));
    c.ch.run_pending_tasks();
    let r = &c.responses()[0];
    assert_eq!((&r.body[..], r.version), (&b"old"[..], Version::Http10));
    assert!(c.ch.read_user_event().is_some(), "the event is passed on");
}

#[test]
fn a_head_response_has_no_body_and_the_next_pipelined_response_follows_in_the_same_read() {
    let c = client();
    c.request(HttpClientRequest::new("HEAD", "/").header("Host", "x"));
    c.get();
    c.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    let rs = c.responses();
    assert_eq!(rs.len(), 2);
    assert_eq!((rs[0].id, rs[0].body.len()), (0, 0));
    assert_eq!(rs[0].headers.get("content-length"), Some(&b"100"[..]));
    assert_eq!((rs[1].id, &rs[1].body[..]), (1, &b"ok"[..]));
}

#[test]
fn responses_204_and_304_have_no_body_whatever_their_content_length() {
    let c = client();
    c.get();
    c.get();
    c.get();
    c.feed(b"HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n!");
    let rs = c.responses();
    let got: Vec<_> = rs.iter().map(|r| (r.id, r.status, r.body.len())).collect();
    assert_eq!(got, [(0, 204, 0), (1, 304, 0), (2, 200, 1)]);
    assert!(rs.iter().all(|r| r.keep_alive));
}

#[test]
fn a_100_continue_is_informational_and_the_final_response_has_the_same_id() {
    let c = client();
    c.request(
        HttpClientRequest::new("POST", "/up")
            .header("Host", "x")
            .header("Expect", "100-continue")
            .body("data"),
    );
    c.feed(b"HTTP/1.1 100 Continue\r\n\r\n");
    c.feed(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
    let rs = c.responses();
    let got: Vec<_> = rs
        .iter()
        .map(|r| (r.id, r.status, r.is_informational()))
        .collect();
    assert_eq!(got, [(0, 100, true), (0, 103, true), (0, 201, false)]);
}

#[test]
fn three_pipelined_requests_answered_in_one_read_get_ids_0_1_2() {
    let c = client();
    for path in ["/a", "/b", "/c"] {
        c.request(HttpClientRequest::new("GET", path).header("Host", "x"));
    }
    assert_eq!(
        c.output(),
        "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n"
    );
    c.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nb\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nc");
    let got: Vec<_> = c
        .responses()
        .iter()
        .map(|r| (r.id, String::from_utf8(r.body.to_vec()).unwrap()))
        .collect();
    assert_eq!(got, [(0, "a".into()), (1, "b".into()), (2, "c".into())]);
}

#[test]
fn a_body_above_the_aggregate_limit_is_streamed_in_pieces_summing_to_it() {
    let c = client_with(HttpClientConfig {
        aggregate_limit: 8,
        ..HttpClientConfig::default()
    });
    c.get();
    c.get();
    c.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n0123456789");
    c.feed(b"abcdefghij");
    let r = &c.responses()[0];
    assert!(r.streaming && r.body.is_empty());
    assert_eq!(c.content(), b"0123456789abcdefghij");
    let pieces = c.contents();
    assert!(pieces.iter().all(|p| p.request_id == Some(0)));
    assert!(pieces.last().unwrap().last);
    // A chunked body that grows past the limit: the bytes so far, then the rest.
    c.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n5\r\nfghij\r\n0\r\nT: 1\r\n\r\n");
    let r = &c.responses()[1];
    assert!(r.streaming);
    let second: Vec<_> = c
        .contents()
        .into_iter()
        .filter(|p| p.request_id == Some(1))
        .collect();
    let joined: Vec<u8> = second.iter().flat_map(|p| p.data.to_vec()).collect();
    assert_eq!(joined, b"abcdefghij");
    let last = second.last().unwrap();
    assert!(last.last && last.trailers.len() == 1);
}

#[test]
fn bodies_up_to_the_limit_stay_whole_and_zero_streams_every_body() {
    let c = client_with(HttpClientConfig {
        aggregate_limit: 0,
        ..HttpClientConfig::default()
    });
    c.get();
    c.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    assert!(c.responses()[0].streaming);
    assert_eq!(c.content(), b"ok");
}

#[test]
fn without_auto_read_a_partial_response_asks_for_another_read() {
    let ch = EmbeddedChannel::unregistered(ChannelOptions {
        auto_read: false,
        ..ChannelOptions::default()
    });
    let counter = Rc::new(ReadCounter::default());
    ch.pipeline().add_last("reads", counter.clone()).unwrap();
    let codec = netloop_http::HttpClientCodec::new(HttpClientConfig::default()).unwrap();
    ch.pipeline().add_last("http", Rc::new(codec)).unwrap();
    ch.register();
    ch.write_outbound(netloop_transport::Message::user(HttpClientRequest::new(
        "GET", "/",
    )));
    let before = counter.reads();
    ch.write_inbound(&b"HTTP/1.1 200 OK\r\nContent-Len"[..]);
    assert_eq!(counter.reads(), before + 1, "partial head: read more");
    ch.write_inbound(&b"gth: 0\r\n\r\n"[..]);
    assert_eq!(
        counter.reads(),
        before + 1,
        "a response was fired: the application decides"
    );
    assert!(ch.read_inbound().is_some());
}

#[test]
fn removing_the_codec_fires_the_bytes_not_decoded_yet() {
    let c = client();
    c.get();
    c.feed(b"HTTP/1.1 200 OK\r\nContent-");
    c.ch.pipeline().remove("http").unwrap();
    c.ch.run_pending_tasks();
    assert_eq!(c.raw(), b"HTTP/1.1 200 OK\r\nContent-");
}

#[test]
fn bytes_after_a_response_that_closes_the_connection_are_ignored() {
    let c = client();
    c.get();
    c.get();
    c.feed(
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
    );
    let rs = c.responses();
    assert_eq!(rs.len(), 1);
    assert!(!rs[0].keep_alive);
    c.ch.close();
    assert_eq!(c.responses().len(), 1, "the second request got nothing");
    assert!(c.error_codes().is_empty());
}
