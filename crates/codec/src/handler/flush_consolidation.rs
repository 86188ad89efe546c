//! [`FlushConsolidationHandler`]: Netty's `FlushConsolidationHandler`, fewer flushes (and so
//! fewer write system calls) for handlers that flush after every small write.
//!
//! Netty's rules, kept as they are:
//! - While a read batch is in progress (`channel_read` seen, `channel_read_complete` not yet),
//!   flushes are counted, not passed on; the read batch's end passes one flush on if any was
//!   counted. Every `explicit_flush_after_flushes`-th counted flush is passed on at once, so a
//!   long batch still writes now and then.
//! - Outside a read batch a flush passes at once, unless `consolidate_when_no_read_in_progress`
//!   is set: then it is counted and one flush is passed on by a task on the channel's loop
//!   (`LocalLoop::execute_local`), which runs in the loop's next task batch.
//! - A close, a disconnect, an exception, the channel turning unwritable, and the handler's
//!   removal pass a counted flush on first.
//!
//! In netloop, a JS handler sees a read batch after the native pipeline has finished it (the
//! hub delivers the loop's events once per iteration, and applies what JS wrote when that call
//! returns), so its flushes arrive outside the read batch: consolidating a JS handler's
//! `writeAndFlush` per message needs `consolidate_when_no_read_in_progress`. Native handlers
//! behind this one flush inside the batch, as in Netty.
//!
//! Ground rules: loop thread only; state in `Cell`s, no borrow held across a pipeline call (the
//! pipeline is re-entrant). The scheduled task holds the context, not the handler: it reaches
//! the handler through `ctx.handler()` and does nothing once the handler is removed or a newer
//! flush made it stale (a generation number).

use std::cell::Cell;

use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelPromise, HandlerResult, Message, TransportError,
};

use crate::error::{invalid_config, ConfigError};

/// Netty's default for `explicit_flush_after_flushes`.
pub const DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES: usize = 256;

/// Consolidates flushes (Netty's `FlushConsolidationHandler`). Put it in front of (towards the
/// head from) the handlers whose flushes it should consolidate.
///
/// ```
/// use netloop_codec::FlushConsolidationHandler;
/// let h = FlushConsolidationHandler::new(256, true).unwrap();
/// # let _ = h;
/// ```
#[derive(Debug)]
pub struct FlushConsolidationHandler {
    explicit_flush_after_flushes: usize,
    consolidate_when_no_read_in_progress: bool,
    read_in_progress: Cell<bool>,
    flush_pending: Cell<usize>,
    /// The generation of the scheduled flush task, if one is scheduled.
    scheduled: Cell<Option<u64>>,
    generation: Cell<u64>,
}

impl Default for FlushConsolidationHandler {
    /// Netty's defaults: an explicit flush after 256 flushes, no consolidation outside reads.
    fn default() -> Self {
        Self::new(DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, false).expect("valid defaults")
    }
}

impl FlushConsolidationHandler {
    /// A handler passing on at most one flush per `explicit_flush_after_flushes` flushes while
    /// a read batch lasts; with `consolidate_when_no_read_in_progress`, also outside reads.
    ///
    /// # Errors
    /// `explicit_flush_after_flushes` is 0.
    pub fn new(
        explicit_flush_after_flushes: usize,
        consolidate_when_no_read_in_progress: bool,
    ) -> Result<Self, ConfigError> {
        if explicit_flush_after_flushes == 0 {
            return Err(invalid_config(
                "explicit_flush_after_flushes must be positive",
            ));
        }
        Ok(FlushConsolidationHandler {
            explicit_flush_after_flushes,
            consolidate_when_no_read_in_progress,
            read_in_progress: Cell::new(false),
            flush_pending: Cell::new(0),
            scheduled: Cell::new(None),
            generation: Cell::new(0),
        })
    }

    /// Flushes counted and not passed on yet.
    pub fn pending_flushes(&self) -> usize {
        self.flush_pending.get()
    }

    fn flush_now(&self, ctx: &ChannelHandlerContext) {
        self.scheduled.set(None); // a scheduled task is now stale
        self.flush_pending.set(0);
        ctx.flush();
    }

    fn flush_if_needed(&self, ctx: &ChannelHandlerContext) {
        if self.flush_pending.get() > 0 {
            self.flush_now(ctx);
        }
    }

    fn reset_read_and_flush_if_needed(&self, ctx: &ChannelHandlerContext) {
        self.read_in_progress.set(false);
        self.flush_if_needed(ctx);
    }

    /// Counts a flush; true when it is the one to pass on.
    fn count(&self) -> bool {
        let n = self.flush_pending.get() + 1;
        self.flush_pending.set(n);
        n >= self.explicit_flush_after_flushes
    }

    fn schedule_flush(&self, ctx: &ChannelHandlerContext) {
        if self.scheduled.get().is_some() {
            return;
        }
        let Some(event_loop) = ctx.try_channel().and_then(|ch| ch.event_loop().local()) else {
            self.flush_now(ctx); // not on the channel's loop: nothing to defer to
            return;
        };
        let generation = self.generation.get() + 1;
        self.generation.set(generation);
        self.scheduled.set(Some(generation));
        let c = ctx.clone();
        event_loop.execute_local(move || {
            if c.is_removed() {
                return;
            }
            let handler = c.handler();
            let Some(me) = handler
                .as_any()
                .and_then(|a| a.downcast_ref::<FlushConsolidationHandler>())
            else {
                return;
            };
            if me.scheduled.get() != Some(generation) {
                return;
            }
            me.scheduled.set(None);
            if me.flush_pending.get() > 0 && !me.read_in_progress.get() {
                me.flush_now(&c);
            }
        });
    }
}

impl ChannelHandler for FlushConsolidationHandler {
    // Reads and writes pass by (the default methods): the mask skips this context.
    fn takes_read(&self) -> bool {
        false
    }
    fn takes_write(&self) -> bool {
        false
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.read_in_progress.get() {
            // The read batch's end flushes; pass on every explicit_flush_after_flushes-th.
            if self.count() {
                self.flush_now(ctx);
            }
        } else if self.consolidate_when_no_read_in_progress {
            if self.count() {
                self.flush_now(ctx);
            } else {
                self.schedule_flush(ctx);
            }
        } else {
            self.flush_now(ctx);
        }
        Ok(())
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        self.read_in_progress.set(true);
        ctx.fire_channel_read(msg);
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        // This may be the last event of the read batch: flush now.
        self.reset_read_and_flush_if_needed(ctx);
        ctx.fire_channel_read_complete();
        Ok(())
    }

    fn exception_caught(
        &self,
        ctx: &ChannelHandlerContext,
        error: TransportError,
    ) -> HandlerResult {
        self.reset_read_and_flush_if_needed(ctx);
        ctx.fire_exception_caught(error);
        Ok(())
    }

    fn disconnect(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        self.reset_read_and_flush_if_needed(ctx);
        ctx.disconnect_with(promise);
        Ok(())
    }

    fn close(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        self.reset_read_and_flush_if_needed(ctx);
        ctx.close_with(promise);
        Ok(())
    }

    /// The FIN goes out after what was flushed: a flush held back goes first.
    fn shutdown_output(
        &self,
        ctx: &ChannelHandlerContext,
        promise: ChannelPromise,
    ) -> HandlerResult {
        self.reset_read_and_flush_if_needed(ctx);
        ctx.shutdown_output_with(promise);
        Ok(())
    }

    fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        let writable = ctx.try_channel().map_or(true, |ch| ch.is_writable());
        if !writable {
            self.flush_if_needed(ctx);
        }
        ctx.fire_channel_writability_changed();
        Ok(())
    }

    fn handler_removed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.flush_if_needed(ctx);
        Ok(())
    }
}
