//! Netty's frame decoders, length-field prepender and idle-state logic, in pure Rust, and
//! the same as `netloop-transport` pipeline handlers.
//!
//! Layer 1 (the modules at the crate root): no pipeline, no loop, no I/O. A decoder implements
//! [`FrameDecoder`] (decode one frame from the front of a buffer); a [`Cumulator`] collects
//! inbound bytes and drives a decoder over them, as Netty's `ByteToMessageDecoder` does.
//! [`IdleStateTracker`] is the clock logic of `IdleStateHandler`, driven by a caller's clock.
//!
//! Layer 2 (`handler`): [`ByteToMessageDecoder`] makes any decoder a pipeline handler
//! (`ByteToMessageDecoder::new(LineBasedFrameDecoder::new(1024))`), [`LengthFieldPrepender`]
//! is an outbound handler, [`IdleStateHandler`] fires [`IdleStateEvent`] user events, and
//! [`HAProxyMessageDecoder`] reads a connection's PROXY protocol header ([`HAProxyMessage`]).
//! Codec errors reach the pipeline as `TransportError`s carrying the codec's stable code.
//!
//! Ground rules shared by every module:
//! - Single-threaded values: each decoder, cumulator and tracker belongs to one channel and
//!   is used on that channel's loop. Nothing here locks or is shared.
//! - No input panics. Bad stream input is a [`CodecError`] (after which decoding goes on
//!   with the next frame); bad constructor arguments are a [`ConfigError`].
//! - Frames are zero-copy `Bytes` views of the cumulation buffer (into which the decoder
//!   handler copies each inbound read once).

#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod byte_order;
mod cumulator;
mod decoder;
mod delimiter;
mod error;
mod fixed;
mod handler;
mod haproxy;
mod idle;
mod length_field;
mod line;
mod prepender;
#[cfg(test)]
mod testing;

/// The `bytes` crate this API is written against (`Bytes`, `BytesMut`).
pub use bytes;

pub use byte_order::ByteOrder;
pub use cumulator::{Cumulator, DecodeOutput};
pub use decoder::FrameDecoder;
pub use delimiter::{DelimiterBasedFrameDecoder, Delimiters};
pub use error::{CodecError, ConfigError};
pub use fixed::FixedLengthFrameDecoder;
pub use handler::{
    ByteToMessageDecoder, FlushConsolidationHandler, HAProxyMessageDecoder, IdleStateHandler,
    DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, GATHER_THRESHOLD,
};
pub use haproxy::tlv::{kind as haproxy_tlv_kind, ssl_client as haproxy_ssl_client, HAProxySsl};
pub use haproxy::{
    HAProxyAddress, HAProxyCommand, HAProxyDecoded, HAProxyMessage, HAProxyProtocol, HAProxyTlv,
    HAProxyVersion, V1_MAX_LENGTH, V2_MAX_LENGTH, V2_SIGNATURE,
};
pub use idle::{
    IdleConfig, IdleState, IdleStateEvent, IdleStateTracker, OutputState, MIN_IDLE_TIMEOUT,
};
pub use length_field::{LengthFieldBasedFrameDecoder, LengthFieldConfig};
pub use line::LineBasedFrameDecoder;
pub use prepender::LengthFieldPrepender;
