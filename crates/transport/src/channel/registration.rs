//! What a registered channel is to its loop's selector: the entry that receives readiness and
//! follows selector rebuilds and shutdown.

use std::rc::Rc;

use netloop_eventloop::{IoHandler, Readiness};

use crate::{ChannelPromise, TransportError};

use super::Channel;

impl Channel {
    /// The loop reported readiness for this channel's socket.
    pub(crate) fn ready(&self, readiness: Readiness) {
        self.0.io.ready(self, readiness);
    }

    /// The selector-table entry for this channel.
    pub(crate) fn io_handler(&self) -> Rc<dyn IoHandler> {
        Rc::new(Registration(self.clone()))
    }
}

/// What the loop's selector table holds for a registered channel: a strong reference, so a
/// registered channel lives as long as its registration.
struct Registration(Channel);

impl IoHandler for Registration {
    fn ready(&self, readiness: Readiness) {
        self.0.ready(readiness);
    }
    fn reregister(
        &self,
        old: &mio::Registry,
        new: &mio::Registry,
        token: mio::Token,
    ) -> std::io::Result<()> {
        self.0 .0.io.reregister(old, new, token)
    }
    /// The socket is registered nowhere after a selector rebuild: report it, then close (as
    /// Netty does when re-registering a channel fails).
    fn reregister_failed(&self, error: std::io::Error) {
        self.0.pipeline().fire_exception_caught(error.into());
        self.0.close();
    }
    fn close_on_shutdown(&self) {
        self.0.close();
    }
    /// Without the pipeline (Netty's `unsafe().close()`): its handlers had their chance at
    /// the start of the shutdown. Writes still pending fail with `ERR_CHANNEL_CLOSED` whose
    /// cause is `ERR_LOOP_SHUTDOWN`.
    fn close_on_termination(&self) {
        if self.0.is_open() {
            let cause = TransportError::foreign(
                "ERR_LOOP_SHUTDOWN",
                std::io::Error::other("the event loop shut down before the channel closed"),
            );
            self.0.close_with_cause(ChannelPromise::void(), Some(cause));
        }
    }
}
