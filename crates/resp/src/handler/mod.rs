//! Layer 2: the codec as `netloop-transport` pipeline handlers.
//!
//! - [`RespDecoderHandler`] turns inbound bytes into one `channel_read` of a
//!   [`RespValue`](crate::RespValue) user message per top-level value.
//! - [`RespEncoder`] turns outbound `RespValue` messages into bytes.
//!
//! Ground rules shared by both:
//! - Loop thread only, like every handler: state lives in `Cell`/`RefCell`, and no borrow is
//!   held while an event is fired or an operation passed on (the pipeline is re-entrant: a
//!   handler further on may close the channel, remove this handler or fire a read from the
//!   head before the call returns).
//! - Protocol errors reach `exception_caught` as `TransportError::Foreign` with the
//!   [`RespError`](crate::RespError)'s stable code (`ERR_RESP_BULK_TOO_LONG`, ...).
//! - Neither handler closes the channel: closing (after an error reply, for a server) is the
//!   application's call, as with Netty's codec-redis.

mod decoder;
mod encoder;
mod pause;

pub use decoder::RespDecoderHandler;
pub use encoder::{RespEncoder, GATHER_THRESHOLD};

impl From<crate::RespValue> for netloop_transport::Message {
    /// A `RespValue` travels through a pipeline as a user message.
    fn from(value: crate::RespValue) -> Self {
        netloop_transport::Message::user(value)
    }
}
