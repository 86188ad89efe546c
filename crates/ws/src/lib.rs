//! WebSocket (RFC 6455) for netloop pipelines, in pure Rust.
//!
//! Layer 1 (no pipeline, no loop, no I/O):
//! - [`FrameDecoder`]: whole frames from a cumulation buffer, every per-frame rule checked
//!   from the header (reserved bits and opcodes, masking by [`Role`], control frames ≤ 125
//!   bytes and never fragmented, minimal length forms, `max_frame_size`).
//! - [`MessageAssembler`]: the rules across frames (continuation, control frames between
//!   fragments, UTF-8 validated incrementally across fragments, `max_message_size`) into
//!   whole messages or, in streaming mode, fragments.
//! - [`frame`]: opcodes, masking and the encoder; [`CloseFrame`] and [`CloseCode`].
//! - [`client_handshake`]: the client's opening handshake (the key, the request's fields,
//!   the checks of the `101` answer).
//! - [`handshake`]: the server's opening handshake on plain header data
//!   (`Sec-WebSocket-Key`/`Accept`, version 13 only, subprotocol choice, origin check,
//!   permessage-deflate).
//! - [`extension`]: permessage-deflate's negotiation (RFC 7692), usable by either end;
//!   [`deflate`]: its compressor and its bounded decompressor.
//!
//! Layer 2 (`netloop-transport` handlers): [`WebSocketHandler`] (the connection after its
//! handshake: frames in and out, pings answered, the close handshake with its timeout) and
//! [`WebSocketEchoHandler`] (native echo); [`TopicRegistry`] (publish/subscribe: a message
//! encoded once, written to every subscriber on every loop).
//!
//! This crate does not depend on the HTTP codec (a protocol crate never depends on another):
//! `netloop-ws-upgrade` joins the two, taking the upgrade request from `HttpServerCodec`,
//! answering with [`handshake::server_handshake`] and putting a [`WebSocketHandler`] in its
//! place.
//!
//! ```
//! use std::rc::Rc;
//! use netloop_ws::{WebSocketEchoHandler, WebSocketHandler, WsConfig};
//! use netloop_transport::EmbeddedChannel;
//!
//! let ws = WebSocketHandler::new(WsConfig::default()).unwrap();
//! let ch = EmbeddedChannel::new(vec![("ws", Rc::new(ws)), ("echo", Rc::new(WebSocketEchoHandler::new()))]);
//! // RFC 6455 §5.7: a masked "Hello" from a client.
//! ch.write_inbound(&b"\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58"[..]);
//! ch.pipeline().fire_channel_read_complete();
//! assert_eq!(&ch.read_outbound().unwrap().as_bytes().unwrap()[..], b"\x81\x05Hello");
//! ```
//!
//! Ground rules:
//! - Single-threaded values: a decoder, an assembler and a handler belong to one connection
//!   and run on its loop thread.
//! - No input panics; memory follows the bytes received and the limits, never a declared
//!   length: a frame is refused from its header before its payload is buffered.
//! - A protocol error is final for the connection: it is failed with the error's close code.
//!
//! Choices and their reasons: docs/decisions/0017-websocket.md.

#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod client_handshake;
mod close;
mod config;
mod decoder;
pub mod deflate;
mod error;
pub mod extension;
pub mod frame;
mod handler;
pub mod handshake;
mod message;
mod topics;
mod utf8;

/// The `bytes` crate this API is written against.
pub use bytes;

pub use close::{CloseCode, CloseFrame, MAX_REASON_LEN};
pub use config::{
    WsConfig, DEFAULT_CLOSE_TIMEOUT, DEFAULT_MAX_FRAME_SIZE, DEFAULT_MAX_MESSAGE_SIZE,
};
pub use decoder::{FrameDecoder, PartialFrame, Role};
pub use error::{ConfigError, HandshakeError, WsError};
pub use extension::{DeflateConfig, PerMessageDeflate};
pub use frame::{Frame, Opcode};
pub use handler::{WebSocketEchoHandler, WebSocketHandler};
pub use message::{Fragment, MessageAssembler, WebSocketFrame};
pub use topics::{TopicError, TopicRegistry, TopicStats};
pub use utf8::{InvalidUtf8, Utf8Validator};
