//! Half-closing the output through TLS (`shutdown_output`): what the handler holds is
//! encrypted and sent first, then close_notify, then the FIN. In TLS 1.3 close_notify ends
//! the sender's direction only (RFC 8446 §6.1): the handler goes on reading and decrypting
//! what the peer still sends.
//!
//! Ground rules:
//! - Same thread and order as the handler. A held file region still waiting for room delays
//!   the close_notify and the FIN until it is read out (writes.rs calls back here when the
//!   held writes drain).
//! - From the request on, new writes fail with `ERR_OUTPUT_SHUTDOWN`, as the socket's own
//!   half-close refuses them; writes held at the request (flushed or not) still go out.
//! - Before the handshake completed there is no session to end: the request passes on and the
//!   peer sees a bare FIN, as without TLS.
//! - The peer's close_notify ends its direction as a FIN ends a plain socket's (`peer_ended`):
//!   with `allow_half_closure` the handlers behind get `ChannelInputShutdown` (once: the FIN
//!   that follows brings no second one) and may go on writing; otherwise the channel closes
//!   through the whole pipeline from its tail, as the transport's own end of input does, so
//!   the handlers behind see the close after the reads before it (a JS handler gets its reads
//!   at the end of the loop iteration) and this handler's `close` answers with close_notify
//!   after their replies. Closing from this handler's own place closed the channel before a JS
//!   echo had seen the last data: a client that wrote, then ended, got nothing back.

use std::rc::Rc;

use netloop_transport::{
    ChannelHandlerContext, ChannelInputShutdown, ChannelPromise, LocalListenerExt,
};

use super::{Phase, State};

impl State {
    pub(super) fn shutdown_output(self: &Rc<Self>, ctx: &ChannelHandlerContext, p: ChannelPromise) {
        if self.phase.get() != Phase::Done || self.close_sent.get() {
            ctx.shutdown_output_with(p);
            return;
        }
        self.output_shut.set(true);
        self.shutdown_waiters.borrow_mut().push(p);
        self.encrypt_held(ctx);
        self.finish_shutdown_if_drained(ctx);
    }

    /// The peer sent close_notify (the handshake done): its direction ended.
    pub(super) fn peer_ended(&self, ctx: &ChannelHandlerContext) {
        let Some(ch) = ctx.try_channel() else {
            return;
        };
        if ch.options().allow_half_closure {
            if !self.input_ended.replace(true) {
                ctx.fire_user_event(ChannelInputShutdown);
            }
        } else {
            ch.pipeline().close_with(ChannelPromise::void());
        }
    }

    /// The transport's end of input (the FIN after close_notify): reported already.
    pub(super) fn swallows_input_shutdown(&self) -> bool {
        self.input_ended.get()
    }

    /// Sends close_notify and passes the half-close on once nothing is held.
    pub(super) fn finish_shutdown_if_drained(self: &Rc<Self>, ctx: &ChannelHandlerContext) {
        if self.shutdown_waiters.borrow().is_empty()
            || self.encrypting.get()
            || !self.held.borrow().is_empty()
        {
            return;
        }
        let waiters = std::mem::take(&mut *self.shutdown_waiters.borrow_mut());
        self.send_close_notify(ctx);
        ctx.flush();
        // One half-close goes on; the other requests complete with it.
        let first = ChannelPromise::new();
        let done = first.future();
        ctx.shutdown_output_with(first);
        match done {
            Some(done) => done.add_local_listener(move |r| {
                for w in waiters {
                    match r {
                        Ok(()) => w.try_success(),
                        Err(e) => w.try_failure(e.clone()),
                    };
                }
            }),
            None => {
                for w in waiters {
                    w.try_success();
                }
            }
        }
    }
}
