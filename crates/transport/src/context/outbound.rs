//! The outbound operations of a context: each passes the operation to the nearest handler
//! before this one that takes it, and the conveniences built on them (a write without a
//! promise, futures). Split from [`super`]; its ground rules hold here.

use std::net::SocketAddr;

use super::{ChannelHandlerContext, FUSES_WRITE_FLUSH, SKIP_FLUSH, SKIP_READ, SKIP_WRITE};
use crate::channel::WrittenNow;
use crate::message::Message;
use crate::promise::{ChannelFuture, ChannelPromise};

impl ChannelHandlerContext {
    // ---- outbound: pass the operation to the previous handler ----
    //
    // An operation whose promise is already cancelled goes no further (Netty's
    // `isNotValidPromise`): no handler before this one sees it, and a write's message is
    // dropped. The head makes the promise uncancellable before acting (see `channel`).

    /// Binds through the handlers before this one, completing `promise`.
    pub fn bind_with(&self, local: SocketAddr, promise: ChannelPromise) {
        if promise.is_cancelled() {
            return;
        }
        if let Some(prev) = self.prev() {
            prev.invoke_with_promise(&promise.clone(), |h, c| h.bind(c, local, promise));
        }
    }

    /// Connects through the handlers before this one, completing `promise`.
    pub fn connect_with(
        &self,
        remote: SocketAddr,
        local: Option<SocketAddr>,
        promise: ChannelPromise,
    ) {
        if promise.is_cancelled() {
            return;
        }
        if let Some(prev) = self.prev() {
            prev.invoke_with_promise(&promise.clone(), |h, c| {
                h.connect(c, remote, local, promise)
            });
        }
    }

    /// Disconnects through the handlers before this one, completing `promise`.
    pub fn disconnect_with(&self, promise: ChannelPromise) {
        if promise.is_cancelled() {
            return;
        }
        if let Some(prev) = self.prev() {
            prev.invoke_with_promise(&promise.clone(), |h, c| h.disconnect(c, promise));
        }
    }

    /// Closes through the handlers before this one, completing `promise`.
    pub fn close_with(&self, promise: ChannelPromise) {
        if promise.is_cancelled() {
            return;
        }
        if let Some(prev) = self.prev() {
            prev.invoke_with_promise(&promise.clone(), |h, c| h.close(c, promise));
        }
    }

    /// Deregisters through the handlers before this one, completing `promise`.
    pub fn deregister_with(&self, promise: ChannelPromise) {
        if promise.is_cancelled() {
            return;
        }
        if let Some(prev) = self.prev() {
            prev.invoke_with_promise(&promise.clone(), |h, c| h.deregister(c, promise));
        }
    }

    /// Half-closes the output through the handlers before this one, completing `promise`.
    pub fn shutdown_output_with(&self, promise: ChannelPromise) {
        if promise.is_cancelled() {
            return;
        }
        if let Some(prev) = self.prev() {
            prev.invoke_with_promise(&promise.clone(), |h, c| h.shutdown_output(c, promise));
        }
    }

    /// Writes `msg` through the handlers before this one, completing `promise`.
    pub fn write_with(&self, msg: impl Into<Message>, promise: ChannelPromise) {
        if promise.is_cancelled() {
            // Netty's isNotValidPromise: the message is released, the write never happens.
            return;
        }
        let msg = msg.into();
        if let Some(prev) = self.prev_taking(SKIP_WRITE) {
            prev.invoke_with_promise(&promise.clone(), |h, c| h.write(c, msg, promise));
        }
    }

    /// Writes `data` and flushes, as [`ChannelHandlerContext::write_and_flush_with`] with the
    /// bytes as its message, straight to the socket when nothing stands between: no handler
    /// before this one takes writes or flushes (each would only pass them on to the head) and
    /// the channel's outbound buffer is empty (see `Channel::core_write_now` for the rest of
    /// the conditions). Then no message is made and no entry queued. What did not go is the
    /// caller's to write and flush the usual way ([`WrittenNow::Part`]).
    pub fn write_and_flush_now(&self, data: &[u8], promise: ChannelPromise) -> WrittenNow {
        const BOTH: u8 = SKIP_WRITE | SKIP_FLUSH;
        if promise.is_cancelled() {
            return WrittenNow::Part(0, promise);
        }
        let Some(p) = self.prev_taking_either(BOTH) else {
            return WrittenNow::Part(0, promise);
        };
        // Only the head (the one context without a predecessor) writes to the channel.
        if p.prev().is_some() {
            return WrittenNow::Part(0, promise);
        }
        match self.try_channel() {
            Some(ch) => ch.core_write_now(data, promise),
            None => WrittenNow::Part(0, promise),
        }
    }

    /// Asks for a read (passed towards the head).
    pub fn read(&self) {
        if let Some(prev) = self.prev_taking(SKIP_READ) {
            prev.invoke_self(|h, c| h.read(c));
        }
    }

    /// Asks for a read unless the channel reads by itself (`auto_read`). A decoder calls it in
    /// `channel_read_complete` when a read brought bytes but no whole message (Netty's
    /// `ByteToMessageDecoder`): with `auto_read` off, a partial message could otherwise never
    /// complete.
    pub fn read_unless_auto_read(&self) {
        if !self.try_channel().map_or(true, |ch| ch.is_auto_read()) {
            self.read();
        }
    }

    /// Flushes written messages (passed towards the head).
    pub fn flush(&self) {
        if let Some(prev) = self.prev_taking(SKIP_FLUSH) {
            prev.invoke_self(|h, c| h.flush(c));
        }
    }

    // ---- conveniences ----

    /// Writes without a promise (a failure is not reported to anyone).
    pub fn write(&self, msg: impl Into<Message>) {
        self.write_with(msg, ChannelPromise::void());
    }

    /// Writes `msg` through the handlers before this one and flushes.
    pub fn write_and_flush(&self, msg: impl Into<Message>) {
        self.write_and_flush_with(msg, ChannelPromise::void());
    }

    /// As [`ChannelHandlerContext::write_and_flush`], completing `promise`. When the write and
    /// the flush reach the same context first and its handler takes them together
    /// ([`ChannelHandler::takes_write_and_flush`]), that is one call of its
    /// [`ChannelHandler::write_and_flush`]; otherwise the write, then the flush, as Netty's
    /// `writeAndFlush`.
    ///
    /// [`ChannelHandler::takes_write_and_flush`]: crate::ChannelHandler::takes_write_and_flush
    /// [`ChannelHandler::write_and_flush`]: crate::ChannelHandler::write_and_flush
    pub fn write_and_flush_with(&self, msg: impl Into<Message>, promise: ChannelPromise) {
        if !promise.is_cancelled() {
            if let Some(prev) = self.prev_taking_either(SKIP_WRITE | SKIP_FLUSH) {
                // The nearest context taking the write or the flush: both stop there when it
                // takes both (its skips have neither bit).
                if prev.0.skips.get() & (SKIP_WRITE | SKIP_FLUSH | FUSES_WRITE_FLUSH)
                    == FUSES_WRITE_FLUSH
                {
                    let msg = msg.into();
                    prev.invoke_with_promise(&promise.clone(), |h, c| {
                        h.write_and_flush(c, msg, promise)
                    });
                    return;
                }
            }
        }
        self.write_with(msg, promise);
        self.flush();
    }

    /// Writes and returns the write's future.
    pub fn write_future(&self, msg: impl Into<Message>) -> ChannelFuture {
        let p = ChannelPromise::new();
        let f = p.future_or_never();
        self.write_with(msg, p);
        f
    }

    /// Closes through the handlers before this one.
    pub fn close(&self) -> ChannelFuture {
        let p = ChannelPromise::new();
        let f = p.future_or_never();
        self.close_with(p);
        f
    }

    /// Binds through the handlers before this one.
    pub fn bind(&self, local: SocketAddr) -> ChannelFuture {
        let p = ChannelPromise::new();
        let f = p.future_or_never();
        self.bind_with(local, p);
        f
    }

    /// Connects through the handlers before this one.
    pub fn connect(&self, remote: SocketAddr) -> ChannelFuture {
        let p = ChannelPromise::new();
        let f = p.future_or_never();
        self.connect_with(remote, None, p);
        f
    }

    /// Disconnects through the handlers before this one.
    pub fn disconnect(&self) -> ChannelFuture {
        let p = ChannelPromise::new();
        let f = p.future_or_never();
        self.disconnect_with(p);
        f
    }

    /// Deregisters through the handlers before this one.
    pub fn deregister(&self) -> ChannelFuture {
        let p = ChannelPromise::new();
        let f = p.future_or_never();
        self.deregister_with(p);
        f
    }

    /// A new promise for an operation of this channel.
    pub fn new_promise(&self) -> ChannelPromise {
        ChannelPromise::new()
    }
}
