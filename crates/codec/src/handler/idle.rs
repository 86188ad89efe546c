//! [`IdleStateHandler`]: Netty's `IdleStateHandler` on a netloop channel. The clock logic is
//! the layer-1 [`IdleStateTracker`]; this module adds the timer, the lifecycle and the
//! pipeline events.
//!
//! Ground rules:
//! - Loop thread only. State is shared between the handler and its timer task through an
//!   `Rc`; the task holds only a `Weak`, so a dropped handler's timer does nothing.
//! - Exactly one loop timer is armed while the handler runs, at the tracker's
//!   `next_deadline()` (`LocalLoop::schedule_local` on the channel's loop); when it fires the
//!   tracker is polled, the timer is re-armed, then the events are fired. Activity never
//!   re-arms: the tracker postpones a deadline that comes too early, as Netty's tasks do.
//! - Lifecycle (Netty's `initialize`/`destroy`): tracking starts at `channel_active`, at
//!   `channel_registered` or `handler_added` when the channel is already active, at the
//!   loop's current time; it stops for good (timer cancelled) at `channel_inactive` or
//!   `handler_removed`. No event is fired after that, even one polled in the same tick.
//! - Events are [`IdleStateEvent`](crate::IdleStateEvent) values fired with
//!   `fire_user_event` from this handler's context (receivers downcast the `UserEvent`).
//!
//! What counts as activity:
//! - Reads: `channel_read` starts a read burst (reader and all-idle count as busy while it
//!   lasts), `channel_read_complete` ends it and records the read time: the loop's I/O time
//!   (`LocalLoop::io_time`, read once after the poll for all the iteration's channels; Netty
//!   reads its ticker per channel), so a read's time is early by at most the I/O phase's
//!   length, and an idle event at most that much early.
//! - Writes: at the write's *completion* (the write promise's listener, success or failure,
//!   as Netty's `writeListener`), not when the write is issued, so a peer that stops reading
//!   makes the channel writer-idle. A write with a void promise gets a real promise for this
//!   (`ChannelPromise::unvoid`, as in Netty), whose failure is fired into exceptionCaught
//!   when the void one's would have been: always for `voidPromise()`; for a write made
//!   without a promise, only a handler's error during the write call (a later failure, such
//!   as the channel's reset failing every queued write, stays silent: one reset, one report).
//!   This costs one promise per write, only when writer or all-idle detection is enabled.
//! - `observe_output(true)` (Netty's `observeOutput`): each writer/all-idle check also looks
//!   at the channel's pending outbound bytes and flush progress, so a slow write still in
//!   progress does not make the channel writer-idle (after the first event, as Netty).
//! - `reset_read_timeout`/`reset_write_timeout` count as a read/write now (Netty's).

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use netloop_eventloop::{LocalLoop, ScheduledHandle};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelPromise, HandlerResult, LocalListenerExt, Message,
};

use crate::idle::{IdleConfig, IdleStateTracker, OutputState};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not initialized yet.
    Waiting,
    /// Tracking and timing.
    Running,
    /// Stopped for good (inactive or removed).
    Destroyed,
}

struct Shared {
    phase: Cell<Phase>,
    tracker: RefCell<Option<IdleStateTracker>>,
    timer: RefCell<Option<ScheduledHandle>>,
    event_loop: RefCell<Weak<LocalLoop>>,
}

impl Shared {
    fn running(&self) -> bool {
        self.phase.get() == Phase::Running
    }

    fn now(&self) -> Option<Duration> {
        self.event_loop.borrow().upgrade().map(|l| l.now())
    }

    fn track(&self, f: impl FnOnce(&mut IdleStateTracker, Duration)) {
        if !self.running() {
            return;
        }
        let Some(now) = self.now() else { return };
        if let Some(tracker) = self.tracker.borrow_mut().as_mut() {
            f(tracker, now);
        }
    }

    /// The end of a read burst: recorded at the loop's I/O time (`LocalLoop::io_time`: one
    /// clock read per iteration rather than one per channel; a read that JS fired again,
    /// outside the I/O phase, reads the clock).
    fn track_read_complete(&self) {
        if !self.running() {
            return;
        }
        let Some(now) = self.event_loop.borrow().upgrade().map(|l| l.io_time()) else {
            return;
        };
        if let Some(tracker) = self.tracker.borrow_mut().as_mut() {
            tracker.on_read_complete(now);
        }
    }

    /// Arms the one timer at the tracker's next deadline (none when every kind is off).
    fn arm(self: &Rc<Self>, ctx: &ChannelHandlerContext, event_loop: &LocalLoop) {
        let deadline = self
            .tracker
            .borrow()
            .as_ref()
            .and_then(IdleStateTracker::next_deadline);
        let Some(deadline) = deadline else { return };
        let delay = deadline.saturating_sub(event_loop.now());
        let weak = Rc::downgrade(self);
        let ctx = ctx.clone();
        let handle = event_loop.schedule_local(delay, move || {
            if let Some(shared) = weak.upgrade() {
                shared.on_timer(&ctx);
            }
        });
        if let Some(old) = self.timer.borrow_mut().replace(handle) {
            old.cancel();
        }
    }

    fn on_timer(self: &Rc<Self>, ctx: &ChannelHandlerContext) {
        self.timer.borrow_mut().take();
        if !self.running() {
            return;
        }
        let Some(event_loop) = self.event_loop.borrow().upgrade() else {
            return;
        };
        let now = event_loop.now();
        let output = ctx.try_channel().map(|ch| OutputState {
            pending: ch.pending_outbound_bytes(),
            progress: ch.outbound_progress(),
        });
        let events = self
            .tracker
            .borrow_mut()
            .as_mut()
            .map(|t| match output {
                Some(o) => t.poll_with_output(now, o),
                None => t.poll(now),
            })
            .unwrap_or_default();
        self.arm(ctx, &event_loop);
        for event in events {
            if !self.running() {
                break;
            }
            ctx.fire_user_event(event);
        }
    }

    fn initialize(self: &Rc<Self>, ctx: &ChannelHandlerContext, cfg: IdleConfig, observe: bool) {
        if self.phase.get() != Phase::Waiting {
            return;
        }
        let Some(event_loop) = ctx.try_channel().and_then(|ch| ch.event_loop().local()) else {
            return;
        };
        self.phase.set(Phase::Running);
        *self.event_loop.borrow_mut() = Rc::downgrade(&event_loop);
        let mut tracker = IdleStateTracker::new(cfg, event_loop.now());
        tracker.set_observe_output(observe);
        *self.tracker.borrow_mut() = Some(tracker);
        self.arm(ctx, &event_loop);
    }

    fn destroy(&self) {
        self.phase.set(Phase::Destroyed);
        if let Some(timer) = self.timer.borrow_mut().take() {
            timer.cancel();
        }
        self.tracker.borrow_mut().take();
    }
}

/// Fires an [`IdleStateEvent`](crate::IdleStateEvent) user event when a channel has not read,
/// written, or done either for a while.
pub struct IdleStateHandler {
    config: IdleConfig,
    observe_output: bool,
    tracks_writes: bool,
    shared: Rc<Shared>,
}

impl IdleStateHandler {
    /// A handler with the given periods (`None` or zero disables a kind; enabled periods
    /// are at least [`MIN_IDLE_TIMEOUT`](crate::MIN_IDLE_TIMEOUT)).
    pub fn new(config: IdleConfig) -> Self {
        let enabled = |p: Option<Duration>| p.is_some_and(|p| !p.is_zero());
        IdleStateHandler {
            config,
            observe_output: false,
            tracks_writes: enabled(config.writer) || enabled(config.all),
            shared: Rc::new(Shared {
                phase: Cell::new(Phase::Waiting),
                tracker: RefCell::new(None),
                timer: RefCell::new(None),
                event_loop: RefCell::new(Weak::new()),
            }),
        }
    }

    /// Netty's constructor: reader, writer and all-idle periods; zero disables a kind.
    pub fn with_periods(reader: Duration, writer: Duration, all: Duration) -> Self {
        Self::new(IdleConfig {
            reader: Some(reader),
            writer: Some(writer),
            all: Some(all),
        })
    }

    /// The configured periods.
    pub fn config(&self) -> IdleConfig {
        self.config
    }

    /// Netty's `observeOutput`: outbound progress (a slow write still in progress) counts
    /// against writer and all idleness. Off by default.
    pub fn observe_output(mut self, on: bool) -> Self {
        self.observe_output = on;
        self
    }

    /// Netty's `resetReadTimeout`: as if a read had just completed.
    pub fn reset_read_timeout(&self) {
        self.shared.track(|t, now| t.reset_read(now));
    }

    /// Netty's `resetWriteTimeout`: as if a write had just completed.
    pub fn reset_write_timeout(&self) {
        self.shared.track(|t, now| t.reset_write(now));
    }

    fn initialize(&self, ctx: &ChannelHandlerContext) {
        self.shared
            .initialize(ctx, self.config, self.observe_output);
    }
}

impl std::fmt::Debug for IdleStateHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdleStateHandler")
            .field("config", &self.config)
            .field("phase", &self.shared.phase.get())
            .finish()
    }
}

impl ChannelHandler for IdleStateHandler {
    fn handler_added(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if ctx
            .try_channel()
            .is_some_and(|ch| ch.is_active() && ch.is_registered())
        {
            self.initialize(ctx);
        }
        Ok(())
    }

    fn handler_removed(&self, _ctx: &ChannelHandlerContext) -> HandlerResult {
        self.shared.destroy();
        Ok(())
    }

    fn channel_registered(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if ctx.try_channel().is_some_and(|ch| ch.is_active()) {
            self.initialize(ctx);
        }
        ctx.fire_channel_registered();
        Ok(())
    }

    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.initialize(ctx);
        ctx.fire_channel_active();
        Ok(())
    }

    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.shared.destroy();
        ctx.fire_channel_inactive();
        Ok(())
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        // No clock read per read: the burst's end records the time (Netty's channelRead).
        if self.shared.running() {
            if let Some(tracker) = self.shared.tracker.borrow_mut().as_mut() {
                tracker.begin_read();
            }
        }
        ctx.fire_channel_read(msg);
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.shared.track_read_complete();
        ctx.fire_channel_read_complete();
        Ok(())
    }

    // Reads and flushes pass by (the default methods); writes too when no writer or
    // all-idle period watches them (a reader-idle handler in front of a codec).
    fn takes_read(&self) -> bool {
        false
    }

    fn takes_write(&self) -> bool {
        self.tracks_writes
    }

    fn takes_flush(&self) -> bool {
        false
    }

    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        if !self.tracks_writes || !self.shared.running() {
            ctx.write_with(msg, promise);
            return Ok(());
        }
        // A write made without a promise (the silent void one) stays silent when it fails
        // later (a reset channel fails every queued write), but a handler's error during
        // the write itself is still reported, as the void promise would have had it reported
        // (a promise that takes no failure sends it to exceptionCaught).
        let silent = promise.is_void() && !promise.is_firing();
        let promise = promise.unvoid(&ctx.pipeline());
        let writing = Rc::new(Cell::new(silent));
        if let Some(future) = promise.future() {
            let weak = Rc::downgrade(&self.shared);
            let (writing, pipeline) = (writing.clone(), ctx.pipeline());
            future.add_local_listener(move |r| {
                if let Some(shared) = weak.upgrade() {
                    shared.track(|t, now| t.on_write(now));
                }
                if let (Err(e), true) = (r, writing.get()) {
                    pipeline.fire_exception_caught(e.clone());
                }
            });
        }
        ctx.write_with(msg, promise);
        writing.set(false);
        Ok(())
    }
}
