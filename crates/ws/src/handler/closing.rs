//! The close handshake's state for [`WebSocketHandler`](super::WebSocketHandler): which close
//! frames went each way, the promise of an application's `close()` waiting for the peer's
//! answer, and the close timer.
//!
//! Ground rules: loop thread only. The timer task reaches the handler through its context
//! (`ctx.handler()`), holding no reference to the handler itself; it does nothing once the
//! handler is removed. Cancelled when the channel goes inactive or the handler is removed.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use bytes::Bytes;
use netloop_eventloop::ScheduledHandle;
use netloop_transport::{ChannelHandlerContext, ChannelPromise, LocalListenerExt};

/// Close handshake state of one connection.
#[derive(Default)]
pub(super) struct Closing {
    /// Our close frame was written.
    pub(super) sent: Cell<bool>,
    /// The peer's close frame was read.
    pub(super) received: Cell<bool>,
    /// The channel close was requested (do it once).
    pub(super) closing_channel: Cell<bool>,
    /// What a close under way waits with, made when it starts: an open connection keeps a
    /// pointer, not the promise and timer inline (32 bytes; 0017, "Memory per idle connection").
    waits: RefCell<Option<Box<Waits>>>,
}

/// The promise of a `close()` (completed when the channel closes) and the close timer.
#[derive(Default)]
struct Waits {
    promise: Option<ChannelPromise>,
    timer: Option<ScheduledHandle>,
}

impl Closing {
    /// Keeps the promise of an application's `close()` until the channel closes.
    pub(super) fn set_promise(&self, promise: ChannelPromise) {
        self.waits
            .borrow_mut()
            .get_or_insert_with(Box::default)
            .promise = Some(promise);
    }

    /// Starts the close timer: the peer has `timeout` to answer our close frame.
    pub(super) fn arm(&self, ctx: &ChannelHandlerContext, timeout: Duration) {
        let Some(event_loop) = ctx.try_channel().and_then(|ch| ch.event_loop().local()) else {
            return;
        };
        let c = ctx.clone();
        let handle = event_loop.schedule_local(timeout, move || {
            if c.is_removed() {
                return;
            }
            let handler = c.handler();
            if let Some(ws) = handler
                .as_any()
                .and_then(|a| a.downcast_ref::<super::WebSocketHandler>())
            {
                ws.close_timed_out(&c);
            }
        });
        let old = self
            .waits
            .borrow_mut()
            .get_or_insert_with(Box::default)
            .timer
            .replace(handle);
        if let Some(old) = old {
            old.cancel();
        }
    }

    /// Stops the timer.
    pub(super) fn cancel(&self) {
        let handle = self
            .waits
            .borrow_mut()
            .as_mut()
            .and_then(|w| w.timer.take());
        if let Some(handle) = handle {
            handle.cancel();
        }
    }

    /// Closes the channel once the writes queued before now are written (or failed), with
    /// the application's promise if it asked.
    pub(super) fn close_after_writes(&self, ctx: &ChannelHandlerContext) {
        if self.closing_channel.replace(true) {
            return;
        }
        self.cancel();
        let promise = self
            .waits
            .borrow_mut()
            .as_mut()
            .and_then(|w| w.promise.take())
            .unwrap_or_default();
        let marker = ChannelPromise::new();
        let done = marker.future();
        ctx.write_with(Bytes::new(), marker);
        ctx.flush();
        match done {
            Some(done) => {
                let c = ctx.clone();
                done.add_local_listener(move |_| c.close_with(promise));
            }
            None => ctx.close_with(promise),
        }
    }
}
