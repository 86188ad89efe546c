//! A deterministic harness for `WebSocketHandler`: an `EmbeddedChannel` (hand-driven loop,
//! fake clock) with the handler, frames built as a client would send them, and the server's
//! output decoded as a client would read it.
#![allow(dead_code)]

use std::rc::Rc;

use netloop_transport::{BytesMut, EmbeddedChannel};
use netloop_ws::frame::{apply_mask, encode_frame, Opcode};
use netloop_ws::{
    CloseCode, CloseFrame, Frame, FrameDecoder, Role, WebSocketFrame, WebSocketHandler, WsConfig,
};

pub const KEY: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// A masked client frame.
pub fn client(fin: bool, opcode: Opcode, payload: &[u8]) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode_frame(&mut out, fin, opcode, payload, Some(KEY));
    out.to_vec()
}

/// A masked client frame from raw header bits: the first byte as given, the 7-bit length
/// field and any extended length bytes as given, then the mask key and the masked payload.
pub fn raw(b0: u8, len7: u8, extended: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = vec![b0, 0x80 | len7];
    out.extend_from_slice(extended);
    out.extend_from_slice(&KEY);
    let mut masked = payload.to_vec();
    apply_mask(&mut masked, KEY, 0);
    out.extend_from_slice(&masked);
    out
}

pub fn text(s: &str) -> Vec<u8> {
    client(true, Opcode::Text, s.as_bytes())
}

pub fn close(code: u16, reason: &str) -> Vec<u8> {
    let mut payload = code.to_be_bytes().to_vec();
    payload.extend_from_slice(reason.as_bytes());
    client(true, Opcode::Close, &payload)
}

/// The channel under test.
pub struct Ws {
    pub ch: EmbeddedChannel,
    out: std::cell::RefCell<BytesMut>,
    reader: std::cell::RefCell<FrameDecoder>,
}

impl Ws {
    pub fn new(config: WsConfig) -> Self {
        let handler = WebSocketHandler::new(config).expect("valid config");
        Ws {
            ch: EmbeddedChannel::new(vec![("ws", Rc::new(handler))]),
            out: Default::default(),
            reader: std::cell::RefCell::new(FrameDecoder::new(Role::Client, usize::MAX >> 1)),
        }
    }

    /// A server with permessage-deflate agreed on `params` (its frames read with RSV1).
    pub fn deflating(config: WsConfig, params: netloop_ws::PerMessageDeflate) -> Self {
        let handler = WebSocketHandler::with_deflate(config, Some(params)).expect("valid config");
        Ws {
            ch: EmbeddedChannel::new(vec![("ws", Rc::new(handler))]),
            out: Default::default(),
            reader: std::cell::RefCell::new(
                FrameDecoder::new(Role::Client, usize::MAX >> 1).allow_rsv1(true),
            ),
        }
    }

    pub fn server() -> Self {
        Self::new(WsConfig::default())
    }

    pub fn feed(&self, bytes: &[u8]) {
        self.ch.write_inbound(bytes.to_vec());
    }

    /// What reached the application, in order.
    pub fn received(&self) -> Vec<WebSocketFrame> {
        std::iter::from_fn(|| self.ch.read_inbound())
            .map(|m| m.downcast::<WebSocketFrame>().expect("a WebSocketFrame"))
            .collect()
    }

    /// The frames the server wrote, decoded as a client reads them (unmasked, checked).
    pub fn sent(&self) -> Vec<Frame> {
        let mut out = self.out.borrow_mut();
        while let Some(m) = self.ch.read_outbound() {
            out.extend_from_slice(m.as_bytes().expect("bytes"));
        }
        let mut reader = self.reader.borrow_mut();
        std::iter::from_fn(|| reader.decode(&mut out).expect("server frames are valid")).collect()
    }

    /// The close code of the one close frame the server sent.
    pub fn sent_close(&self) -> Option<CloseCode> {
        let frames = self.sent();
        let closes: Vec<_> = frames
            .iter()
            .filter(|f| f.opcode == Opcode::Close)
            .collect();
        assert!(closes.len() <= 1, "one close frame at most: {frames:?}");
        closes.first().map(|f| {
            CloseFrame::parse(&f.payload)
                .expect("valid close")
                .code_or_no_status()
        })
    }

    pub fn is_open(&self) -> bool {
        self.ch.channel().is_open()
    }

    /// The code of the exception that reached the tail, if any.
    pub fn error(&self) -> Option<String> {
        self.ch
            .check_exception()
            .err()
            .map(|e| e.code().to_string())
    }

    /// A frame (or bytes) the application writes.
    pub fn send(&self, msg: impl Into<netloop_transport::Message>) {
        self.ch.write_outbound(msg);
    }
}
