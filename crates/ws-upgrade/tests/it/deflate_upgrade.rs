//! permessage-deflate through the upgrade: the `101` answers the client's offer, and the
//! `WebSocketHandler` put in place inflates the client's compressed messages and compresses
//! the echo; without the option, or without an offer, nothing is compressed.

use std::rc::Rc;

use netloop_http::{HttpServerCodec, HttpServerConfig};
use netloop_transport::{BytesMut, EmbeddedChannel};
use netloop_ws::deflate::{Deflater, Inflater};
use netloop_ws::frame::{encode_frame, Opcode};
use netloop_ws::handshake::HandshakeOptions;
use netloop_ws::{
    DeflateConfig, Frame, FrameDecoder, PerMessageDeflate, Role, WebSocketEchoHandler, WsConfig,
};
use netloop_ws_upgrade::WebSocketServerProtocolHandler;

fn upgrade(extensions: Option<&str>) -> String {
    let offer = extensions.map_or(String::new(), |e| {
        format!("Sec-WebSocket-Extensions: {e}\r\n")
    });
    format!(
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{offer}\r\n"
    )
}

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

fn deflating() -> WebSocketServerProtocolHandler {
    WebSocketServerProtocolHandler::new("/").config(WsConfig {
        permessage_deflate: Some(DeflateConfig::default()),
        ..WsConfig::default()
    })
}

/// The head and the frames the server wrote.
fn exchange(ch: &EmbeddedChannel, input: &[u8]) -> (String, Vec<Frame>) {
    ch.write_inbound(input.to_vec());
    let out: Vec<u8> = std::iter::from_fn(|| ch.read_outbound())
        .flat_map(|m| m.as_bytes().expect("bytes").to_vec())
        .collect();
    let end = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    let mut rest = BytesMut::from(&out[end..]);
    let mut decoder = FrameDecoder::new(Role::Client, 1 << 24).allow_rsv1(true);
    let frames = std::iter::from_fn(|| decoder.decode(&mut rest).unwrap()).collect();
    (String::from_utf8_lossy(&out[..end]).into_owned(), frames)
}

fn compressed_frame(payload: &[u8]) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode_frame(&mut out, true, Opcode::Text, payload, Some([1, 2, 3, 4]));
    out[0] |= 0x40;
    out.to_vec()
}

const AGREED: PerMessageDeflate = PerMessageDeflate {
    server_no_context_takeover: false,
    client_no_context_takeover: false,
    server_max_window_bits: 15,
    client_max_window_bits: 15,
};

#[test]
fn an_offer_is_answered_and_the_echo_goes_back_compressed() {
    let ch = channel(deflating());
    let text = "netloop ".repeat(500);
    let data = Deflater::new(AGREED.client(), 6)
        .compress(text.as_bytes())
        .unwrap();
    let mut input = upgrade(Some("permessage-deflate; client_max_window_bits")).into_bytes();
    input.extend(compressed_frame(&data));
    let (head, frames) = exchange(&ch, &input);
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    assert!(
        head.contains("Sec-WebSocket-Extensions: permessage-deflate\r\n"),
        "{head}"
    );
    assert_eq!(frames.len(), 1);
    assert!(frames[0].rsv1, "the echo is compressed");
    let back = Inflater::new(AGREED.server())
        .inflate(&frames[0].payload, true, 1 << 20)
        .unwrap();
    assert_eq!(&back[..], text.as_bytes());
}

#[test]
fn without_the_option_or_an_offer_nothing_is_compressed() {
    let text = "netloop ".repeat(500);
    let plain = {
        let mut out = BytesMut::new();
        encode_frame(
            &mut out,
            true,
            Opcode::Text,
            text.as_bytes(),
            Some([1, 2, 3, 4]),
        );
        out.to_vec()
    };
    let off =
        WebSocketServerProtocolHandler::new("/").handshake_options(HandshakeOptions::default());
    for (protocol, offer) in [(off, Some("permessage-deflate")), (deflating(), None)] {
        let ch = channel(protocol);
        let mut input = upgrade(offer).into_bytes();
        input.extend_from_slice(&plain);
        let (head, frames) = exchange(&ch, &input);
        assert!(!head.contains("Sec-WebSocket-Extensions"), "{head}");
        assert_eq!(frames.len(), 1);
        assert!(!frames[0].rsv1);
        assert_eq!(&frames[0].payload[..], text.as_bytes());
    }
}

#[test]
fn handshake_options_set_later_keep_the_configured_deflate() {
    let ch = channel(deflating().handshake_options(HandshakeOptions {
        subprotocols: vec!["chat".into()],
        ..HandshakeOptions::default()
    }));
    let (head, _) = exchange(&ch, upgrade(Some("permessage-deflate")).as_bytes());
    assert!(
        head.contains("Sec-WebSocket-Extensions: permessage-deflate\r\n"),
        "{head}"
    );
}
