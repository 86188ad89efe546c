//! permessage-deflate on the client: `WebSocketClientProtocolHandler` with
//! `WsConfig::permessage_deflate` offers it, accepts the server's answer and hands the agreed
//! parameters to the client-role `WebSocketHandler` (compressed messages inflated, ours
//! compressed and masked); an answer the offer does not allow fails the handshake.

use std::rc::Rc;

use netloop_http::{HttpClientCodec, HttpClientConfig};
use netloop_transport::{BytesMut, EmbeddedChannel, Message};
use netloop_ws::client_handshake::ClientHandshake;
use netloop_ws::deflate::{Deflater, Inflater};
use netloop_ws::frame::{encode_frame, Opcode};
use netloop_ws::{
    DeflateConfig, FrameDecoder, PerMessageDeflate, Role, WebSocketFrame, WebSocketHandler,
    WsConfig,
};
use netloop_ws_upgrade::WebSocketClientProtocolHandler;

const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
const OK: &str =
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n";

fn channel(deflate: Option<DeflateConfig>) -> EmbeddedChannel {
    let handler = WebSocketClientProtocolHandler::new("/")
        .host("example.com")
        .handshake(ClientHandshake::with_key(KEY, Vec::new()))
        .config(WsConfig {
            permessage_deflate: deflate,
            ..WsConfig::default()
        });
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

fn agreed_of(ch: &EmbeddedChannel) -> Option<PerMessageDeflate> {
    let ws = ch.pipeline().get("ws").expect("a handler named ws");
    ws.as_any()
        .and_then(|a| a.downcast_ref::<WebSocketHandler>())
        .expect("the frame handler took over")
        .deflate()
}

#[test]
fn the_request_offers_permessage_deflate_only_when_configured() {
    let head = String::from_utf8(output(&channel(Some(DeflateConfig::default())))).unwrap();
    assert!(
        head.contains("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"),
        "{head}"
    );
    let tuned = DeflateConfig {
        server_no_context_takeover: true,
        client_max_window_bits: 10,
        ..DeflateConfig::default()
    };
    let head = String::from_utf8(output(&channel(Some(tuned)))).unwrap();
    assert!(
        head.contains(
            "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_max_window_bits=10\r\n"
        ),
        "{head}"
    );
    let head = String::from_utf8(output(&channel(None))).unwrap();
    assert!(!head.contains("Sec-WebSocket-Extensions"), "{head}");
}

#[test]
fn an_accepted_answer_compresses_both_ways_with_the_agreed_parameters() {
    let ch = channel(Some(DeflateConfig::default()));
    output(&ch);
    let agreed = PerMessageDeflate {
        server_no_context_takeover: true,
        client_no_context_takeover: false,
        server_max_window_bits: 15,
        client_max_window_bits: 10,
    };
    let text = "netloop ".repeat(400);
    // The server's compressed message comes right behind the 101.
    let compressed = Deflater::new(agreed.server(), 6)
        .compress(text.as_bytes())
        .unwrap();
    let mut input = format!(
        "{OK}Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_max_window_bits=10\r\n\r\n"
    )
    .into_bytes();
    let mut frame = BytesMut::new();
    encode_frame(&mut frame, true, Opcode::Text, &compressed, None);
    frame[0] |= 0x40;
    input.extend_from_slice(&frame);
    ch.write_inbound(input);
    ch.run_pending_tasks();
    ch.check_exception().unwrap();
    assert_eq!(agreed_of(&ch), Some(agreed));
    let read: Vec<WebSocketFrame> = std::iter::from_fn(|| ch.read_inbound())
        .filter_map(|m| m.downcast::<WebSocketFrame>().ok())
        .collect();
    assert_eq!(read, [WebSocketFrame::text(text.clone())]);

    // Ours: masked, RSV1, inflating to the message; under the threshold, uncompressed.
    ch.write_outbound(Message::user(text.clone()));
    ch.write_outbound(Message::user("short".to_string()));
    let out = output(&ch);
    let mut buf = BytesMut::from(&out[..]);
    let mut decoder = FrameDecoder::new(Role::Server, 1 << 20).allow_rsv1(true);
    let big = decoder.decode(&mut buf).unwrap().unwrap();
    assert!(big.rsv1, "compressed");
    assert!(
        big.payload.len() < text.len() / 4,
        "{} bytes",
        big.payload.len()
    );
    let back = Inflater::new(agreed.client())
        .inflate(&big.payload, true, 1 << 20)
        .unwrap();
    assert_eq!(&back[..], text.as_bytes());
    let small = decoder.decode(&mut buf).unwrap().unwrap();
    assert!(!small.rsv1);
    assert_eq!(&small.payload[..], b"short");
}

#[test]
fn a_server_that_declines_leaves_the_connection_uncompressed() {
    let ch = channel(Some(DeflateConfig::default()));
    output(&ch);
    ch.write_inbound(format!("{OK}\r\n").into_bytes());
    ch.run_pending_tasks();
    ch.check_exception().unwrap();
    assert_eq!(agreed_of(&ch), None);
    ch.write_outbound(Message::user("netloop ".repeat(400)));
    let out = output(&ch);
    let mut buf = BytesMut::from(&out[..]);
    let frame = FrameDecoder::new(Role::Server, 1 << 20)
        .decode(&mut buf)
        .unwrap()
        .unwrap();
    assert!(!frame.rsv1);
}

#[test]
fn an_answer_the_offer_does_not_allow_fails_the_handshake() {
    let config = DeflateConfig {
        client_no_context_takeover: true,
        server_no_context_takeover: true,
        client_max_window_bits: 12,
        ..DeflateConfig::default()
    };
    for answer in [
        "permessage-deflate; client_max_window_bits=12",      // server context takeover left on
        "permessage-deflate; server_no_context_takeover; client_max_window_bits=13", // above the offer
        "permessage-deflate; server_no_context_takeover, permessage-deflate; server_no_context_takeover",
        "x-webkit-deflate-frame",
        "permessage-deflate; server_no_context_takeover; mystery",
    ] {
        let ch = channel(Some(config.clone()));
        output(&ch);
        ch.write_inbound(format!("{OK}Sec-WebSocket-Extensions: {answer}\r\n\r\n").into_bytes());
        ch.run_pending_tasks();
        let err = ch.check_exception().expect_err(answer);
        assert_eq!(err.code(), "ERR_WS_HANDSHAKE_EXTENSION", "{answer}: {err}");
        assert!(!ch.channel().is_open(), "{answer}: closed");
    }
}
