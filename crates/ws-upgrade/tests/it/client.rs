//! `WebSocketClientProtocolHandler` after `HttpClientCodec`: the request it sends, the switch
//! to frames in client role (bytes read with the `101` included, the codec gone), each refusal typed and the
//! channel closed; then a real client against the native echo server over TCP.

use crate::server;

use std::rc::Rc;
use std::sync::mpsc;
use std::time::Duration;

use netloop_http::{HttpClientCodec, HttpClientConfig};
use netloop_transport::eventloop::{EventLoopGroup, LoopConfig};
use netloop_transport::{
    Bootstrap, BytesMut, ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult,
    Message, TransportError, UserEvent,
};
use netloop_ws::client_handshake::ClientHandshake;
use netloop_ws::frame::{encode_frame, Opcode};
use netloop_ws::{CloseCode, CloseFrame, FrameDecoder, Role, WebSocketFrame, WebSocketHandler};
use netloop_ws_upgrade::{ClientHandshakeComplete, WebSocketClientProtocolHandler};

const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
const OK: &str =
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n";

fn channel(protocols: &[&str]) -> EmbeddedChannel {
    let protocols: Vec<String> = protocols.iter().map(|p| p.to_string()).collect();
    let handler = WebSocketClientProtocolHandler::new("/chat?room=1")
        .host("example.com")
        .header("Origin", "http://example.com")
        .handshake(ClientHandshake::with_key(KEY, protocols));
    EmbeddedChannel::new(vec![
        (
            "http",
            Rc::new(HttpClientCodec::new(HttpClientConfig::default()).unwrap()),
        ),
        ("ws", Rc::new(handler)),
    ])
}

fn output(ch: &EmbeddedChannel) -> Vec<u8> {
    std::iter::from_fn(|| ch.read_outbound())
        .flat_map(|m| m.as_bytes().expect("bytes").to_vec())
        .collect()
}

fn unmasked(opcode: Opcode, payload: &[u8]) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode_frame(&mut out, true, opcode, payload, None);
    out.to_vec()
}

#[test]
fn the_request_is_sent_once_active_with_the_key_version_and_offers() {
    let ch = channel(&["chat", "superchat"]);
    let head = String::from_utf8(output(&ch)).unwrap();
    assert!(head.starts_with("GET /chat?room=1 HTTP/1.1\r\n"), "{head}");
    for field in [
        "Host: example.com\r\n",
        "Upgrade: websocket\r\n",
        "Connection: Upgrade\r\n",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
        "Sec-WebSocket-Version: 13\r\n",
        "Sec-WebSocket-Protocol: chat, superchat\r\n",
        "Origin: http://example.com\r\n",
    ] {
        assert!(head.contains(field), "{field} in {head}");
    }
}

#[test]
fn an_accepted_answer_switches_to_client_frames_and_fires_handshake_complete() {
    let ch = channel(&["chat"]);
    output(&ch);
    let mut input = format!("{OK}Sec-WebSocket-Protocol: chat\r\n\r\n").into_bytes();
    input.extend_from_slice(&unmasked(Opcode::Text, b"early"));
    ch.write_inbound(input);
    ch.run_pending_tasks();
    ch.write_inbound(unmasked(Opcode::Binary, b"later"));
    let ws = ch.pipeline().get("ws").expect("a handler named ws");
    let ws = ws
        .as_any()
        .and_then(|a| a.downcast_ref::<WebSocketHandler>());
    assert_eq!(ws.map(|w| w.config().role), Some(Role::Client));
    // The HTTP codec left: only the frame handling stays.
    assert_eq!(ch.pipeline().names(), ["ws"]);
    let event = ch.read_user_event().expect("handshake complete");
    let Ok(done) = event.downcast::<ClientHandshakeComplete>() else {
        panic!("not the event")
    };
    assert_eq!(
        (done.target.as_str(), done.protocol.as_deref()),
        ("/chat?room=1", Some("chat"))
    );
    let frames: Vec<WebSocketFrame> = std::iter::from_fn(|| ch.read_inbound())
        .filter_map(|m| m.downcast::<WebSocketFrame>().ok())
        .collect();
    assert_eq!(
        frames,
        [
            WebSocketFrame::text("early"),
            WebSocketFrame::binary(b"later".to_vec())
        ]
    );
    // Outbound frames are masked (RFC 6455 §5.3) and decode as a client's.
    ch.write_outbound(Message::user("hi".to_string()));
    let out = output(&ch);
    assert_eq!(out[1] & 0x80, 0x80, "mask bit");
    let mut buf = BytesMut::from(&out[..]);
    let frame = FrameDecoder::new(Role::Server, 1024)
        .decode(&mut buf)
        .unwrap()
        .unwrap();
    assert_eq!(
        (frame.opcode, &frame.payload[..]),
        (Opcode::Text, &b"hi"[..])
    );
    ch.check_exception().unwrap();
}

#[test]
fn each_refused_answer_is_a_typed_error_and_the_channel_closes() {
    let cases = [
        ("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n".to_string(), "ERR_WS_HANDSHAKE_STATUS"),
        (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n".to_string(),
            "ERR_WS_HANDSHAKE_ACCEPT",
        ),
        (format!("{OK}Sec-WebSocket-Protocol: other\r\n\r\n"), "ERR_WS_HANDSHAKE_PROTOCOL"),
        (format!("{OK}Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n"), "ERR_WS_HANDSHAKE_EXTENSION"),
    ];
    for (answer, code) in cases {
        let ch = channel(&["chat"]);
        output(&ch);
        ch.write_inbound(answer.into_bytes());
        ch.run_pending_tasks();
        let err = ch.check_exception().expect_err(code);
        assert_eq!(err.code(), code, "{err}");
        assert!(!ch.channel().is_open(), "{code}: closed");
    }
}

#[test]
fn a_masked_frame_from_the_server_fails_the_connection_with_1002() {
    let ch = channel(&[]);
    output(&ch);
    let mut input = format!("{OK}\r\n").into_bytes();
    let mut frame = BytesMut::new();
    encode_frame(
        &mut frame,
        true,
        Opcode::Text,
        b"masked",
        Some([1, 2, 3, 4]),
    );
    input.extend_from_slice(&frame);
    ch.write_inbound(input);
    ch.run_pending_tasks();
    assert_eq!(ch.check_exception().unwrap_err().code(), "ERR_WS_BAD_MASK");
    let out = output(&ch);
    let mut buf = BytesMut::from(&out[..]);
    let close = FrameDecoder::new(Role::Server, 1024)
        .decode(&mut buf)
        .unwrap()
        .unwrap();
    assert_eq!(close.opcode, Opcode::Close);
    assert_eq!(&close.payload[..2], &1002u16.to_be_bytes());
    assert!(!ch.channel().is_open());
}

#[test]
fn the_end_of_the_connection_before_the_answer_is_aborted() {
    let ch = channel(&[]);
    output(&ch);
    ch.close();
    assert_eq!(
        ch.check_exception().unwrap_err().code(),
        "ERR_WS_HANDSHAKE_ABORTED"
    );
}

/// Reports what a client channel sees to the test thread.
struct Probe(mpsc::Sender<String>);

impl ChannelHandler for Probe {
    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        if let Ok(done) = event.downcast::<ClientHandshakeComplete>() {
            let _ = self.0.send(format!("open {:?}", done.protocol));
            ctx.write_and_flush(Message::user("héllo".to_string()));
            ctx.write_and_flush(Message::user(WebSocketFrame::binary(vec![0u8; 70_000])));
        }
        Ok(())
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        match msg.downcast::<WebSocketFrame>() {
            Ok(WebSocketFrame::Text(t)) => {
                let _ = self.0.send(format!("text {}", String::from_utf8_lossy(&t)));
            }
            Ok(WebSocketFrame::Binary(b)) => {
                let _ = self.0.send(format!("binary {}", b.len()));
                let close = CloseFrame::new(CloseCode(4001), "bye");
                ctx.write_and_flush(Message::user(WebSocketFrame::Close(close)));
            }
            Ok(WebSocketFrame::Close(c)) => {
                let _ = self.0.send(format!("close {:?}", c.code.map(|c| c.0)));
            }
            _ => {}
        }
        Ok(())
    }

    fn channel_inactive(&self, _: &ChannelHandlerContext) -> HandlerResult {
        let _ = self.0.send("inactive".into());
        Ok(())
    }

    fn exception_caught(&self, _: &ChannelHandlerContext, e: TransportError) -> HandlerResult {
        let _ = self.0.send(format!("error {}", e.code()));
        Ok(())
    }
}

#[test]
fn a_client_over_tcp_talks_to_the_native_server_and_closes_with_its_code() {
    let srv = server::serve("127.0.0.1:0".parse().unwrap()).expect("server starts");
    let group = EventLoopGroup::new(1, LoopConfig::default()).unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let host = srv.addr.to_string();
    let client = Bootstrap::new()
        .group(group.clone())
        .handler(move |ch| {
            let codec = HttpClientCodec::new(HttpClientConfig::default())
                .map_err(|e| TransportError::InvalidOption(e.to_string()))?;
            ch.pipeline().add_last("http", codec)?;
            let ws = WebSocketClientProtocolHandler::new("/echo")
                .host(host.clone())
                .subprotocols(vec!["chat".into()]);
            ch.pipeline().add_last("ws", ws)?;
            ch.pipeline().add_last("probe", Probe(tx.clone()))?;
            Ok(())
        })
        .connect(srv.addr)
        .wait()
        .expect("connects");
    let seen: Vec<String> = (0..5)
        .map(|_| rx.recv_timeout(Duration::from_secs(10)).expect("an event"))
        .collect();
    assert_eq!(
        seen,
        [
            "open Some(\"chat\")",
            "text héllo",
            "binary 70000",
            "close Some(4001)",
            "inactive"
        ]
    );
    client.close_future().wait().unwrap();
    let _ = group
        .shutdown_gracefully(Duration::ZERO, Duration::from_secs(2))
        .wait();
    srv.stop();
}
