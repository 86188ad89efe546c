//! Pipelining: responses leave in request order whatever order the application writes them.

use crate::common;

use common::*;
use netloop_http::HttpResponse;
use netloop_transport::{ChannelPromise, Message};

fn three_requests() -> String {
    format!("{}{}{}", get("/a"), get("/b"), get("/c"))
}

#[test]
fn requests_in_one_read_are_delivered_in_order_with_increasing_ids() {
    let h = harness(Answer::Never);
    h.feed(three_requests().as_bytes());
    let seen = h.seen.borrow();
    let got: Vec<_> = seen
        .requests
        .iter()
        .map(|r| (r.id, String::from_utf8_lossy(&r.target).into_owned()))
        .collect();
    assert_eq!(got, [(0, "/a".into()), (1, "/b".into()), (2, "/c".into())]);
}

#[test]
fn responses_written_in_reverse_order_leave_in_request_order() {
    let h = harness(Answer::Never);
    h.feed(three_requests().as_bytes());
    let r2 = h.respond(HttpResponse::new(200).body("c").for_request(2));
    let r1 = h.respond(HttpResponse::new(200).body("b").for_request(1));
    assert_eq!(h.output(), "", "held until the response to request 0");
    assert!(
        r1.is_none() && r2.is_none(),
        "held writes are not complete yet"
    );
    h.respond(HttpResponse::new(200).body("a").for_request(0));
    let bodies: Vec<_> = parse_responses(&h.output(), &[])
        .into_iter()
        .map(|p| p.body)
        .collect();
    assert_eq!(bodies, ["a", "b", "c"]);
    assert!(h.is_open());
}

#[test]
fn responses_without_an_id_answer_the_oldest_request() {
    let h = harness(Answer::Never);
    h.feed(three_requests().as_bytes());
    for body in ["1", "2", "3"] {
        h.respond_ok(HttpResponse::new(200).body(body));
    }
    let bodies: Vec<_> = parse_responses(&h.output(), &[])
        .into_iter()
        .map(|p| p.body)
        .collect();
    assert_eq!(bodies, ["1", "2", "3"]);
}

#[test]
fn a_second_response_to_the_same_request_fails_with_headers_sent() {
    let h = harness(Answer::Never);
    h.feed(get("/").as_bytes());
    h.respond_ok(HttpResponse::new(200).for_request(0));
    let again = h.respond(HttpResponse::new(200).for_request(0)).unwrap();
    assert_eq!(again.unwrap_err().code(), "ERR_HTTP_HEADERS_SENT");
    let unsolicited = h.respond(HttpResponse::new(200)).unwrap();
    assert_eq!(unsolicited.unwrap_err().code(), "ERR_HTTP_HEADERS_SENT");
}

#[test]
fn a_streamed_response_holds_back_the_next_one_until_its_last_piece() {
    let h = harness(Answer::Never);
    h.feed(format!("{}{}", get("/a"), get("/b")).as_bytes());
    h.respond(HttpResponse::new(200).streamed().for_request(0));
    h.respond(HttpResponse::new(200).body("second").for_request(1));
    h.send(netloop_transport::Message::user(
        netloop_http::HttpContent::new("fir"),
    ));
    let partial = h.output();
    assert!(!partial.contains("second"), "{partial}");
    h.send(netloop_transport::Message::user(
        netloop_http::HttpContent::last("st"),
    ));
    let text = partial + &h.output();
    let bodies: Vec<_> = parse_responses(&text, &[])
        .into_iter()
        .map(|p| p.body)
        .collect();
    assert_eq!(bodies, ["first", "second"]);
}

#[test]
fn requests_split_across_reads_at_every_byte_give_the_same_requests() {
    let all = format!(
        "{}POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello{}",
        get("/a"),
        get("/c")
    );
    for split in 1..all.len() {
        let h = harness(Answer::Ok);
        h.feed(&all.as_bytes()[..split]);
        h.feed(&all.as_bytes()[split..]);
        let seen = h.seen.borrow();
        let got: Vec<_> = seen
            .requests
            .iter()
            .map(|r| {
                (
                    String::from_utf8_lossy(&r.target).into_owned(),
                    r.body.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("/a".to_string(), bytes::Bytes::new()),
                ("/p".to_string(), bytes::Bytes::from_static(b"hello")),
                ("/c".to_string(), bytes::Bytes::new())
            ],
            "split at {split}"
        );
        assert_eq!(statuses(&h.output()), [200, 200, 200]);
    }
}

#[test]
fn frozen_responses_nobody_waits_on_leave_in_one_message_and_count_as_pending() {
    let h = harness(Answer::Never);
    h.feed(format!("{}{}", three_requests(), get("/d")).as_bytes());
    let ch = h.ch.channel();
    let frozen = ["1", "2", "3"].map(|b| HttpResponse::new(200).body(b).freeze().unwrap());
    let before = ch.pending_outbound_bytes();
    for f in &frozen {
        ch.write_with(Message::user(f.clone()), ChannelPromise::void());
    }
    let held = ch.pending_outbound_bytes() - before;
    // The three are pending as three messages (the batch counts as the outbound buffer does).
    assert!(held >= 3 * 96, "pending grew by {held} bytes");
    // A response somebody waits on goes after them, in order.
    let last = ch.write_future(Message::user(HttpResponse::new(200).body("4")));
    ch.flush();
    h.ch.run_pending_tasks();
    assert!(matches!(last.result(), Some(Ok(()))));
    let mut messages = Vec::new();
    while let Some(m) = h.ch.read_outbound() {
        messages.push(String::from_utf8_lossy(m.as_bytes().unwrap()).into_owned());
    }
    assert_eq!(
        messages.len(),
        2,
        "the batch of three, then the one waited on"
    );
    let bodies: Vec<_> = parse_responses(&messages.concat(), &[])
        .into_iter()
        .map(|p| p.body)
        .collect();
    assert_eq!(bodies, ["1", "2", "3", "4"]);
    assert_eq!(ch.pending_outbound_bytes(), before);
    assert!(h.is_open());
}
