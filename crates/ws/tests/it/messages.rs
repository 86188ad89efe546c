//! Messages: whole (aggregated) or as fragments (streaming), control frames between
//! fragments, pings answered natively, and what the application writes going out as frames.

use crate::support;

use netloop_transport::Bytes;
use netloop_ws::frame::Opcode;
use netloop_ws::{Fragment, WebSocketFrame, WsConfig};
use support::*;

#[test]
fn text_and_binary_messages_reach_the_application_whole() {
    let ws = Ws::server();
    let mut input = text("hello");
    input.extend_from_slice(&client(true, Opcode::Binary, &[0, 1, 2]));
    input.extend_from_slice(&client(true, Opcode::Binary, &[9; 70_000]));
    ws.feed(&input);
    assert_eq!(
        ws.received(),
        [
            WebSocketFrame::text("hello"),
            WebSocketFrame::binary(vec![0u8, 1, 2]),
            WebSocketFrame::binary(vec![9u8; 70_000]),
        ]
    );
}

#[test]
fn fragments_are_joined_and_control_frames_between_them_are_handled_at_once() {
    let ws = Ws::server();
    ws.feed(&client(false, Opcode::Text, b"frag"));
    ws.feed(&client(true, Opcode::Ping, b"p1"));
    let pong = ws.sent();
    assert_eq!(pong.len(), 1);
    assert_eq!(
        (pong[0].opcode, &pong[0].payload[..]),
        (Opcode::Pong, &b"p1"[..]),
        "the pong does not wait for the message"
    );
    ws.feed(&client(false, Opcode::Continuation, b"men"));
    ws.feed(&client(true, Opcode::Pong, b"unsolicited"));
    ws.feed(&client(true, Opcode::Continuation, b"ted"));
    assert_eq!(ws.received(), [WebSocketFrame::text("fragmented")]);
    assert!(ws.sent().is_empty(), "a pong is not answered");
}

#[test]
fn a_message_split_at_every_byte_decodes_the_same() {
    let mut input = client(false, Opcode::Text, "κό".as_bytes());
    input.extend_from_slice(&client(true, Opcode::Ping, b"x"));
    input.extend_from_slice(&client(true, Opcode::Continuation, "σμε".as_bytes()));
    input.extend_from_slice(&client(true, Opcode::Binary, &[5; 300]));
    let ws = Ws::server();
    for byte in &input {
        ws.feed(&[*byte]);
    }
    assert_eq!(
        ws.received(),
        [
            WebSocketFrame::text("κόσμε"),
            WebSocketFrame::binary(vec![5u8; 300])
        ]
    );
    assert_eq!(ws.sent().len(), 1, "one pong");
    assert!(ws.is_open());
}

#[test]
fn streaming_mode_fires_each_fragment_as_it_comes() {
    let ws = Ws::new(WsConfig {
        aggregate: false,
        ..WsConfig::default()
    });
    ws.feed(&client(false, Opcode::Text, b"ab"));
    ws.feed(&client(true, Opcode::Continuation, b"c"));
    ws.feed(&client(true, Opcode::Binary, b"d"));
    let frag = |text, data: &'static [u8], first, last| {
        WebSocketFrame::Fragment(Fragment {
            text,
            data: Bytes::from_static(data),
            first,
            last,
        })
    };
    assert_eq!(
        ws.received(),
        [
            frag(true, b"ab", true, false),
            frag(true, b"c", false, true),
            frag(false, b"d", true, true)
        ]
    );
}

#[test]
fn auto_pong_can_be_turned_off_and_control_frames_forwarded() {
    let ws = Ws::new(WsConfig {
        auto_pong: false,
        forward_control_frames: true,
        ..WsConfig::default()
    });
    ws.feed(&client(true, Opcode::Ping, b"p"));
    ws.feed(&client(true, Opcode::Pong, b"q"));
    assert!(ws.sent().is_empty());
    assert_eq!(
        ws.received(),
        [
            WebSocketFrame::Ping(Bytes::from_static(b"p")),
            WebSocketFrame::Pong(Bytes::from_static(b"q"))
        ]
    );
}

#[test]
fn what_the_application_writes_goes_out_as_unmasked_frames() {
    let ws = Ws::server();
    ws.send(WebSocketFrame::text("hi"));
    ws.send(Bytes::from_static(b"\x00\x01"));
    ws.send(netloop_transport::Message::user(String::from("str")));
    ws.send(WebSocketFrame::Fragment(Fragment {
        text: false,
        data: Bytes::from_static(b"a"),
        first: true,
        last: false,
    }));
    ws.send(WebSocketFrame::Fragment(Fragment {
        text: false,
        data: Bytes::from_static(b"b"),
        first: false,
        last: true,
    }));
    ws.send(WebSocketFrame::Ping(Bytes::from_static(b"?")));
    let sent: Vec<_> = ws
        .sent()
        .into_iter()
        .map(|f| (f.fin, f.opcode, f.payload.to_vec()))
        .collect();
    assert_eq!(
        sent,
        [
            (true, Opcode::Text, b"hi".to_vec()),
            (true, Opcode::Binary, vec![0, 1]),
            (true, Opcode::Text, b"str".to_vec()),
            (false, Opcode::Binary, b"a".to_vec()),
            (true, Opcode::Continuation, b"b".to_vec()),
            (true, Opcode::Ping, b"?".to_vec()),
        ]
    );
}

#[test]
fn a_client_masks_what_it_writes() {
    let ws = Ws::new(WsConfig {
        role: netloop_ws::Role::Client,
        pause_while_unwritable: false,
        ..WsConfig::default()
    });
    ws.send(WebSocketFrame::text("hello"));
    ws.send(WebSocketFrame::text("hello"));
    let a = ws.ch.read_outbound().unwrap();
    let b = ws.ch.read_outbound().unwrap();
    let (a, b) = (a.as_bytes().unwrap(), b.as_bytes().unwrap());
    assert_eq!(a[1], 0x80 | 5, "mask bit set");
    assert_ne!(a[2..6], b[2..6], "a fresh key per frame");
    let mut decoder = netloop_ws::FrameDecoder::new(netloop_ws::Role::Server, 1 << 20);
    let mut buf = netloop_transport::BytesMut::from(&a[..]);
    assert_eq!(
        &decoder.decode(&mut buf).unwrap().unwrap().payload[..],
        b"hello"
    );
}

#[test]
fn the_echo_handler_sends_messages_back_natively() {
    use std::rc::Rc;
    let handler = netloop_ws::WebSocketHandler::new(WsConfig::default()).unwrap();
    let ch = netloop_transport::EmbeddedChannel::new(vec![
        ("ws", Rc::new(handler)),
        ("echo", Rc::new(netloop_ws::WebSocketEchoHandler::new())),
    ]);
    let mut input = text("one");
    input.extend_from_slice(&client(false, Opcode::Binary, b"tw"));
    input.extend_from_slice(&client(true, Opcode::Continuation, b"o"));
    ch.write_inbound(input);
    let out: Vec<u8> = std::iter::from_fn(|| ch.read_outbound())
        .flat_map(|m| m.as_bytes().unwrap().to_vec())
        .collect();
    assert_eq!(out, b"\x81\x03one\x82\x03two");
    assert_eq!(ch.inbound_len(), 0, "nothing reaches the tail");
}
