//! Half-closing the output of a stream channel (`shutdown_output`): the FIN goes out once
//! nothing flushed is left to write, so queued output reaches the peer before it; writes are
//! refused from the request on; the channel closes when both directions are shut.
//!
//! Ground rules: loop thread only; see the parent module. The request is checked again after
//! every write pass (`write` calls `finish_shutdown_if_drained`).

use super::{SocketIo, State};
use crate::channel::{fail_all, Channel};
use crate::error::TransportError;
use crate::promise::ChannelPromise;

impl SocketIo {
    pub(super) fn request_shutdown_output(&self, ch: &Channel, promise: ChannelPromise) {
        if !promise.set_uncancellable() {
            return;
        }
        match self.state.get() {
            State::Connected => {}
            State::Closed => {
                promise.try_failure(ch.closed_error());
                return;
            }
            _ => {
                promise.try_failure(TransportError::NotYetConnected);
                return;
            }
        }
        if self.output_shutdown.get() {
            promise.try_success();
            return;
        }
        self.rare().shutdown_waiters.push(promise);
        self.shutdown_requested.set(true);
        self.finish_shutdown_if_drained(ch);
    }

    /// Sends the FIN if a shutdown was asked for and nothing flushed is left to write; the
    /// writes still unflushed then fail, the waiting promises complete, and the channel
    /// closes if its input is shut too.
    pub(super) fn finish_shutdown_if_drained(&self, ch: &Channel) {
        if !self.shutdown_requested.get()
            || self.output_shutdown.get()
            || self.state.get() != State::Connected
            || ch.0.outbound.borrow().flushed_len() > 0
        {
            return;
        }
        let (_, unflushed) = ch.0.outbound.borrow_mut().take_all();
        let change = ch.0.outbound.borrow().writability_ref().recheck_low();
        let result = match self.stream.borrow().as_ref() {
            Some(s) => s
                .shutdown(std::net::Shutdown::Write)
                .map_err(TransportError::from),
            None => Err(ch.closed_error()),
        };
        self.output_shutdown.set(true);
        fail_all(unflushed, &TransportError::OutputShutdown);
        ch.fire_writability(change);
        let waiters = self.take_shutdown_waiters();
        for p in waiters {
            p.try_complete(result.clone());
        }
        if self.input_shutdown.get() && ch.is_open() {
            ch.core_close(ChannelPromise::void());
        }
    }

    /// The channel closes with a shutdown still waiting for the output to drain.
    pub(super) fn fail_shutdown_waiters(&self, err: &TransportError) {
        let waiters = self.take_shutdown_waiters();
        fail_all(waiters, err);
    }
}
