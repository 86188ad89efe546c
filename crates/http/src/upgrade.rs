//! Protocol upgrades in [`HttpServerCodec`] (`Connection: upgrade` with `Upgrade`, and
//! `CONNECT`): the wait for the application's answer, then the hand-over or the way back to
//! HTTP. Ground rules in the parent module (`handler.rs`), and:
//! - After an upgrade request the decoder waits (`RequestDecoder::awaits_upgrade`) and the
//!   codec stops reading (as at the pipelining limit): the bytes after the request stay in
//!   the cumulation, at most what one read brought, until the answer.
//! - An answer that switches protocols (`101`, or a 2xx to `CONNECT`) is written, then the
//!   codec passes bytes through both ways: a loop task first fires the bytes left over as
//!   they came, then reading resumes (no later read can overtake them). HTTP messages
//!   written after it fail with `ERR_HTTP_HEADERS_SENT`.
//! - Any other final answer declines: the decoder goes on with the bytes left over.
//! - Once the bytes left over are fired, the codec releases what only HTTP used (its
//!   cumulation, the decoder's and the queue's vectors): an upgraded connection that stays
//!   idle holds none of it (docs/decisions/0017-websocket.md, "Memory per idle connection").
//! - Removing the codec instead (what a library that writes its own `101`, like `ws`, needs)
//!   fires the bytes left over too, and gives reading back.
//! - Asked to leave at the switch (`leave_on_switch`, what a WebSocket handshake asks, as
//!   Netty's handshaker removes `HttpServerCodec`), the codec removes itself in that task,
//!   once the bytes left over are fired: the connection then keeps none of the codec.

use std::cell::Cell;

use bytes::Bytes;
use netloop_transport::ChannelHandlerContext;

use super::HttpServerCodec;

/// What the codec knows of an upgrade.
#[derive(Debug, Default)]
pub(super) struct UpgradeState {
    /// The connection switched protocols: bytes pass through.
    pub(super) switched: Cell<bool>,
    /// Declined while the decoder was running (inside `channel_read`): decode on at once.
    pub(super) redecode: Cell<bool>,
    /// Leave the pipeline once switched and the bytes left over are fired.
    pub(super) leave: Cell<bool>,
}

impl HttpServerCodec {
    /// Asks the codec to leave the pipeline when the protocol switches: in the task that
    /// fires the bytes read after the upgrade request, right after them (Netty's WebSocket
    /// handshaker removes `HttpServerCodec` the same way). What comes after the switch then
    /// goes straight to the next handler, and the codec's memory is freed. An answer that
    /// declines the upgrade leaves the codec in place (and clears the request).
    pub fn leave_on_switch(&self) {
        self.upgrade.leave.set(true);
    }

    /// An upgrade request waits for its answer: stop reading meanwhile.
    pub(super) fn pause_for_upgrade(&self, ctx: &ChannelHandlerContext) {
        if self.decoder.borrow().awaits_upgrade() {
            self.pause_reading(ctx);
        }
    }

    /// The answer to the upgrade request was written.
    pub(super) fn upgrade_answered(&self, ctx: &ChannelHandlerContext, switched: bool) {
        if switched {
            self.upgrade.switched.set(true);
            self.cancel_timers();
            self.decoder.borrow_mut().stop();
            // Nothing read after the switch may overtake the bytes left over: reading stays
            // off until the task that fires them.
            self.pause_reading(ctx);
            self.schedule_resume(ctx);
            return;
        }
        self.upgrade.leave.set(false);
        self.decoder.borrow_mut().decline_upgrade();
        if self.pause.is_paused() {
            self.schedule_resume(ctx);
        } else {
            self.upgrade.redecode.set(true);
        }
    }

    /// In `channel_read` after a switch: the bytes, after any left over not fired yet.
    pub(super) fn pass_through(&self, ctx: &ChannelHandlerContext, bytes: Bytes) {
        let mut cumulation = self.cumulation.borrow_mut();
        if !cumulation.is_empty() {
            netloop_transport::append_to_cumulation(&mut cumulation, &bytes);
            return;
        }
        drop(cumulation);
        ctx.fire_channel_read(bytes);
    }

    /// From the resume task after a switch: fires the bytes left over, then releases the
    /// HTTP-only buffers. True if it fired bytes.
    pub(super) fn fire_left_over(&self, ctx: &ChannelHandlerContext) -> bool {
        let left = self.cumulation.borrow_mut().split().freeze();
        let fired = !left.is_empty();
        if fired {
            ctx.fire_channel_read(left);
        }
        self.release_after_switch();
        fired
    }

    /// Frees the buffers only HTTP uses (kept for reuse while the connection speaks HTTP):
    /// after the switch they would stay allocated for the connection's whole life. The
    /// cumulation only when empty (bytes that came while the left-over ones were fired stay).
    fn release_after_switch(&self) {
        if let Ok(mut c) = self.cumulation.try_borrow_mut() {
            if c.is_empty() {
                *c = bytes::BytesMut::new();
            }
        }
        drop(self.scratch.take());
        drop(self.spare_actions.take());
        if let Ok(mut q) = self.queue.try_borrow_mut() {
            q.release_storage();
        }
    }
}
