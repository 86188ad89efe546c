//! WebSocket frames across the JS boundary (src/ws.ts reads and writes the same layout):
//!
//! ```text
//! frame := kind:u8 payload          kind: protocol::WsFrameKind; payload to the end
//! close := 5:u8 [code:u16be reason]  no code: an empty close frame
//! ```
//!
//! Reads: a `WebSocketFrame` the WebSocket handler fired is written into the delivery's byte
//! arena (JS makes text a string and binary a view of the arena). Writes: JS writes this
//! layout into the op arena; [`from_js`] makes the `WebSocketFrame` the handler encodes.
//! Messages are whole (the binding configures the handler to aggregate), so a `Fragment`
//! never crosses.

use bytes::Bytes;
use netloop_transport::UserEvent;
use netloop_ws::{CloseCode, CloseFrame, WebSocketFrame};
use netloop_ws_upgrade::{ClientHandshakeComplete, HandshakeComplete};

use crate::protocol::{WsFrameKind, WS_HANDSHAKE_STRINGS};

const TEXT: u8 = WsFrameKind::Text as u8;
const BINARY: u8 = WsFrameKind::Binary as u8;
const PING: u8 = WsFrameKind::Ping as u8;
const PONG: u8 = WsFrameKind::Pong as u8;
const CLOSE: u8 = WsFrameKind::Close as u8;

/// Appends `frame` in the layout.
pub fn put(out: &mut Vec<u8>, frame: &WebSocketFrame) {
    let (kind, data): (u8, &[u8]) = match frame {
        WebSocketFrame::Text(d) => (TEXT, d),
        WebSocketFrame::Binary(d) => (BINARY, d),
        WebSocketFrame::Fragment(f) => (if f.text { TEXT } else { BINARY }, &f.data),
        WebSocketFrame::Ping(d) => (PING, d),
        WebSocketFrame::Pong(d) => (PONG, d),
        WebSocketFrame::Close(c) => {
            out.push(CLOSE);
            out.extend_from_slice(&c.payload());
            return;
        }
    };
    out.push(kind);
    out.extend_from_slice(data);
}

/// The frame JS wrote.
///
/// # Errors
/// A message for an empty layout, an unknown kind, text that is not UTF-8 or a close frame
/// of one byte.
pub fn from_js(data: &Bytes) -> Result<WebSocketFrame, String> {
    let Some(&kind) = data.first() else {
        return Err("an empty WebSocket frame layout".into());
    };
    let payload = data.slice(1..);
    Ok(match kind {
        TEXT => {
            if std::str::from_utf8(&payload).is_err() {
                return Err("a text frame must be UTF-8".into());
            }
            WebSocketFrame::Text(payload)
        }
        BINARY => WebSocketFrame::Binary(payload),
        PING => WebSocketFrame::Ping(payload),
        PONG => WebSocketFrame::Pong(payload),
        CLOSE => match payload.len() {
            0 => WebSocketFrame::Close(CloseFrame::empty()),
            1 => return Err("a close frame's code takes 2 bytes".into()),
            _ => {
                let code = CloseCode(u16::from_be_bytes([payload[0], payload[1]]));
                let reason = String::from_utf8_lossy(&payload[2..]).into_owned();
                WebSocketFrame::Close(CloseFrame::new(code, &reason))
            }
        },
        other => return Err(format!("unknown WebSocket frame kind {other}")),
    })
}

/// The strings of a `UserEventKind::WebSocketHandshake` event, if `event` is a handshake's
/// completion (server or client); else the event back.
pub fn handshake_strings(event: UserEvent) -> Result<[String; WS_HANDSHAKE_STRINGS], UserEvent> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let lines = |headers: &netloop_http::HeaderList| {
        headers
            .iter()
            .map(|(n, v)| format!("{}: {}", text(n), text(v)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let event = match event.downcast::<HandshakeComplete>() {
        Ok(done) => {
            let protocol = done.protocol.clone().unwrap_or_default();
            return Ok([done.target.clone(), protocol, lines(&done.headers)]);
        }
        Err(e) => e,
    };
    match event.downcast::<ClientHandshakeComplete>() {
        Ok(done) => {
            let protocol = done.protocol.clone().unwrap_or_default();
            Ok([done.target.clone(), protocol, lines(&done.headers)])
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_survive_the_layout_both_ways() {
        let frames = [
            WebSocketFrame::text("héllo"),
            WebSocketFrame::binary(vec![0u8, 255]),
            WebSocketFrame::Ping(Bytes::from_static(b"p")),
            WebSocketFrame::Pong(Bytes::new()),
            WebSocketFrame::Close(CloseFrame::new(CloseCode(4001), "bye")),
            WebSocketFrame::Close(CloseFrame::empty()),
        ];
        for frame in frames {
            let mut out = Vec::new();
            put(&mut out, &frame);
            assert_eq!(from_js(&Bytes::from(out)), Ok(frame));
        }
        assert!(from_js(&Bytes::from_static(b"\x01\xff")).is_err());
        assert!(from_js(&Bytes::from_static(b"\x05\x03")).is_err());
        assert!(from_js(&Bytes::from_static(b"\x09")).is_err());
        assert!(from_js(&Bytes::new()).is_err());
    }
}
