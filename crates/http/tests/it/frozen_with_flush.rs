//! A frozen response written together with its flush (`write_and_flush_with`, what the Node
//! binding does for a JS write followed by a flush): the codec encodes it and hands it to the
//! socket with the flush, and the bytes, order, promise and pending count are those of a write
//! then a flush.

use crate::common;

use common::*;
use netloop_http::{FrozenResponse, HttpResponse};
use netloop_transport::{ChannelFuture, ChannelPromise, Message};

fn frozen(body: &'static str) -> FrozenResponse {
    HttpResponse::new(200).body(body).freeze().unwrap()
}

/// Writes `f` with its flush from the tail; the write's future.
fn write_and_flush(h: &Harness, f: FrozenResponse) -> ChannelFuture {
    let p = ChannelPromise::new();
    let future = p.future().unwrap();
    h.ch.channel()
        .pipeline()
        .write_and_flush_with(Message::user(f), p);
    h.ch.run_pending_tasks();
    future
}

fn messages(h: &Harness) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(m) = h.ch.read_outbound() {
        out.push(String::from_utf8_lossy(m.as_bytes().unwrap()).into_owned());
    }
    out
}

fn bodies(text: &str) -> Vec<String> {
    parse_responses(text, &[])
        .into_iter()
        .map(|p| p.body)
        .collect()
}

#[test]
fn the_answer_to_the_front_request_leaves_at_once_in_one_message_and_leaves_nothing_pending() {
    let h = harness(Answer::Never);
    h.feed(get("/a").as_bytes());
    let before = h.ch.channel().pending_outbound_bytes();
    let p = write_and_flush(&h, frozen("1"));
    assert!(
        p.is_done() && p.is_success(),
        "the promise completes with the write"
    );
    let out = messages(&h);
    assert_eq!(out.len(), 1);
    let parsed = parse_responses(&out[0], &[]);
    assert_eq!(parsed.len(), 1);
    assert_eq!(parsed[0].body, "1");
    assert_eq!(parsed[0].header("content-length"), Some("1"));
    assert!(parsed[0].header("date").is_some());
    assert_eq!(h.ch.channel().pending_outbound_bytes(), before);
    assert!(h.is_open());
}

#[test]
fn it_goes_behind_responses_held_before_it() {
    let h = harness(Answer::Never);
    h.feed(format!("{}{}", get("/a"), get("/b")).as_bytes());
    let before = h.ch.channel().pending_outbound_bytes();
    h.ch.channel()
        .write_with(Message::user(frozen("1")), ChannelPromise::void());
    write_and_flush(&h, frozen("2"));
    assert_eq!(bodies(&messages(&h).concat()), ["1", "2"]);
    assert_eq!(h.ch.channel().pending_outbound_bytes(), before);
}

#[test]
fn an_answer_to_a_later_request_waits_for_the_front_ones() {
    let h = harness(Answer::Never);
    h.feed(format!("{}{}", get("/a"), get("/b")).as_bytes());
    let later = write_and_flush(&h, frozen("b").for_request(1));
    assert!(messages(&h).is_empty(), "held until request 0 is answered");
    assert!(!later.is_done());
    let front = write_and_flush(&h, frozen("a"));
    assert_eq!(bodies(&messages(&h).concat()), ["a", "b"]);
    assert!(front.is_success() && later.is_success());
}

#[test]
fn an_answer_to_a_request_that_closes_is_written_then_the_connection_closes() {
    let h = harness(Answer::Never);
    h.feed(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let p = write_and_flush(&h, frozen("bye"));
    let out = messages(&h).concat();
    let parsed = parse_responses(&out, &[]);
    assert_eq!(parsed.len(), 1);
    assert_eq!(parsed[0].body, "bye");
    assert_eq!(parsed[0].header("connection"), Some("close"));
    assert!(p.is_success());
    assert!(!h.is_open(), "the codec closes after the response");
}
