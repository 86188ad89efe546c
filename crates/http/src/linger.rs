//! Lingering close (nginx's `lingering_close`): when the codec closes a connection whose
//! client may still be sending (a request refused before its body arrived, as a 413 for a
//! body announced too large; a response that closes while its request's body, or a later
//! request, is still coming), it half-closes instead of closing (the responses, then
//! close_notify under TLS, then the FIN), reads and drops what still comes for at most
//! `linger_timeout`, and closes when the client closes or the time is up.
//!
//! Why: closing a socket that holds unread input makes the kernel answer with a RST, and the
//! client's next writes fail: node's http client, still busy writing its upload, then reports
//! `ECONNRESET` or `EPIPE` instead of the 413 it had received (curl reads the 413 anyway; a
//! RST can also overtake data still in flight on a real network).
//!
//! Ground rules:
//! - Loop thread only; the timer task reaches the codec through its context, as head_timer.rs.
//! - Input while lingering is dropped as it comes (the decoder is stopped): memory stays flat
//!   whatever the client sends. Reading goes on even if reading was paused (autoRead off).
//! - The client's end closes at once: its EOF closes the channel (or, with half-closure
//!   allowed, the input-shutdown event does).
//! - Off the loop thread (an embedded channel without a loop), or without a timeout, the
//!   codec closes at once as before.

use std::time::Duration;

use bytes::Bytes;
use netloop_transport::{ChannelHandlerContext, ChannelPromise, LocalListenerExt};

use super::HttpServerCodec;

impl HttpServerCodec {
    /// Whether closing now should linger: the client may still be sending. Asked before the
    /// decoder stops and its buffer is dropped.
    pub(super) fn linger_wanted(&self) -> Option<Duration> {
        let timeout = self.config.linger_timeout?;
        let d = self.decoder.borrow();
        let unread = self.refused.get()
            || d.request_in_body().is_some()
            || d.is_mid_request(&self.cumulation.borrow())
            || !self.cumulation.borrow().is_empty();
        unread.then_some(timeout)
    }

    /// The channel goes on reading after the half-close, until the client closes or `timeout`.
    fn start_lingering(&self, ctx: &ChannelHandlerContext, timeout: Duration) {
        let Some(event_loop) = ctx.try_channel().and_then(|ch| ch.event_loop().local()) else {
            ctx.close();
            return;
        };
        self.lingering.set(true);
        let c = ctx.clone();
        let handle = event_loop.schedule_local(timeout, move || {
            c.close();
        });
        *self.linger_timer.borrow_mut() = Some(handle);
        if self.pause.is_paused() {
            self.unpause_reading(ctx);
        }
        ctx.read_unless_auto_read();
    }

    /// Stops the linger clock (the channel closed).
    pub(super) fn cancel_linger(&self) {
        if let Some(handle) = self.linger_timer.borrow_mut().take() {
            handle.cancel();
        }
    }
}

/// Once the writes queued before now are written: half-closes the output and lingers (see the
/// module's comment), or closes if the writes failed or the channel went inactive meanwhile.
pub(crate) fn close_lingering(ctx: &ChannelHandlerContext, timeout: Duration) {
    let marker = ChannelPromise::new();
    let Some(done) = marker.future() else {
        ctx.close();
        return;
    };
    ctx.write_with(Bytes::new(), marker);
    ctx.flush();
    let c = ctx.clone();
    done.add_local_listener(move |written| {
        let active = c.try_channel().is_some_and(|ch| ch.is_active());
        if written.is_err() || !active || c.is_removed() {
            c.close();
            return;
        }
        let shut = ChannelPromise::new();
        let shut_done = shut.future();
        c.shutdown_output_with(shut);
        let handler = c.handler();
        match handler
            .as_any()
            .and_then(|a| a.downcast_ref::<HttpServerCodec>())
        {
            Some(codec) => codec.start_lingering(&c, timeout),
            None => {
                c.close();
                return;
            }
        }
        // A half-close the socket refused (no stream socket): close as before.
        if let Some(shut_done) = shut_done {
            let c2 = c.clone();
            shut_done.add_local_listener(move |r| {
                if r.is_err() {
                    c2.close();
                }
            });
        }
    });
}
