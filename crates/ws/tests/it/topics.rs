//! Topics: one publish, encoded once, reaches every subscriber on every loop (loops of this
//! thread directly, loops of another thread through one task each); unsubscribing and
//! closing take channels out; a slow subscriber drops messages instead of growing.

use crate::support;

use std::rc::Rc;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use netloop_transport::{Bytes, EmbeddedChannel};
use netloop_ws::frame::Opcode;
use netloop_ws::{Role, TopicError, TopicRegistry, WsConfig};
use support::*;

/// `n` server connections, each on its own hand-driven loop of the calling thread.
pub(crate) fn servers(n: usize) -> Vec<Ws> {
    (0..n).map(|_| Ws::server()).collect()
}

/// The text frames `ws` was sent, once its loop ran its tasks (the flush after the batch).
pub(crate) fn texts(ws: &Ws) -> Vec<String> {
    ws.ch.run_pending_tasks();
    ws.sent()
        .into_iter()
        .map(|f| {
            assert_eq!(f.opcode, Opcode::Text);
            String::from_utf8(f.payload.to_vec()).unwrap()
        })
        .collect()
}

/// Connections on loops of another thread, subscribed to `topic`; the thread runs their
/// loops until each has `want` frames (or 10 s pass) and sends back what each received.
pub(crate) fn remote_subscribers(
    topics: &TopicRegistry,
    topic: &'static str,
    n: usize,
    want: usize,
) -> (mpsc::Receiver<()>, thread::JoinHandle<Vec<Vec<String>>>) {
    let (ready_tx, ready) = mpsc::channel();
    let topics = topics.clone();
    let handle = thread::spawn(move || {
        let subs = servers(n);
        for ws in &subs {
            assert_eq!(topics.subscribe(ws.ch.channel(), topic), Ok(true));
        }
        ready_tx.send(()).unwrap();
        let mut got = vec![Vec::new(); n];
        let deadline = Instant::now() + Duration::from_secs(10);
        while got.iter().any(|g| g.len() < want) && Instant::now() < deadline {
            for (ws, g) in subs.iter().zip(&mut got) {
                ws.ch.run_pending_tasks();
                g.extend(texts(ws));
            }
            thread::sleep(Duration::from_millis(1));
        }
        got
    });
    (ready, handle)
}

#[test]
fn one_publish_reaches_every_subscriber_on_every_loop_encoded_once() {
    let topics = TopicRegistry::new();
    let here = servers(3);
    for ws in &here {
        assert_eq!(topics.subscribe(ws.ch.channel(), "room"), Ok(true));
    }
    let (ready, remote) = remote_subscribers(&topics, "room", 2, 1);
    ready.recv().unwrap();
    assert_eq!(topics.subscriber_count("room"), 5);

    assert_eq!(
        topics.publish_text("room", "hello"),
        5,
        "3 written here, 2 sent"
    );
    for ws in &here {
        assert_eq!(
            texts(ws),
            ["hello"],
            "written at once, flushed after the batch"
        );
    }
    let got = remote.join().unwrap();
    assert_eq!(
        got,
        vec![vec!["hello".to_string()]; 2],
        "the other thread's loops too"
    );
    let stats = topics.stats();
    assert_eq!((stats.published, stats.encoded), (1, 1), "encoded once");
    assert_eq!(stats.delivered, 5);
    assert_eq!(stats.dropped, 0);
}

#[test]
fn every_subscriber_gets_the_same_frame_bytes() {
    let topics = TopicRegistry::new();
    let here = servers(2);
    for ws in &here {
        topics.subscribe(ws.ch.channel(), "t").unwrap();
    }
    topics.publish_binary("t", &[1, 2, 3]);
    // Past the size small frames are coalesced at (copied once per loop and batch).
    let big = vec![7u8; 5000];
    topics.publish_binary("t", &big);
    let frames: Vec<Vec<Bytes>> = here
        .iter()
        .map(|ws| {
            ws.ch.run_pending_tasks();
            std::iter::from_fn(|| ws.ch.read_outbound())
                .map(|m| m.into_bytes().unwrap())
                .collect()
        })
        .collect();
    for f in &frames {
        assert_eq!(f.len(), 2);
        assert_eq!(
            &f[0][..],
            b"\x82\x03\x01\x02\x03",
            "a binary server frame, unmasked"
        );
        assert_eq!(&f[1][..4], b"\x82\x7e\x13\x88");
    }
    assert_eq!(
        frames[0][1].as_ptr(),
        frames[1][1].as_ptr(),
        "one buffer shared, not a copy per subscriber"
    );
}

#[test]
fn subscribers_without_server_context_takeover_share_one_compressed_frame() {
    use netloop_ws::deflate::Inflater;
    use netloop_ws::{DeflateConfig, PerMessageDeflate};
    let topics = TopicRegistry::new();
    let agreed = |no_takeover: bool, bits: u8| PerMessageDeflate {
        server_no_context_takeover: no_takeover,
        client_no_context_takeover: false,
        server_max_window_bits: bits,
        client_max_window_bits: 15,
    };
    let config = WsConfig {
        permessage_deflate: Some(DeflateConfig::default()),
        ..WsConfig::default()
    };
    let subs = [
        Ws::deflating(config.clone(), agreed(true, 15)),
        Ws::deflating(config.clone(), agreed(true, 15)),
        Ws::deflating(config.clone(), agreed(true, 10)), // another window: its own variant
        Ws::deflating(config.clone(), agreed(false, 15)), // context takeover: plain
        Ws::server(),                                    // no deflate: plain
    ];
    for ws in &subs {
        topics.subscribe(ws.ch.channel(), "t").unwrap();
    }
    // Past the size small plain frames are coalesced at: the plain frame is shared as such.
    let text = "topics compress once per publish. ".repeat(130);
    assert_eq!(topics.publish_text("t", &text), 5);
    let raw: Vec<Bytes> = subs
        .iter()
        .map(|ws| {
            ws.ch.run_pending_tasks();
            ws.ch.read_outbound().unwrap().into_bytes().unwrap()
        })
        .collect();
    assert_eq!(
        raw[0].as_ptr(),
        raw[1].as_ptr(),
        "one compressed buffer shared"
    );
    assert_ne!(raw[0].as_ptr(), raw[2].as_ptr());
    assert_eq!(raw[3].as_ptr(), raw[4].as_ptr(), "the plain frame shared");
    for (i, frame) in raw.iter().enumerate() {
        let compressed = i < 3;
        assert_eq!(frame[0] & 0x40 != 0, compressed, "RSV1 of subscriber {i}");
        let mut buf = netloop_transport::BytesMut::from(&frame[..]);
        let f = netloop_ws::FrameDecoder::new(Role::Client, 1 << 20)
            .allow_rsv1(true)
            .decode(&mut buf)
            .unwrap()
            .unwrap();
        let payload = if compressed {
            assert!(f.payload.len() < text.len() / 4);
            Inflater::new(agreed(true, 15).server())
                .inflate(&f.payload, true, 1 << 20)
                .unwrap()
        } else {
            f.payload
        };
        assert_eq!(&payload[..], text.as_bytes(), "subscriber {i}");
    }
    // Under the threshold nobody gets it compressed.
    topics.publish_text("t", "short");
    for ws in &subs[..3] {
        ws.ch.run_pending_tasks();
        let frame = ws.ch.read_outbound().unwrap().into_bytes().unwrap();
        assert_eq!(&frame[..], b"\x81\x05short");
    }
}

#[test]
fn a_publish_from_a_thread_without_a_loop_reaches_the_loops_through_tasks() {
    let topics = TopicRegistry::new();
    let here = servers(2);
    for ws in &here {
        topics.subscribe(ws.ch.channel(), "news").unwrap();
    }
    let publisher = topics.clone();
    let sent = thread::spawn(move || {
        (0..3)
            .map(|i| publisher.publish_text("news", &format!("m{i}")))
            .sum::<usize>()
    })
    .join()
    .unwrap();
    assert_eq!(
        sent, 6,
        "each publish counts the subscribers its tasks go to"
    );
    for ws in &here {
        assert!(
            ws.ch.read_outbound().is_none(),
            "nothing before the loop runs its tasks"
        );
        ws.ch.run_pending_tasks();
        assert_eq!(
            texts(ws),
            ["m0", "m1", "m2"],
            "in order, flushed after the batch"
        );
    }
    assert_eq!(topics.stats().encoded, 3);
}

#[test]
fn unsubscribing_takes_a_channel_out_of_one_topic() {
    let topics = TopicRegistry::new();
    let [a, b] = [Ws::server(), Ws::server()];
    topics.subscribe(a.ch.channel(), "x").unwrap();
    topics.subscribe(a.ch.channel(), "y").unwrap();
    topics.subscribe(b.ch.channel(), "x").unwrap();
    assert_eq!(
        topics.subscribe(a.ch.channel(), "x"),
        Ok(false),
        "once per topic"
    );
    assert_eq!(topics.subscriber_count("x"), 2);

    assert!(topics.unsubscribe(a.ch.channel(), "x"));
    assert!(!topics.unsubscribe(a.ch.channel(), "x"), "not twice");
    assert_eq!(topics.subscriber_count("x"), 1);
    assert_eq!(topics.topics_of(a.ch.channel()), ["y"]);
    assert_eq!(topics.publish_text("x", "only b"), 1);
    assert!(texts(&a).is_empty());
    assert_eq!(texts(&b), ["only b"]);

    assert!(topics.unsubscribe(b.ch.channel(), "x"));
    assert_eq!(topics.subscriber_count("x"), 0);
    assert_eq!(topics.publish_text("x", "nobody"), 0);
    assert_eq!(topics.stats().encoded, 1, "no subscriber, no encoding");
}

#[test]
fn publish_from_a_subscriber_reaches_the_others_only() {
    let topics = TopicRegistry::new();
    let [a, b, c] = [Ws::server(), Ws::server(), Ws::server()];
    for ws in [&a, &b, &c] {
        topics.subscribe(ws.ch.channel(), "room").unwrap();
    }
    assert_eq!(
        topics.publish_from(a.ch.channel(), "room", false, b"from a"),
        2
    );
    assert!(
        texts(&a).is_empty(),
        "the sender does not get its own message"
    );
    assert_eq!(texts(&b), ["from a"]);
    assert_eq!(texts(&c), ["from a"]);
    // A sender that is not subscribed leaves nobody out.
    let d = Ws::server();
    assert_eq!(
        topics.publish_from(d.ch.channel(), "room", false, b"from d"),
        3
    );
    assert_eq!(texts(&a), ["from d"]);
}

#[test]
fn a_closed_channel_leaves_every_topic() {
    let topics = TopicRegistry::new();
    let [a, b] = [Ws::server(), Ws::server()];
    for t in ["x", "y"] {
        topics.subscribe(a.ch.channel(), t).unwrap();
    }
    topics.subscribe(b.ch.channel(), "x").unwrap();
    a.ch.close();
    assert_eq!(topics.subscriber_count("x"), 1);
    assert_eq!(topics.subscriber_count("y"), 0);
    assert!(topics.topics_of(a.ch.channel()).is_empty());
    assert_eq!(
        topics.subscribe(a.ch.channel(), "x"),
        Err(TopicError::ChannelClosed)
    );
    assert_eq!(topics.unsubscribe_all(b.ch.channel()), 1);
    assert_eq!(topics.subscriber_count("x"), 0);
}

#[test]
fn a_slow_subscriber_drops_messages_instead_of_queueing_them() {
    let topics = TopicRegistry::new();
    let [slow, fast] = [Ws::server(), Ws::server()];
    topics.subscribe(slow.ch.channel(), "t").unwrap();
    topics.subscribe(fast.ch.channel(), "t").unwrap();
    // 100 KiB written and not flushed: past the 64 KiB high water mark.
    slow.ch.channel().write(Bytes::from(vec![b'x'; 100 * 1024]));
    assert!(!slow.ch.channel().is_writable());
    let pending = slow.ch.channel().pending_outbound_bytes();
    let message = "m".repeat(1000);
    for _ in 0..200 {
        topics.publish_text("t", &message);
    }
    assert_eq!(texts(&fast).len(), 200, "the others get every message");
    slow.ch.run_pending_tasks(); // its loop's end of batch
    assert_eq!(
        slow.ch.channel().pending_outbound_bytes(),
        pending,
        "nothing queued for the slow one"
    );
    let stats = topics.stats();
    assert_eq!((stats.delivered, stats.dropped), (200, 200));

    slow.ch.channel().flush();
    assert!(slow.ch.channel().is_writable(), "drained");
    topics.publish_text("t", "again");
    slow.ch.run_pending_tasks();
    let frames = slow.sent();
    assert_eq!(
        frames.last().map(|f| &f.payload[..]),
        Some(&b"again"[..]),
        "once writable it receives again"
    );
}

#[test]
fn only_server_websocket_channels_subscribe() {
    let topics = TopicRegistry::new();
    let plain = EmbeddedChannel::new(vec![]);
    assert_eq!(
        topics.subscribe(plain.channel(), "t"),
        Err(TopicError::NotWebSocket)
    );
    assert_eq!(TopicError::NotWebSocket.code(), "ERR_INVALID_STATE");
    let client = Ws::new(WsConfig {
        role: Role::Client,
        pause_while_unwritable: false,
        ..WsConfig::default()
    });
    assert_eq!(
        topics.subscribe(client.ch.channel(), "t"),
        Err(TopicError::ClientRole)
    );
    assert_eq!(topics.subscriber_count("t"), 0);
}

#[test]
fn a_channel_subscribed_before_its_upgrade_receives_once_upgraded() {
    let topics = TopicRegistry::new();
    let plain = EmbeddedChannel::new(vec![]);
    topics
        .subscribe_when_upgraded(plain.channel(), "t")
        .unwrap();
    assert_eq!(
        topics.publish_text("t", "early"),
        0,
        "skipped: no WebSocket yet"
    );
    assert!(plain.read_outbound().is_none());
    let ws = netloop_ws::WebSocketHandler::new(WsConfig::default()).unwrap();
    plain.pipeline().add_last("ws", Rc::new(ws)).unwrap();
    assert_eq!(topics.publish_text("t", "late"), 1);
    plain.run_pending_tasks();
    assert_eq!(
        &plain.read_outbound().unwrap().as_bytes().unwrap()[..],
        b"\x81\x04late"
    );
}

#[test]
fn registries_are_separate_namespaces() {
    let (one, two) = (TopicRegistry::new(), TopicRegistry::new());
    let ws = Ws::server();
    one.subscribe(ws.ch.channel(), "t").unwrap();
    assert_eq!(two.publish_text("t", "elsewhere"), 0);
    assert_eq!(one.publish_text("t", "here"), 1);
    assert_eq!(texts(&ws), ["here"]);
}
