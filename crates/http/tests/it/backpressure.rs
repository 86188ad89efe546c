//! Backpressure: held responses count toward the water marks, and no new request is decoded
//! (nor read) while the channel is not writable (node:http's rule).

use crate::common;

use common::*;
use netloop_http::HttpResponse;
use netloop_transport::Message;

const BIG: usize = 100 * 1024; // past the default high water mark (64 KiB)

#[test]
fn a_response_held_behind_an_earlier_one_counts_toward_the_water_marks() {
    let h = harness(Answer::Never);
    h.feed(format!("{}{}", get("/0"), get("/1")).as_bytes());
    assert!(h.ch.channel().is_writable());
    let f = h.ch.channel().write_future(Message::user(
        HttpResponse::new(200).body(vec![b'x'; BIG]).for_request(1),
    ));
    h.ch.channel().flush();
    assert_eq!(h.output(), "", "held until /0 is answered");
    assert!(!h.ch.channel().is_writable(), "the held body counts");
    assert!(h.ch.channel().pending_outbound_bytes() >= BIG);
    h.respond_ok(HttpResponse::new(200).body("zero").for_request(0));
    assert!(matches!(f.result(), Some(Ok(()))));
    assert_eq!(statuses(&h.output()), [200, 200]);
    assert!(
        h.ch.channel().is_writable(),
        "written: nothing counted any more"
    );
    assert_eq!(h.ch.channel().pending_outbound_bytes(), 0);
}

#[test]
fn no_request_is_decoded_or_read_while_the_channel_is_not_writable() {
    let h = harness(Answer::Never);
    h.feed(format!("{}{}", get("/0"), get("/1")).as_bytes());
    h.respond(HttpResponse::new(200).body(vec![b'x'; BIG]).for_request(1));
    assert!(!h.ch.channel().is_writable());
    h.feed(get("/2").as_bytes());
    assert_eq!(h.requests(), 2, "/2 waits while the responses do not drain");
    assert!(!h.ch.channel().is_auto_read(), "and reading stops");
    h.respond_ok(HttpResponse::new(200).body("zero").for_request(0));
    h.ch.run_pending_tasks();
    assert_eq!(h.requests(), 3, "writable again: /2 is decoded");
    assert!(h.ch.channel().is_auto_read(), "and reading resumes");
    h.respond_ok(HttpResponse::new(200).body("two").for_request(2));
    assert_eq!(statuses(&h.output()), [200, 200, 200]);
}

#[test]
fn a_body_under_way_keeps_arriving_while_the_channel_is_not_writable() {
    let h = harness(Answer::Never);
    h.feed(
        format!(
            "{}{}POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nabc",
            get("/0"),
            get("/1")
        )
        .as_bytes(),
    );
    // A big answer held behind /0 fills the channel before the upload's body is complete.
    h.respond(HttpResponse::new(200).body(vec![b'x'; BIG]).for_request(1));
    assert!(!h.ch.channel().is_writable());
    h.feed(b"def");
    assert_eq!(h.requests(), 3);
    assert_eq!(&h.seen.borrow().requests[2].body[..], b"abcdef");
}
