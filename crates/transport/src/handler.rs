//! The handler trait: one trait for inbound events and outbound operations, every method with
//! a pass-through default, so a handler implements only what it cares about and a JS adapter is
//! "just another handler".
//!
//! Ground rules:
//! - Handlers run only on their channel's loop thread; they are `!Send` and may hold `Rc`,
//!   `Cell` and `RefCell` state. Methods take `&self`: the pipeline is re-entrant (a handler
//!   that closes the channel from `channel_read` sees `channel_inactive` before it returns),
//!   so keep interior borrows short and never hold one across a `ctx` call.
//! - Inbound events flow head → tail (`ctx.fire_*` passes to the next handler); outbound
//!   operations flow tail → head (`ctx.write`, `ctx.close`, ... pass to the previous handler).
//! - `Err` returned by a handler, or a panic, goes to the *next* handler's `exception_caught`
//!   (an outbound operation with a promise fails that promise instead). An error returned by
//!   `exception_caught` goes on towards the tail, never back into the same handler.
//! - `handler_added` / `handler_removed` are called exactly once each, in that order, on the
//!   loop thread; before the channel is registered they are deferred until registration.

use std::net::SocketAddr;

use crate::context::ChannelHandlerContext;
use crate::error::{HandlerResult, TransportError};
use crate::message::{Message, UserEvent};
use crate::promise::ChannelPromise;

/// A pipeline handler. Every method defaults to passing the event or operation on.
#[allow(unused_variables)]
pub trait ChannelHandler: 'static {
    /// This handler as `Any`, so code holding the pipeline can find a handler by its type
    /// (Netty's `pipeline.get(Class)`; see `ChannelPipeline::find_handler`). `None` by default.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }

    /// The handler was added to a registered pipeline (or the pipeline got registered).
    fn handler_added(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        Ok(())
    }
    /// The handler was removed (explicitly, by `replace`, or when the closed channel is
    /// unregistered and its pipeline torn down).
    fn handler_removed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        Ok(())
    }

    // ---- inbound events (head → tail) ----

    /// The channel was registered on its loop.
    fn channel_registered(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_registered();
        Ok(())
    }
    /// The channel was deregistered from its loop.
    fn channel_unregistered(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_unregistered();
        Ok(())
    }
    /// The channel became active (bound or connected).
    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_active();
        Ok(())
    }
    /// The channel is no longer active (closed).
    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_inactive();
        Ok(())
    }
    /// A message was read (or decoded by an earlier handler).
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        ctx.fire_channel_read(msg);
        Ok(())
    }
    /// The current read burst is over.
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_read_complete();
        Ok(())
    }
    /// A user event (e.g. an idle-state event) passes by.
    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        ctx.fire_user_event_triggered(event);
        Ok(())
    }
    /// The channel's writability changed (see `Channel::is_writable`).
    fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_writability_changed();
        Ok(())
    }
    /// An error was raised by an earlier handler or by the channel.
    fn exception_caught(
        &self,
        ctx: &ChannelHandlerContext,
        error: TransportError,
    ) -> HandlerResult {
        ctx.fire_exception_caught(error);
        Ok(())
    }

    // ---- outbound operations (tail → head) ----

    /// Binds the channel (outbound, towards the head).
    fn bind(
        &self,
        ctx: &ChannelHandlerContext,
        local: SocketAddr,
        promise: ChannelPromise,
    ) -> HandlerResult {
        ctx.bind_with(local, promise);
        Ok(())
    }
    /// Connects the channel (outbound).
    fn connect(
        &self,
        ctx: &ChannelHandlerContext,
        remote: SocketAddr,
        local: Option<SocketAddr>,
        promise: ChannelPromise,
    ) -> HandlerResult {
        ctx.connect_with(remote, local, promise);
        Ok(())
    }
    /// Disconnects the channel (outbound).
    fn disconnect(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        ctx.disconnect_with(promise);
        Ok(())
    }
    /// Closes the channel (outbound).
    fn close(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        ctx.close_with(promise);
        Ok(())
    }
    /// Deregisters the channel from its loop (outbound).
    fn deregister(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        ctx.deregister_with(promise);
        Ok(())
    }
    /// Half-closes the channel's output (outbound; see [`Channel::shutdown_output`]). A
    /// handler that frames the stream ends its side first (TLS sends close_notify), one that
    /// holds writes or flushes passes them on first.
    fn shutdown_output(
        &self,
        ctx: &ChannelHandlerContext,
        promise: ChannelPromise,
    ) -> HandlerResult {
        ctx.shutdown_output_with(promise);
        Ok(())
    }
    /// False if this handler's `read` only passes the request on (the default method): a
    /// read travelling towards the head goes past its context without calling it, and when
    /// no handler of a pipeline takes `read`, a read the pipeline asks for (autoRead after
    /// every read batch) goes to the head directly instead of through every context.
    /// Asked when the handler is linked into the pipeline or out of it; true by default.
    fn takes_read(&self) -> bool {
        true
    }

    /// False if this handler's `write` only passes the write on, unchanged and with its
    /// promise (as the default method does): a write travelling towards the head goes past
    /// its context without calling it. Asked when the handler is linked into the pipeline;
    /// true by default.
    fn takes_write(&self) -> bool {
        true
    }

    /// False if this handler's `flush` only passes the flush on (the default method): a
    /// flush travelling towards the head goes past its context without calling it. Asked
    /// when the handler is linked into the pipeline; true by default.
    fn takes_flush(&self) -> bool {
        true
    }

    /// True if this handler's [`ChannelHandler::write_and_flush`] does a write and the flush
    /// after it in one: a write and flush that reach its context together (the
    /// context is the nearest before the writer that takes writes and the nearest that takes
    /// flushes) then make one call instead of two. False by default. Asked when the handler
    /// is linked into the pipeline.
    fn takes_write_and_flush(&self) -> bool {
        false
    }

    /// A write and the flush after it, together (called only when
    /// [`ChannelHandler::takes_write_and_flush`] is true; see
    /// [`ChannelHandlerContext::write_and_flush_with`]). It must act as
    /// [`ChannelHandler::write`] and then [`ChannelHandler::flush`] would (what the default
    /// does): the same bytes in the same order, the same promise outcome. An error fails the
    /// promise (or goes to `exception_caught` when the promise cannot take it).
    fn write_and_flush(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        self.write(ctx, msg, promise)?;
        self.flush(ctx)
    }

    /// Asks for one more read (what `autoRead` does after every read batch).
    fn read(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.read();
        Ok(())
    }
    /// Writes a message (outbound); it is sent on the next flush.
    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        ctx.write_with(msg, promise);
        Ok(())
    }
    /// Flushes the written messages (outbound).
    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.flush();
        Ok(())
    }
}
