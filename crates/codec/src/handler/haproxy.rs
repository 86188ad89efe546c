//! `HAProxyMessageDecoder`: reads the PROXY protocol header at the start of a connection and
//! tells every handler after it who the client is (Netty's `HAProxyMessageDecoder`).
//!
//! Netty's decoder passes the message on as a read and removes itself; this one fires it as a
//! user event, so the native handlers behind it (an `SslHandler`, the HTTP codec) keep seeing
//! bytes only, and stays in the pipeline as a pass-through (one branch per read; removing a
//! handler from inside its own read would also leave the JS side's view of the pipeline
//! behind).
//!
//! Ground rules:
//! - Loop thread only; no borrow is held while an event is fired.
//! - Bytes are kept until the header is whole: at most one header's worth (107 bytes for
//!   version 1, 65,551 for version 2), since the parser refuses a stream as soon as it cannot
//!   be a header. The bytes after the header in the same read go on as a read, after the
//!   event; later reads go on untouched.
//! - A stream that is not a valid header fails once: `exception_caught` with
//!   `ERR_HAPROXY_PROTOCOL`, then the channel closes (nothing after a bad header can be
//!   trusted). Nothing it sent is passed on, then or later.
//! - With `autoRead` off, the decoder asks for reads until the header is whole (the
//!   application cannot know it should).
//! - [`HAProxyMessageDecoder::optional`]: a stream whose first bytes cannot start a header
//!   (decided within its first 12 bytes) passes through whole, with no event; one that starts
//!   a header is held to it as above. For protocols where the client speaks first: a client
//!   that waits for the server sends nothing to decide on.

use std::cell::RefCell;

use bytes::BytesMut;
use netloop_transport::{ChannelHandler, ChannelHandlerContext, HandlerResult, Message};

use crate::haproxy::{HAProxyDecoded, HAProxyMessage};

enum State {
    /// The header is not whole yet: what came so far.
    Reading(BytesMut),
    /// Decoded: the stream passes through.
    Done(HAProxyMessage),
    /// Optional, and the stream has no header: it passes through.
    Absent,
    /// Refused: everything is dropped until the close.
    Failed,
}

/// Reads a PROXY protocol header (versions 1 and 2) and fires it as an [`HAProxyMessage`]
/// user event. Add it first in the pipeline, before an `SslHandler`.
pub struct HAProxyMessageDecoder {
    state: RefCell<State>,
    /// Streams without a header pass through (see the module's ground rules).
    optional: bool,
}

impl Default for HAProxyMessageDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl HAProxyMessageDecoder {
    /// A decoder for one connection.
    pub fn new() -> Self {
        HAProxyMessageDecoder {
            state: RefCell::new(State::Reading(BytesMut::new())),
            optional: false,
        }
    }

    /// A decoder for a port that both the proxy and clients without it reach: a stream that
    /// does not start a header passes through untouched, with no event (Envoy's
    /// `allow_requests_without_proxy_protocol`). A client that reaches the port directly is
    /// then known by its own address; one that sends a header is trusted as in strict mode,
    /// so this is no weaker than strict mode on a port clients can reach.
    pub fn optional() -> Self {
        HAProxyMessageDecoder {
            optional: true,
            ..Self::new()
        }
    }

    /// The header, once decoded.
    pub fn message(&self) -> Option<HAProxyMessage> {
        match &*self.state.borrow() {
            State::Done(m) => Some(m.clone()),
            _ => None,
        }
    }
}

enum Step {
    Wait,
    Pass(bytes::Bytes),
    Drop,
    Decoded(HAProxyMessage, BytesMut),
    Refused(crate::error::CodecError),
}

impl HAProxyMessageDecoder {
    /// Decodes what `state` (reading) holds, and moves it on.
    fn decode_step(state: &mut State) -> Step {
        let State::Reading(buf) = state else {
            return Step::Wait;
        };
        match HAProxyMessage::decode(buf) {
            Ok(HAProxyDecoded::NeedMore) => Step::Wait,
            Ok(HAProxyDecoded::Header { message, length }) => {
                let rest = buf.split_off(length);
                *state = State::Done(message.clone());
                Step::Decoded(message, rest)
            }
            Err(e) => {
                *state = State::Failed;
                Step::Refused(e)
            }
        }
    }
}

impl ChannelHandler for HAProxyMessageDecoder {
    // Reads passes by (the default method): the mask skips this context.
    fn takes_read(&self) -> bool {
        false
    }

    // Writes and flushes only pass by (the trait's methods): their walk skips this context.
    fn takes_write(&self) -> bool {
        false
    }
    fn takes_flush(&self) -> bool {
        false
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let bytes = match msg.into_bytes() {
            Ok(b) => b,
            Err(other) => {
                ctx.fire_channel_read(other);
                return Ok(());
            }
        };
        let step = {
            let mut state = self.state.borrow_mut();
            match &mut *state {
                State::Done(_) | State::Absent => Step::Pass(bytes),
                State::Failed => Step::Drop,
                State::Reading(buf) => {
                    buf.extend_from_slice(&bytes);
                    let starts = self.optional.then(|| HAProxyMessage::starts_header(buf));
                    match starts {
                        // Optional, and no header: everything so far goes on, as will the rest.
                        Some(Some(false)) => {
                            let all = std::mem::take(buf).freeze();
                            *state = State::Absent;
                            Step::Pass(all)
                        }
                        Some(None) => Step::Wait,
                        _ => Self::decode_step(&mut state),
                    }
                }
            }
        };
        match step {
            Step::Wait | Step::Drop => {}
            Step::Pass(b) => ctx.fire_channel_read(b),
            Step::Decoded(message, rest) => {
                ctx.fire_user_event(message);
                if !rest.is_empty() {
                    ctx.fire_channel_read(rest.freeze());
                }
            }
            Step::Refused(e) => {
                ctx.fire_exception_caught(e.into());
                ctx.close();
            }
        }
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        let reading = matches!(*self.state.borrow(), State::Reading(_));
        if reading && ctx.try_channel().is_some_and(|ch| !ch.is_auto_read()) {
            ctx.read();
        }
        ctx.fire_channel_read_complete();
        Ok(())
    }
}

impl std::fmt::Debug for HAProxyMessageDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &*self.state.borrow() {
            State::Reading(b) => format!("reading ({} bytes)", b.len()),
            State::Done(_) => "done".into(),
            State::Absent => "no header".into(),
            State::Failed => "failed".into(),
        };
        f.debug_struct("HAProxyMessageDecoder")
            .field("state", &state)
            .finish()
    }
}
