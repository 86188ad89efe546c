//! Layer 2: the layer-1 codecs as pipeline handlers of `netloop-transport`.
//!
//! - [`ByteToMessageDecoder`] runs any [`FrameDecoder`](crate::FrameDecoder) on a channel's
//!   inbound bytes and fires one `channel_read` per frame.
//! - [`LengthFieldPrepender`](crate::LengthFieldPrepender) is itself an outbound handler.
//! - [`FlushConsolidationHandler`] passes on fewer flushes (Netty's).
//! - [`IdleStateHandler`] fires [`IdleStateEvent`](crate::IdleStateEvent)s as user events.
//! - [`HAProxyMessageDecoder`] reads a PROXY protocol header and fires it as a user event.
//!
//! Ground rules shared by these handlers:
//! - Loop thread only, like every handler: state lives in `Cell`/`RefCell`, and no borrow
//!   is held while an event is fired or an operation is passed on, because the pipeline is
//!   re-entrant (a handler further on may close the channel or remove this handler before
//!   the call returns).
//! - Codec errors reach the pipeline as [`TransportError::Foreign`] carrying the
//!   [`CodecError`]'s stable code (`ERR_TOO_LONG_FRAME`, ...); the `CodecError` itself is
//!   recovered with `error.foreign_source()?.downcast_ref::<CodecError>()`.
//! - No panics on input: bad bytes become `exception_caught` events, bad writes failed
//!   promises.

use netloop_transport::TransportError;

use crate::error::CodecError;

mod decoder;
mod flush_consolidation;
mod haproxy;
mod idle;
mod prepender;
#[cfg(test)]
mod recorder;

#[cfg(test)]
#[path = "decoder_tests.rs"]
mod decoder_tests;
#[cfg(test)]
#[path = "flush_consolidation_tests.rs"]
mod flush_consolidation_tests;
#[cfg(test)]
#[path = "haproxy_tests.rs"]
mod haproxy_tests;
#[cfg(test)]
#[path = "idle_tests.rs"]
mod idle_tests;
#[cfg(test)]
#[path = "prepender_tests.rs"]
mod prepender_tests;

pub use decoder::ByteToMessageDecoder;
pub use flush_consolidation::{FlushConsolidationHandler, DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES};
pub use haproxy::HAProxyMessageDecoder;
pub use idle::IdleStateHandler;
pub use prepender::GATHER_THRESHOLD;

impl From<CodecError> for TransportError {
    fn from(error: CodecError) -> Self {
        TransportError::foreign(error.code(), error)
    }
}
