//! RESP, the Redis protocol, for netloop pipelines (Netty's codec-redis), in pure Rust.
//!
//! Layer 1 (no pipeline, no loop, no I/O):
//! - [`RespValue`]: every RESP2 and RESP3 type. String payloads are `Bytes` views of the
//!   bytes read, so a decoded command's arguments are never copied.
//! - [`RespDecoder`]: whole top-level values from the front of a cumulation buffer, including
//!   redis-server's inline commands (`PING\r\n`, `SET "a b" 1\r\n`), with limits
//!   ([`RespConfig`]): bulk length, aggregate length, nesting depth, line length.
//! - [`RespCommand`]: a command (an array of bulk strings) kept as the one frame it came in,
//!   from [`RespDecoder::decode_command`], for servers that only walk the arguments.
//! - [`encode`]: replies written straight into a `BytesMut` (`write_simple`, `write_bulk`,
//!   ...), and [`RespValue::encode`].
//!
//! Layer 2 (`netloop-transport` handlers):
//! - [`RespDecoderHandler`] fires one `channel_read` of a `RespValue` user message per value
//!   (or, with [`RespDecoderHandler::command_frames`], a `RespCommand` per plain command);
//! - [`RespEncoder`] writes outbound `RespValue` messages as bytes.
//!
//! ```
//! use std::rc::Rc;
//! use netloop_resp::{RespConfig, RespDecoderHandler, RespEncoder, RespValue};
//! use netloop_transport::EmbeddedChannel;
//!
//! let decoder = RespDecoderHandler::new(RespConfig::default()).unwrap();
//! let ch = EmbeddedChannel::new(vec![
//!     ("resp-encoder", Rc::new(RespEncoder::new())),
//!     ("resp-decoder", Rc::new(decoder)),
//! ]);
//! ch.write_inbound(&b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n"[..]);
//! let get = ch.read_inbound().unwrap().downcast::<RespValue>().unwrap();
//! assert_eq!(get, RespValue::command(["GET", "k"]));
//! let ping = ch.read_inbound().unwrap().downcast::<RespValue>().unwrap();
//! assert_eq!(ping.command_args().unwrap(), ["PING"]);
//!
//! ch.write_outbound(RespValue::simple("PONG"));
//! assert_eq!(ch.read_outbound().unwrap().as_bytes().unwrap(), "+PONG\r\n");
//! ```
//!
//! Ground rules:
//! - Single-threaded values: a decoder and its handler belong to one channel and are used on
//!   its loop thread; nothing here locks or is shared. Decoded values are `Send`.
//! - No input panics, and memory follows the bytes received, never a declared length.
//! - A protocol error is final for the connection: the decoder reports it once (typed
//!   [`RespError`], stable `ERR_RESP_*` code), then discards all further input. Close the
//!   channel, after an error reply if you are the server (`RespError::reply_text`); RESP
//!   cannot be resynchronised, and redis-server closes too.
//! - A value split across reads at any byte boundary decodes exactly as if it came in one
//!   read, in time linear in its size (the decoder keeps its parse state between reads).
//!
//! Choices and their reasons: docs/decisions/0008-resp-codec.md.

#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod aggregate;
mod command;
mod commands;
mod config;
mod decoder;
pub mod encode;
mod error;
mod handler;
mod inline;
mod number;
mod value;

#[cfg(test)]
mod decoder_tests;

/// The `bytes` crate this API is written against (`Bytes`, `BytesMut`).
pub use bytes;

pub use command::{Args, RespCommand};
pub use commands::{Commands, RespCommands};
pub use config::{
    RespConfig, DEFAULT_MAX_ARRAY_LENGTH, DEFAULT_MAX_BULK_LENGTH, DEFAULT_MAX_INLINE_LENGTH,
    DEFAULT_MAX_NESTING_DEPTH, MAX_NESTING_DEPTH_LIMIT, MIN_INLINE_LENGTH, PREALLOCATED_ENTRIES,
};
pub use decoder::RespDecoder;
pub use error::{ConfigError, RespError};
pub use handler::{RespDecoderHandler, RespEncoder, GATHER_THRESHOLD};
pub use value::RespValue;
