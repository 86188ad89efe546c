//! The kind-specific half of a channel (Netty's `doXxx` methods): stream sockets, listeners
//! and the embedded channel implement it.
//!
//! Ground rules: loop thread only; every method gets the channel so it can fire events and
//! reach the outbound buffer.

use std::net::SocketAddr;

use netloop_eventloop::Readiness;

use super::Channel;
use crate::error::TransportError;
use crate::message::Message;
use crate::options::ChannelOption;
use crate::promise::ChannelPromise;

/// The kind-specific half of a channel (Netty's `doXxx` methods).
pub(crate) trait ChannelIo {
    fn is_active(&self) -> bool;
    fn local_addr(&self) -> Option<SocketAddr>;
    fn remote_addr(&self) -> Option<SocketAddr>;
    /// Registers the socket, if any, with the loop's selector.
    fn do_register(&self, ch: &Channel) -> Result<(), TransportError>;
    /// Removes the socket from the selector (the channel stays open).
    fn do_deregister(&self, ch: &Channel);
    fn do_bind(&self, ch: &Channel, local: SocketAddr) -> Result<(), TransportError>;
    fn do_connect(
        &self,
        ch: &Channel,
        remote: SocketAddr,
        local: Option<SocketAddr>,
        promise: ChannelPromise,
    );
    /// A read was asked for while active.
    fn do_begin_read(&self, ch: &Channel);
    /// Writes flushed entries of the outbound buffer.
    fn do_write(&self, ch: &Channel);
    /// One write of `data` straight to the socket, past the outbound buffer (the caller made
    /// sure nothing is queued): `None` if this kind of channel has no such path or cannot
    /// write now (not connected, a write already failed).
    fn write_now(&self, _data: &[u8]) -> Option<std::io::Result<usize>> {
        None
    }
    /// True while a flush waits for the socket to become writable.
    fn is_flush_pending(&self) -> bool {
        false
    }
    /// The I/O error that broke the socket and was not reported yet, if any (a failed write
    /// whose close waits for a last read, or the socket's `SO_ERROR`): a close for another
    /// reason (the peer's FIN read meanwhile) fails the flushed writes with it, as the writes
    /// failed because of it (Netty fails a write with the cause).
    fn broken_by(&self) -> Option<TransportError> {
        None
    }
    /// Deregisters and closes the socket.
    fn do_close(&self, ch: &Channel);
    /// Checks (and may convert) a message before it is queued for writing.
    fn filter_outbound(&self, msg: Message) -> Result<Message, TransportError>;
    fn ready(&self, ch: &Channel, readiness: Readiness);
    /// The selector was rebuilt: move the source from `old` to `new` with its interest.
    fn reregister(
        &self,
        old: &mio::Registry,
        new: &mio::Registry,
        token: mio::Token,
    ) -> std::io::Result<()>;
    fn apply_option(&self, _opt: &ChannelOption) -> std::io::Result<()> {
        Ok(())
    }
    /// Half-close: the FIN goes out once nothing flushed is left to write.
    fn shutdown_output(&self, _ch: &Channel, promise: ChannelPromise) {
        promise.try_failure(TransportError::UnsupportedOperation("shutdown_output"));
    }
    /// True once the output is shut down or shutting down: writes are refused.
    fn is_output_shutdown(&self) -> bool {
        false
    }
    #[cfg(unix)]
    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }
    fn as_any(&self) -> &dyn std::any::Any;
}
