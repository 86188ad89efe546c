//! `ChannelInitializer`: a handler that sets up a channel's pipeline once, when the channel is
//! registered, then removes itself (Netty's `ChannelInitializer`).
//!
//! Ground rules: runs on the channel's loop thread. The init function is shared by every
//! channel a bootstrap creates (possibly on several loop threads), so it is `Send + Sync`;
//! what it builds (the handlers) is per channel and need not be.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Arc;

use crate::channel::{Channel, ChannelId};
use crate::context::ChannelHandlerContext;
use crate::error::HandlerResult;
use crate::handler::ChannelHandler;

/// Builds a channel's pipeline.
pub type InitFn = Arc<dyn Fn(&Channel) -> HandlerResult + Send + Sync>;

/// Runs an init function once per channel, then leaves the pipeline. One instance may be
/// shared by the channels of one thread (Netty's `@Sharable` initializer).
pub struct ChannelInitializer {
    init: InitFn,
    /// Channels being initialised: guards against running twice for one channel.
    running: RefCell<HashSet<ChannelId>>,
}

impl ChannelInitializer {
    /// An initializer that runs `init` on every new channel.
    pub fn new(init: impl Fn(&Channel) -> HandlerResult + Send + Sync + 'static) -> Self {
        ChannelInitializer {
            init: Arc::new(init),
            running: RefCell::default(),
        }
    }

    /// An initializer from a shared function.
    pub fn from_arc(init: InitFn) -> Self {
        ChannelInitializer {
            init,
            running: RefCell::default(),
        }
    }
}

impl ChannelHandler for ChannelInitializer {
    // Reads, writes and flushes pass by (the default methods): the mask skips this context.
    fn takes_read(&self) -> bool {
        false
    }
    fn takes_write(&self) -> bool {
        false
    }
    fn takes_flush(&self) -> bool {
        false
    }

    /// `handler_added` runs once the channel is registered (the pipeline defers it), which is
    /// when Netty runs `initChannel`. A failure closes the channel, after reporting the error.
    fn handler_added(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        let ch = ctx.channel();
        if !self.running.borrow_mut().insert(ch.id()) {
            return Ok(());
        }
        let result = (self.init)(&ch);
        if !ctx.is_removed() {
            let _ = ctx.pipeline().remove(ctx.name());
        }
        if let Err(e) = result {
            ctx.fire_exception_caught(e);
            ch.close();
        }
        Ok(())
    }

    fn handler_removed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if let Some(ch) = ctx.try_channel() {
            self.running.borrow_mut().remove(&ch.id());
        }
        Ok(())
    }
}

impl std::fmt::Debug for ChannelInitializer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelInitializer").finish_non_exhaustive()
    }
}
