//! Topics' batches: the publishes of one loop turn reach each subscriber in one catch-up (one
//! flush), in publish order among the channel's own writes and across registries and loops;
//! joining, leaving and closing within a batch; subscribers past their high water mark.

use crate::support;
use crate::topics::{remote_subscribers, servers, texts};

use std::rc::Rc;

use netloop_transport::EmbeddedChannel;
use netloop_ws::frame::Opcode;
use netloop_ws::{TopicRegistry, WsConfig};
use support::*;

/// Counts the flushes that pass it on their way to the socket.
#[derive(Default)]
struct FlushCounter(std::cell::Cell<usize>);

impl netloop_transport::ChannelHandler for FlushCounter {
    fn flush(
        &self,
        ctx: &netloop_transport::ChannelHandlerContext,
    ) -> netloop_transport::HandlerResult {
        self.0.set(self.0.get() + 1);
        ctx.flush();
        Ok(())
    }
}

#[test]
fn the_publishes_of_one_batch_cost_one_flush_per_subscriber() {
    let topics = TopicRegistry::new();
    let counter = Rc::new(FlushCounter::default());
    let ws = netloop_ws::WebSocketHandler::new(WsConfig::default()).unwrap();
    let ch = EmbeddedChannel::new(vec![("count", counter.clone()), ("ws", Rc::new(ws))]);
    topics.subscribe(ch.channel(), "t").unwrap();
    for i in 0..5 {
        topics.publish_text("t", &format!("m{i}"));
    }
    assert_eq!(counter.0.get(), 0, "written, not flushed yet");
    assert!(ch.read_outbound().is_none());
    ch.run_pending_tasks();
    assert_eq!(counter.0.get(), 1, "one flush after the batch");
    assert_eq!(ch.outbound_len(), 1, "the five frames as one write");
    let out = ch.read_outbound().unwrap().into_bytes().unwrap();
    assert_eq!(
        &out[..],
        b"\x81\x02m0\x81\x02m1\x81\x02m2\x81\x02m3\x81\x02m4",
        "in order"
    );
}

#[test]
fn a_channels_own_writes_and_published_messages_keep_their_order() {
    let topics = TopicRegistry::new();
    let [ws, other] = [Ws::server(), Ws::server()];
    topics.subscribe(ws.ch.channel(), "t").unwrap();
    topics.subscribe(other.ch.channel(), "t").unwrap();
    topics.publish_text("t", "p1");
    topics.publish_text("t", "p2");
    // Written by the application between publishes of one batch: it goes out after p1 and
    // p2 (their span is written first) and before p3.
    ws.send(netloop_ws::WebSocketFrame::text("own"));
    topics.publish_text("t", "p3");
    assert_eq!(texts(&ws), ["p1", "p2", "own", "p3"]);
    assert_eq!(texts(&other), ["p1", "p2", "p3"]);
}

#[test]
fn a_subscriber_left_out_of_a_publish_gets_the_rest_in_order() {
    let topics = TopicRegistry::new();
    let [a, b] = [Ws::server(), Ws::server()];
    topics.subscribe(a.ch.channel(), "t").unwrap();
    topics.subscribe(b.ch.channel(), "t").unwrap();
    topics.subscribe(b.ch.channel(), "u").unwrap();
    topics.publish_text("t", "t1");
    topics.publish_from(a.ch.channel(), "t", false, b"t2"); // not to a
    topics.publish_text("u", "u1"); // b only, from another topic's batch
    topics.publish_text("t", "t3");
    assert_eq!(texts(&a), ["t1", "t3"]);
    assert_eq!(texts(&b), ["t1", "t2", "u1", "t3"]);
    topics.publish_text("t", "next batch");
    assert_eq!(texts(&a), ["next batch"]);
}

#[test]
fn publishes_of_two_registries_to_one_channel_keep_their_order() {
    let (one, two) = (TopicRegistry::new(), TopicRegistry::new());
    let ws = Ws::server();
    one.subscribe(ws.ch.channel(), "t").unwrap();
    two.subscribe(ws.ch.channel(), "t").unwrap();
    two.publish_text("t", "b1");
    one.publish_text("t", "a1");
    two.publish_text("t", "b2");
    one.publish_text("t", "a2");
    assert_eq!(texts(&ws), ["b1", "a1", "b2", "a2"]);
}

/// Holds everything written to it and lets nothing through (a peer that reads nothing):
/// what it holds counts in the channel's pending bytes.
#[derive(Default)]
struct Stuck;

impl netloop_transport::ChannelHandler for Stuck {
    fn flush(
        &self,
        _ctx: &netloop_transport::ChannelHandlerContext,
    ) -> netloop_transport::HandlerResult {
        Ok(())
    }
}

#[test]
fn a_batch_past_a_subscribers_high_water_mark_is_cut_at_one_message_past_it() {
    let topics = TopicRegistry::new();
    let ws = Ws::server();
    topics.subscribe(ws.ch.channel(), "t").unwrap();
    let ch = ws.ch.channel();
    // 60 KiB written by the application, not flushed: under the 64 KiB high water mark.
    ch.write(netloop_ws::WebSocketFrame::text("x".repeat(60 * 1024)));
    assert!(ch.is_writable());
    let message = "m".repeat(1000);
    for _ in 0..20 {
        topics.publish_text("t", &message);
    }
    let got = texts(&ws);
    assert_eq!(got[0].len(), 60 * 1024, "the application's message first");
    assert!(got[1..].iter().all(|m| *m == message));
    assert_eq!(got.len(), 21, "flushed as it went: nothing dropped");
    let stats = topics.stats();
    assert_eq!((stats.delivered, stats.dropped), (20, 0));
}

#[test]
fn a_subscriber_that_cannot_drain_holds_its_mark_plus_one_message() {
    let topics = TopicRegistry::new();
    let ws = netloop_ws::WebSocketHandler::new(WsConfig::default()).unwrap();
    let ch = EmbeddedChannel::new(vec![("stuck", Rc::new(Stuck)), ("ws", Rc::new(ws))]);
    topics.subscribe(ch.channel(), "t").unwrap();
    let message = "m".repeat(1000);
    for _ in 0..100 {
        topics.publish_text("t", &message);
    }
    ch.run_pending_tasks();
    let pending = ch.channel().pending_outbound_bytes();
    let high = 64 * 1024;
    assert!(
        pending > high && pending <= high + 2 * 1024,
        "its mark plus one message (and the outbound entries' overhead): {pending}"
    );
    let stats = topics.stats();
    assert_eq!(stats.delivered + stats.dropped, 100);
    assert!(stats.dropped > 30, "the rest dropped: {stats:?}");
}

#[test]
fn the_publishes_of_one_turn_reach_every_subscriber_on_two_loops_in_order() {
    let topics = TopicRegistry::new();
    let here = servers(2);
    for ws in &here {
        topics.subscribe(ws.ch.channel(), "t").unwrap();
    }
    let (ready, remote) = remote_subscribers(&topics, "t", 2, 50);
    ready.recv().unwrap();
    let sent: Vec<String> = (0..50).map(|i| format!("m{i}")).collect();
    for m in &sent {
        topics.publish_text("t", m);
    }
    for ws in &here {
        assert_eq!(texts(ws), sent, "this thread's loops: one batch, in order");
    }
    for got in remote.join().unwrap() {
        assert_eq!(got, sent, "the other thread's loops: in order, once each");
    }
}

#[test]
fn joining_or_leaving_within_a_batch_gets_exactly_the_messages_published_while_in() {
    let topics = TopicRegistry::new();
    let [a, b] = [Ws::server(), Ws::server()];
    topics.subscribe(a.ch.channel(), "t").unwrap();
    topics.publish_text("t", "1");
    topics.subscribe(b.ch.channel(), "t").unwrap();
    topics.publish_text("t", "2");
    assert!(topics.unsubscribe(a.ch.channel(), "t"));
    topics.publish_text("t", "3");
    topics.subscribe(a.ch.channel(), "u").unwrap();
    topics.publish_text("u", "4");
    assert_eq!(texts(&a), ["1", "2", "4"]);
    assert_eq!(texts(&b), ["2", "3"]);
    topics.publish_text("t", "5");
    assert_eq!(topics.unsubscribe_all(b.ch.channel()), 1);
    topics.publish_text("t", "6");
    assert_eq!(texts(&b), ["5"], "what was published before it left all");
}

/// Closes its channel at the first write that reaches it (a peer gone mid-batch).
#[derive(Default)]
struct CloseOnWrite;

impl netloop_transport::ChannelHandler for CloseOnWrite {
    fn write(
        &self,
        ctx: &netloop_transport::ChannelHandlerContext,
        _msg: netloop_transport::Message,
        _promise: netloop_transport::ChannelPromise,
    ) -> netloop_transport::HandlerResult {
        ctx.close();
        Ok(())
    }
}

#[test]
fn a_subscriber_closing_during_the_end_of_batch_writes_leaves_the_others_their_messages() {
    let topics = TopicRegistry::new();
    let ws = netloop_ws::WebSocketHandler::new(WsConfig::default()).unwrap();
    let closing = EmbeddedChannel::new(vec![("close", Rc::new(CloseOnWrite)), ("ws", Rc::new(ws))]);
    let [a, b] = [Ws::server(), Ws::server()];
    topics.subscribe(a.ch.channel(), "t").unwrap();
    topics.subscribe(closing.channel(), "t").unwrap();
    topics.subscribe(b.ch.channel(), "t").unwrap();
    topics.publish_text("t", "1");
    a.ch.close();
    topics.publish_text("t", "2");
    closing.run_pending_tasks(); // its end of batch: the write closes it, taking it out
    assert!(!closing.channel().is_open());
    assert_eq!(topics.subscriber_count("t"), 1);
    assert_eq!(texts(&b), ["1", "2"]);
    a.ch.run_pending_tasks();
    let got: Vec<(Opcode, Vec<u8>)> = a
        .sent()
        .into_iter()
        .map(|f| (f.opcode, f.payload.to_vec()))
        .collect();
    assert_eq!(
        got[0],
        (Opcode::Text, b"1".to_vec()),
        "published before its close: first"
    );
    assert_eq!(got[1].0, Opcode::Close, "then its close frame, and not 2");
    assert_eq!(got.len(), 2);
    topics.publish_text("t", "3");
    assert_eq!(texts(&b), ["3"]);
}
