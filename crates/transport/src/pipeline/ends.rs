//! The pipeline's two ends: the head turns outbound operations into channel operations (and
//! drives autoRead), the tail reports whatever reached it unhandled.
//!
//! Ground rules: loop thread only; see the parent module.

use std::net::SocketAddr;
use std::rc::Rc;

use super::Unhandled;
use crate::context::ChannelHandlerContext;
use crate::error::{HandlerResult, TransportError};
use crate::handler::ChannelHandler;
use crate::message::{Message, UserEvent};
use crate::promise::ChannelPromise;

/// The head: outbound operations become channel operations.
pub(super) struct HeadHandler;

thread_local! {
    /// The ends hold no state: one of each per thread serves every pipeline (no allocation
    /// per channel for them).
    static ENDS: (Rc<dyn ChannelHandler>, Rc<dyn ChannelHandler>) =
        (Rc::new(HeadHandler), Rc::new(TailHandler));
}

/// The head and tail handlers, shared by the thread's pipelines.
pub(super) fn handlers() -> (Rc<dyn ChannelHandler>, Rc<dyn ChannelHandler>) {
    ENDS.try_with(|(head, tail)| (head.clone(), tail.clone()))
        .unwrap_or_else(|_| (Rc::new(HeadHandler), Rc::new(TailHandler))) // (thread exiting)
}

impl ChannelHandler for HeadHandler {
    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_active();
        ctx.channel().read_if_auto_read();
        Ok(())
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_read_complete();
        ctx.channel().read_if_auto_read();
        Ok(())
    }
    fn channel_unregistered(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_unregistered();
        if !ctx.channel().is_open() {
            ctx.pipeline().destroy_if_not_deferred();
        }
        Ok(())
    }
    fn bind(
        &self,
        ctx: &ChannelHandlerContext,
        local: SocketAddr,
        promise: ChannelPromise,
    ) -> HandlerResult {
        ctx.channel().core_bind(local, promise);
        Ok(())
    }
    fn connect(
        &self,
        ctx: &ChannelHandlerContext,
        remote: SocketAddr,
        local: Option<SocketAddr>,
        promise: ChannelPromise,
    ) -> HandlerResult {
        ctx.channel().core_connect(remote, local, promise);
        Ok(())
    }
    fn disconnect(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        // TCP has no disconnect without close, as in Netty.
        ctx.channel().core_close(promise);
        Ok(())
    }
    fn close(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        ctx.channel().core_close(promise);
        Ok(())
    }
    fn deregister(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        ctx.channel().core_deregister(promise);
        Ok(())
    }
    fn shutdown_output(
        &self,
        ctx: &ChannelHandlerContext,
        promise: ChannelPromise,
    ) -> HandlerResult {
        ctx.channel().core_shutdown_output(promise);
        Ok(())
    }
    fn read(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.channel().core_begin_read();
        Ok(())
    }
    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        ctx.channel().core_write(msg, promise);
        Ok(())
    }
    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.channel().core_flush();
        Ok(())
    }
}

/// The tail: reports what no handler took.
pub(super) struct TailHandler;

impl ChannelHandler for TailHandler {
    fn takes_read(&self) -> bool {
        false
    }
    fn channel_registered(&self, _: &ChannelHandlerContext) -> HandlerResult {
        Ok(())
    }
    fn channel_unregistered(&self, _: &ChannelHandlerContext) -> HandlerResult {
        Ok(())
    }
    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.pipeline().report_unhandled(Unhandled::Active);
        Ok(())
    }
    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.pipeline().report_unhandled(Unhandled::Inactive);
        Ok(())
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.pipeline().report_unhandled(Unhandled::ReadComplete);
        Ok(())
    }
    fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.pipeline()
            .report_unhandled(Unhandled::WritabilityChanged);
        Ok(())
    }
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        ctx.pipeline().report_unhandled(Unhandled::Message(msg));
        Ok(())
    }
    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        ctx.pipeline().report_unhandled(Unhandled::UserEvent(event));
        Ok(())
    }
    fn exception_caught(
        &self,
        ctx: &ChannelHandlerContext,
        error: TransportError,
    ) -> HandlerResult {
        ctx.pipeline().report_unhandled(Unhandled::Exception(error));
        Ok(())
    }
}
