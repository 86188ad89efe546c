//! `WebSocketServerProtocolHandler` after `HttpServerCodec`: the handshake, the switch to
//! frames (bytes read with the request included), refusals, and other requests.

use std::rc::Rc;

use netloop_http::{HttpRequest, HttpServerCodec, HttpServerConfig};
use netloop_transport::{BytesMut, EmbeddedChannel};
use netloop_ws::frame::{encode_frame, Opcode};
use netloop_ws::handshake::HandshakeOptions;
use netloop_ws::{FrameDecoder, Role, WebSocketEchoHandler, WebSocketHandler};
use netloop_ws_upgrade::{HandshakeComplete, WebSocketServerProtocolHandler};

const UPGRADE: &str = "GET /ws?room=1 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: chat\r\n\r\n";

fn channel(protocol: WebSocketServerProtocolHandler) -> EmbeddedChannel {
    EmbeddedChannel::new(vec![
        (
            "http",
            Rc::new(HttpServerCodec::new(HttpServerConfig::default()).unwrap()),
        ),
        ("ws", Rc::new(protocol)),
        ("echo", Rc::new(WebSocketEchoHandler::new())),
    ])
}

fn masked(opcode: Opcode, payload: &[u8]) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode_frame(&mut out, true, opcode, payload, Some([1, 2, 3, 4]));
    out.to_vec()
}

fn output(ch: &EmbeddedChannel) -> Vec<u8> {
    std::iter::from_fn(|| ch.read_outbound())
        .flat_map(|m| m.as_bytes().expect("bytes").to_vec())
        .collect()
}

/// Splits the HTTP head off the output and decodes the rest as server frames.
fn head_and_frames(out: &[u8]) -> (String, Vec<(Opcode, Vec<u8>)>) {
    let end = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    let head = String::from_utf8_lossy(&out[..end]).into_owned();
    let mut rest = BytesMut::from(&out[end..]);
    let mut decoder = FrameDecoder::new(Role::Client, 1 << 20);
    let frames = std::iter::from_fn(|| decoder.decode(&mut rest).unwrap())
        .map(|f| (f.opcode, f.payload.to_vec()))
        .collect();
    (head, frames)
}

#[test]
fn an_upgrade_is_answered_101_and_frames_read_with_the_request_are_echoed() {
    let options = HandshakeOptions {
        subprotocols: vec!["chat".into()],
        origin_check: None,
        ..HandshakeOptions::default()
    };
    let ch = channel(WebSocketServerProtocolHandler::new("/ws").handshake_options(options));
    let mut input = UPGRADE.as_bytes().to_vec();
    input.extend_from_slice(&masked(Opcode::Text, b"early"));
    ch.write_inbound(input);
    ch.run_pending_tasks();
    ch.write_inbound(masked(Opcode::Binary, b"\x00later"));
    let (head, frames) = head_and_frames(&output(&ch));
    assert!(
        head.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{head}"
    );
    assert!(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"));
    assert!(head.contains("Sec-WebSocket-Protocol: chat\r\n"));
    assert_eq!(
        frames,
        [
            (Opcode::Text, b"early".to_vec()),
            (Opcode::Binary, b"\x00later".to_vec())
        ]
    );
    assert_eq!(
        ch.pipeline().names(),
        ["ws", "echo"],
        "the HTTP codec left the pipeline at the switch"
    );
    let ws = ch.pipeline().get("ws").unwrap();
    assert!(
        ws.as_any()
            .and_then(|a| a.downcast_ref::<WebSocketHandler>())
            .is_some(),
        "the connection handler took its place"
    );
    let event = ch.read_user_event().expect("HandshakeComplete");
    let done = event
        .downcast::<HandshakeComplete>()
        .expect("HandshakeComplete");
    assert_eq!(
        (done.target.as_str(), done.protocol.as_deref()),
        ("/ws?room=1", Some("chat"))
    );
}

#[test]
fn a_bad_frame_after_the_upgrade_closes_with_its_code() {
    let ch = channel(WebSocketServerProtocolHandler::new("/ws"));
    ch.write_inbound(UPGRADE.as_bytes().to_vec());
    ch.run_pending_tasks();
    ch.write_inbound(b"\x81\x02hi".to_vec());
    let (_, frames) = head_and_frames(&output(&ch));
    assert_eq!(frames, [(Opcode::Close, 1002u16.to_be_bytes().to_vec())]);
    assert_eq!(ch.check_exception().unwrap_err().code(), "ERR_WS_BAD_MASK");
    assert!(!ch.channel().is_open());
}

#[test]
fn a_refused_handshake_is_answered_with_its_status_and_stays_http() {
    let ch = channel(WebSocketServerProtocolHandler::new("/ws"));
    let bad = UPGRADE.replace("Version: 13", "Version: 8");
    ch.write_inbound(bad.into_bytes());
    ch.run_pending_tasks();
    let out = String::from_utf8(output(&ch)).unwrap();
    assert!(
        out.starts_with("HTTP/1.1 426 Upgrade Required\r\n"),
        "{out}"
    );
    assert!(out.contains("Sec-WebSocket-Version: 13\r\n"));
    assert!(ch.channel().is_open());
    assert_eq!(ch.pipeline().names(), ["http", "ws", "echo"]);
    assert!(ch
        .pipeline()
        .get("ws")
        .unwrap()
        .as_any()
        .and_then(|a| a.downcast_ref::<WebSocketServerProtocolHandler>())
        .is_some());
}

#[test]
fn other_paths_and_plain_requests_pass_on_to_the_application() {
    let ch = EmbeddedChannel::new(vec![
        (
            "http",
            Rc::new(HttpServerCodec::new(HttpServerConfig::default()).unwrap()),
        ),
        ("ws", Rc::new(WebSocketServerProtocolHandler::new("/ws"))),
    ]);
    ch.write_inbound(b"GET /ws HTTP/1.1\r\nHost: x\r\n\r\n".to_vec());
    let req = ch
        .read_inbound()
        .unwrap()
        .downcast::<HttpRequest>()
        .unwrap();
    assert_eq!(&req.target[..], b"/ws");
    let ch = channel(WebSocketServerProtocolHandler::new("/other"));
    ch.write_inbound(UPGRADE.as_bytes().to_vec());
    assert!(output(&ch).is_empty(), "not answered by the handshake");
}
