//! Each frame RFC 6455 forbids fails the connection: its `ERR_WS_*` error reaches
//! `exceptionCaught`, a close frame with its code (1002, 1007, 1009) is written, the channel
//! closes, and nothing after the bad frame reaches the application.

use crate::support;

use netloop_ws::frame::Opcode;
use netloop_ws::{CloseCode, WsConfig};
use support::*;

/// Feeds a good message, the bad bytes, then another good message.
fn fails_with(bad: &[u8], config: WsConfig, code: u16, error: &str) {
    let ws = Ws::new(config);
    let mut input = text("before");
    input.extend_from_slice(bad);
    input.extend_from_slice(&text("after"));
    ws.feed(&input);
    let got = ws.received();
    assert_eq!(
        got.len(),
        1,
        "only the message before the bad frame: {got:?}"
    );
    assert_eq!(ws.error().as_deref(), Some(error));
    assert_eq!(ws.sent_close(), Some(CloseCode(code)), "{error}");
    assert!(!ws.is_open(), "{error}: the connection ends");
}

fn server(code: u16, error: &str, bad: &[u8]) {
    fails_with(bad, WsConfig::default(), code, error);
}

#[test]
fn reserved_bits_are_refused_with_1002() {
    for rsv in [0x40, 0x20, 0x10] {
        server(
            1002,
            "ERR_WS_RESERVED_BITS",
            &raw(0x80 | rsv | 1, 2, &[], b"hi"),
        );
    }
}

#[test]
fn reserved_opcodes_are_refused_with_1002() {
    for opcode in [3, 4, 5, 6, 7, 11, 12, 13, 14, 15] {
        server(
            1002,
            "ERR_WS_RESERVED_OPCODE",
            &raw(0x80 | opcode, 0, &[], b""),
        );
    }
}

#[test]
fn an_unmasked_client_frame_is_refused_with_1002() {
    server(1002, "ERR_WS_BAD_MASK", b"\x81\x02hi");
}

#[test]
fn a_control_frame_over_125_bytes_is_refused_with_1002() {
    server(
        1002,
        "ERR_WS_CONTROL_TOO_LONG",
        &raw(0x89, 126, &[0, 126], &[b'x'; 126]),
    );
}

#[test]
fn a_fragmented_control_frame_is_refused_with_1002() {
    server(
        1002,
        "ERR_WS_FRAGMENTED_CONTROL",
        &client(false, Opcode::Ping, b"x"),
    );
}

#[test]
fn lengths_not_in_their_shortest_form_are_refused_with_1002() {
    server(
        1002,
        "ERR_WS_BAD_LENGTH",
        &raw(0x82, 126, &[0, 5], b"hello"),
    );
    server(
        1002,
        "ERR_WS_BAD_LENGTH",
        &raw(0x82, 127, &[0, 0, 0, 0, 0, 0, 0, 5], b"hello"),
    );
    server(
        1002,
        "ERR_WS_BAD_LENGTH",
        &raw(0x82, 127, &[0, 0, 0, 0, 0, 0, 0xff, 0xff], b""),
    );
    server(
        1002,
        "ERR_WS_BAD_LENGTH",
        &raw(0x82, 127, &[0x80, 0, 0, 0, 0, 0, 0, 0], b""),
    );
}

#[test]
fn a_126_length_with_a_short_payload_waits_and_fails_nothing() {
    let ws = Ws::server();
    let frame = raw(0x82, 126, &[0, 200], &[7; 200]);
    ws.feed(&frame[..100]);
    assert!(ws.received().is_empty());
    assert!(ws.is_open());
    assert_eq!(ws.error(), None);
    ws.feed(&frame[100..]);
    assert_eq!(ws.received().len(), 1, "the rest completes it");
}

#[test]
fn continuation_without_a_message_is_refused_with_1002() {
    server(
        1002,
        "ERR_WS_UNEXPECTED_CONTINUATION",
        &client(true, Opcode::Continuation, b"x"),
    );
}

#[test]
fn a_new_message_inside_a_fragmented_one_is_refused_with_1002() {
    let mut bad = client(false, Opcode::Text, b"a");
    bad.extend_from_slice(&client(true, Opcode::Binary, b"b"));
    server(1002, "ERR_WS_EXPECTED_CONTINUATION", &bad);
}

#[test]
fn bad_close_payloads_are_refused() {
    server(
        1002,
        "ERR_WS_BAD_CLOSE_FRAME",
        &client(true, Opcode::Close, b"\x03"),
    );
    for code in [0u16, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000] {
        server(1002, "ERR_WS_BAD_CLOSE_FRAME", &close(code, ""));
    }
    server(
        1007,
        "ERR_WS_INVALID_UTF8",
        &client(true, Opcode::Close, b"\x03\xe8\xce\xba\xe1"),
    );
}

#[test]
fn invalid_utf8_in_text_is_refused_with_1007() {
    server(
        1007,
        "ERR_WS_INVALID_UTF8",
        &client(true, Opcode::Text, b"ok \xff"),
    );
    server(
        1007,
        "ERR_WS_INVALID_UTF8",
        &client(true, Opcode::Text, b"cut \xe2\x82"),
    );
}

#[test]
fn invalid_utf8_split_across_fragments_fails_at_the_fragment_that_breaks_it() {
    // "κόσμε" then a code point above U+10FFFF cut between fragments: fail fast, before
    // the message's last fragment arrives.
    let ws = Ws::server();
    ws.feed(&client(
        false,
        Opcode::Text,
        b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4",
    ));
    assert!(ws.is_open(), "a cut character may still be valid");
    ws.feed(&client(false, Opcode::Continuation, b"\x90"));
    assert_eq!(ws.error().as_deref(), Some("ERR_WS_INVALID_UTF8"));
    assert_eq!(ws.sent_close(), Some(CloseCode::INVALID_PAYLOAD));
    assert!(!ws.is_open());
}

#[test]
fn invalid_utf8_in_a_frame_still_arriving_fails_when_its_byte_arrives() {
    // One frame, "κόσμε", a code point above U+10FFFF, "edited": the bad byte arrives in the
    // second read, the rest of the frame never does (Autobahn 6.4.3 and 6.4.4).
    let frame = client(
        true,
        Opcode::Text,
        b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80edited",
    );
    let header = frame.len() - 21;
    for cut in [header + 11, header + 12] {
        let ws = Ws::server();
        ws.feed(&frame[..cut]);
        assert!(ws.is_open(), "valid so far (cut at {cut})");
        ws.feed(&frame[cut..header + 13]);
        assert_eq!(ws.error().as_deref(), Some("ERR_WS_INVALID_UTF8"));
        assert_eq!(ws.sent_close(), Some(CloseCode::INVALID_PAYLOAD));
        assert!(!ws.is_open());
    }
}

#[test]
fn text_arriving_a_byte_at_a_time_is_checked_as_it_comes_and_is_still_one_message() {
    // "é" cut after its first byte by a fragment boundary, then a continuation that arrives
    // a byte at a time: the check of the bytes still arriving carries the cut character.
    let ws = Ws::server();
    ws.feed(&client(false, Opcode::Text, b"\xc3"));
    let mut rest = vec![0xa9];
    rest.extend_from_slice("κόσμε€".as_bytes());
    let frame = client(true, Opcode::Continuation, &rest);
    for (i, b) in frame.iter().enumerate() {
        ws.feed(std::slice::from_ref(b));
        assert!(ws.is_open(), "after {} bytes", i + 1);
    }
    assert_eq!(ws.received(), [netloop_ws::WebSocketFrame::text("éκόσμε€")]);
}

#[test]
fn valid_utf8_split_across_fragments_is_one_message() {
    let ws = Ws::server();
    let euro = "€".as_bytes();
    ws.feed(&client(false, Opcode::Text, &euro[..1]));
    ws.feed(&client(false, Opcode::Continuation, &euro[1..2]));
    ws.feed(&client(true, Opcode::Continuation, &euro[2..]));
    assert_eq!(ws.received(), [netloop_ws::WebSocketFrame::text("€")]);
    assert!(ws.is_open());
}

#[test]
fn a_frame_over_max_frame_size_is_refused_with_1009_from_its_header() {
    let config = WsConfig {
        max_frame_size: 1000,
        max_message_size: 4000,
        ..WsConfig::default()
    };
    // Only the header arrives: refused before any payload is buffered.
    let ws = Ws::new(config.clone());
    ws.feed(&raw(0x82, 127, &(1u64 << 40).to_be_bytes(), b"")[..14]);
    assert_eq!(ws.error().as_deref(), Some("ERR_WS_FRAME_TOO_LARGE"));
    assert_eq!(ws.sent_close(), Some(CloseCode::MESSAGE_TOO_BIG));
    assert!(!ws.is_open());
    fails_with(
        &raw(0x82, 126, &1001u16.to_be_bytes(), &[0; 1001]),
        config,
        1009,
        "ERR_WS_FRAME_TOO_LARGE",
    );
}

#[test]
fn a_message_over_max_message_size_is_refused_with_1009() {
    let config = WsConfig {
        max_frame_size: 1000,
        max_message_size: 2500,
        ..WsConfig::default()
    };
    let mut bad = client(false, Opcode::Binary, &[1; 1000]);
    bad.extend_from_slice(&client(false, Opcode::Continuation, &[2; 1000]));
    bad.extend_from_slice(&client(true, Opcode::Continuation, &[3; 501]));
    fails_with(&bad, config, 1009, "ERR_WS_MESSAGE_TOO_LARGE");
}

#[test]
fn a_failure_is_reported_once_and_the_bytes_after_it_are_dropped() {
    let ws = Ws::server();
    let mut input = b"\x81\x02hi".to_vec();
    input.extend_from_slice(b"\x81\x02ho");
    input.extend_from_slice(&text("late"));
    ws.feed(&input);
    assert_eq!(ws.error().as_deref(), Some("ERR_WS_BAD_MASK"));
    assert_eq!(ws.error(), None, "reported once");
    assert!(ws.received().is_empty());
    assert!(!ws.is_open());
}

#[test]
fn a_client_refuses_masked_server_frames() {
    let config = WsConfig {
        role: netloop_ws::Role::Client,
        pause_while_unwritable: false,
        ..WsConfig::default()
    };
    let ws = Ws::new(config);
    ws.feed(&text("masked"));
    assert_eq!(ws.error().as_deref(), Some("ERR_WS_BAD_MASK"));
    assert!(!ws.is_open());
}
