//! Handler contexts: the nodes of a pipeline's doubly linked list, and the invocation of
//! handler methods (state check, panic capture, error routing).
//!
//! Ground rules: loop thread only (`Rc`, `!Send`). `next` links are strong (the pipeline owns
//! head → … → tail), `prev` links of live contexts are weak. A removed context keeps its
//! links, so an event already travelling through it goes on to the rest of the pipeline, as in
//! Netty: at removal its `prev` is *pinned* (held strongly) to its live predecessor of that
//! moment, exactly as its `next` already is. So an outbound operation that travels from a
//! removed context always continues from the nearest predecessor that was live when the
//! context was removed (passing through predecessors removed since, which pass it on), never
//! from the head, whatever the order of removals. Pinned links point only from removed
//! contexts towards live ones, so they form no cycle. No `RefCell` borrow is held while a
//! handler runs.

use std::borrow::Cow;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::{Rc, Weak};

use crate::channel::{Channel, ChannelInner};
use crate::error::{HandlerResult, TransportError};
use crate::handler::ChannelHandler;
use crate::handler_name::HandlerName;
use crate::message::{Message, UserEvent};
use crate::pipeline::{ChannelPipeline, PipelineInner};
use crate::promise::ChannelPromise;

mod outbound;

/// Where a handler is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HandlerState {
    /// Linked, `handler_added` not yet called (deferred until registration).
    AddPending,
    /// `handler_added` was called: the handler receives events.
    Added,
    /// `handler_removed` was called (or is due): the handler is skipped.
    Removed,
}

pub(crate) struct CtxInner {
    /// Borrowed for the pipeline's ends (`HEAD`, `TAIL`), inline when short (handler_name.rs):
    /// no allocation per channel for them.
    pub(crate) name: HandlerName,
    pub(crate) handler: Rc<dyn ChannelHandler>,
    // The links are `Cell`s, not `RefCell`s (read with `peek`, written with `set`): no
    // borrow flag each, 24 bytes less per context, four contexts or more per connection.
    pub(crate) next: Cell<Option<ChannelHandlerContext>>,
    pub(crate) prev: Cell<Weak<CtxInner>>,
    /// Set when the context is removed: its predecessor at that moment, held strongly.
    pinned_prev: Cell<Option<ChannelHandlerContext>>,
    pub(crate) state: Cell<HandlerState>,
    /// The outbound operations the handler only passes on (`SKIP_*` bits, from
    /// [`ChannelHandler::takes_read`] and its kin, asked when the context is linked): an
    /// operation travelling towards the head goes past such a context without calling it
    /// (Netty's execution mask). The ends skip nothing.
    pub(crate) skips: Cell<u8>,
    pub(crate) pipeline: Weak<PipelineInner>,
    /// The pipeline's channel (a copy of the pipeline's link): [`ChannelHandlerContext::try_channel`]
    /// upgrades one weak reference, not the pipeline's and then the channel's. Handlers ask
    /// for their channel several times an event (writability, activity, the head's reads
    /// and writes).
    channel: Weak<ChannelInner>,
}

/// [`CtxInner::skips`]: the handler's `read` is the default one.
pub(crate) const SKIP_READ: u8 = 1;
/// [`CtxInner::skips`]: the handler's `write` only passes the write on.
pub(crate) const SKIP_WRITE: u8 = 2;
/// [`CtxInner::skips`]: the handler's `flush` is the default one.
pub(crate) const SKIP_FLUSH: u8 = 4;

/// [`CtxInner::skips`]: not a skip, the handler's `write_and_flush` takes a write and its
/// flush in one call (`ChannelHandler::takes_write_and_flush`).
pub(crate) const FUSES_WRITE_FLUSH: u8 = 8;

/// The `SKIP_*` bits of `handler` (and [`FUSES_WRITE_FLUSH`]).
pub(crate) fn skips_of(handler: &dyn ChannelHandler) -> u8 {
    let bit = |takes: bool, skip: u8| if takes { 0 } else { skip };
    let fuses = if handler.takes_write_and_flush() {
        FUSES_WRITE_FLUSH
    } else {
        0
    };
    bit(handler.takes_read(), SKIP_READ)
        | bit(handler.takes_write(), SKIP_WRITE)
        | bit(handler.takes_flush(), SKIP_FLUSH)
        | fuses
}

/// A handler's view of its place in the pipeline. Cheap to clone; handlers may keep it (e.g.
/// to write later from a timer) as long as they use it on the loop thread.
#[derive(Clone)]
pub struct ChannelHandlerContext(pub(crate) Rc<CtxInner>);

impl std::fmt::Debug for ChannelHandlerContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ChannelHandlerContext({:?}, {:?})",
            self.0.name.as_str(),
            self.0.state.get()
        )
    }
}

/// A copy of a context link (`Option<context>`), leaving it in its cell: one reference count
/// more, no move out of the cell and back (the links are read on every hop of every event).
pub(crate) fn peek(cell: &Cell<Option<ChannelHandlerContext>>) -> Option<ChannelHandlerContext> {
    // SAFETY: a `Cell` is `!Sync`, so only this thread reaches it, and the shared reference
    // lives only while the `Rc` is cloned, which runs no code that could write the cell.
    unsafe { (*cell.as_ptr()).clone() }
}

/// The live context a `prev` link points to, if any.
fn upgrade(cell: &Cell<Weak<CtxInner>>) -> Option<ChannelHandlerContext> {
    // SAFETY: as in `peek`: the reference lives only while the `Weak` is upgraded, which runs
    // no code that could write the cell.
    unsafe { (*cell.as_ptr()).upgrade() }.map(ChannelHandlerContext)
}

/// Runs a handler method, turning a panic into an error.
fn guard(f: impl FnOnce() -> HandlerResult) -> HandlerResult {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(TransportError::from_panic(payload)),
    }
}

macro_rules! inbound {
    ($(#[$m:meta])* $fire:ident => $method:ident ( $($arg:ident : $ty:ty),* )) => {
        $(#[$m])*
        pub fn $fire(&self $(, $arg: $ty)*) {
            if let Some(next) = self.next() {
                next.invoke_self(|h, c| h.$method(c $(, $arg)*));
            }
        }
    };
}

impl ChannelHandlerContext {
    pub(crate) fn new(
        name: impl Into<Cow<'static, str>>,
        handler: Rc<dyn ChannelHandler>,
        pipeline: Weak<PipelineInner>,
        channel: Weak<ChannelInner>,
    ) -> Self {
        ChannelHandlerContext(Rc::new(CtxInner {
            name: HandlerName::from(name.into()),
            handler,
            next: Cell::new(None),
            prev: Cell::new(Weak::new()),
            pinned_prev: Cell::new(None),
            state: Cell::new(HandlerState::AddPending),
            skips: Cell::new(0),
            pipeline,
            channel,
        }))
    }

    /// The handler's name in the pipeline.
    pub fn name(&self) -> &str {
        self.0.name.as_str()
    }

    /// The handler of this context.
    pub fn handler(&self) -> Rc<dyn ChannelHandler> {
        self.0.handler.clone()
    }

    /// True once the handler was removed from the pipeline.
    pub fn is_removed(&self) -> bool {
        self.0.state.get() == HandlerState::Removed
    }

    /// The pipeline this context belongs to, while it exists.
    pub fn try_pipeline(&self) -> Option<ChannelPipeline> {
        self.0.pipeline.upgrade().map(ChannelPipeline)
    }

    /// The pipeline this context belongs to.
    ///
    /// # Panics
    /// If the channel and its pipeline were dropped (a context kept past its channel).
    pub fn pipeline(&self) -> ChannelPipeline {
        self.try_pipeline()
            .expect("netloop: context used after its channel was dropped")
    }

    /// The channel, while it exists.
    pub fn try_channel(&self) -> Option<Channel> {
        self.0.channel.upgrade().map(Channel::from_inner)
    }

    /// The channel.
    ///
    /// # Panics
    /// If the channel was dropped (a context kept past its channel).
    pub fn channel(&self) -> Channel {
        self.try_channel()
            .expect("netloop: context used after its channel was dropped")
    }

    pub(crate) fn next(&self) -> Option<ChannelHandlerContext> {
        peek(&self.0.next)
    }

    pub(crate) fn prev(&self) -> Option<ChannelHandlerContext> {
        if let Some(p) = peek(&self.0.pinned_prev) {
            return Some(p);
        }
        upgrade(&self.0.prev)
    }

    /// The nearest context before this one whose handler takes the operation `skip` names
    /// (the head takes every one). The contexts passed over would only have passed the
    /// operation on: the same handlers act on it, in the same order, as a walk through each.
    // Inlined: called for every outbound hop, the call's frame cost about as much as its body.
    #[inline(always)]
    fn prev_taking(&self, skip: u8) -> Option<ChannelHandlerContext> {
        let mut p = self.prev()?;
        while p.0.skips.get() & skip != 0 {
            p = p.prev()?;
        }
        Some(p)
    }

    /// The nearest context before this one whose handler takes at least one of the
    /// operations `skips` names (the head takes every one).
    #[inline(always)]
    fn prev_taking_either(&self, skips: u8) -> Option<ChannelHandlerContext> {
        let mut p = self.prev()?;
        while p.0.skips.get() & skips == skips {
            p = p.prev()?;
        }
        Some(p)
    }

    /// True once the context left the chain (its `prev` is pinned).
    pub(crate) fn is_unlinked(&self) -> bool {
        peek(&self.0.pinned_prev).is_some()
    }

    /// The context leaves the chain: keep its current predecessor alive as its `prev`.
    pub(crate) fn pin_prev(&self, prev: &ChannelHandlerContext) {
        self.0.pinned_prev.set(Some(prev.clone()));
    }

    pub(crate) fn ptr_eq(&self, other: &ChannelHandlerContext) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }

    /// Calls an inbound method of this context's handler, or skips it if it is not added.
    /// An error goes to the next handler's `exception_caught`.
    pub(crate) fn invoke_self(
        &self,
        f: impl FnOnce(&dyn ChannelHandler, &ChannelHandlerContext) -> HandlerResult,
    ) {
        if self.0.state.get() != HandlerState::Added {
            // Not (or no longer) part of the live pipeline: pass through by calling the
            // default behaviour, which is exactly `fire_*` on this context.
            let pass = PassThrough;
            let _ = f(&pass, self);
            return;
        }
        // The caller holds `self` (a strong reference), and a context's handler never changes:
        // no reference count for the call.
        if let Err(e) = guard(|| f(&*self.0.handler, self)) {
            self.fire_exception_caught(e);
        }
    }

    /// Calls an outbound method that carries a promise: an error fails the promise, or goes
    /// to `exception_caught` if the promise is void or already complete.
    fn invoke_with_promise(
        &self,
        promise: &ChannelPromise,
        f: impl FnOnce(&dyn ChannelHandler, &ChannelHandlerContext) -> HandlerResult,
    ) {
        if self.0.state.get() != HandlerState::Added {
            let _ = f(&PassThrough, self);
            return;
        }
        if let Err(e) = guard(|| f(&*self.0.handler, self)) {
            if !promise.try_failure(e.clone()) {
                self.fire_exception_caught(e);
            }
        }
    }

    pub(crate) fn call_handler_added(&self) -> HandlerResult {
        let handler = self.0.handler.clone();
        guard(|| handler.handler_added(self))
    }

    pub(crate) fn call_handler_removed(&self) -> HandlerResult {
        let handler = self.0.handler.clone();
        guard(|| handler.handler_removed(self))
    }

    // ---- inbound: pass the event to the next handler ----

    inbound!(
        #[doc = "Passes `channel_registered` to the next handler."]
        fire_channel_registered => channel_registered());
    inbound!(
        #[doc = "Passes `channel_unregistered` to the next handler."]
        fire_channel_unregistered => channel_unregistered());
    inbound!(
        #[doc = "Passes `channel_active` to the next handler."]
        fire_channel_active => channel_active());
    inbound!(
        #[doc = "Passes `channel_inactive` to the next handler."]
        fire_channel_inactive => channel_inactive());
    inbound!(
        #[doc = "Passes `channel_read_complete` to the next handler."]
        fire_channel_read_complete => channel_read_complete());
    inbound!(
        #[doc = "Passes `channel_writability_changed` to the next handler."]
        fire_channel_writability_changed => channel_writability_changed());
    inbound!(
        #[doc = "Passes a user event to the next handler."]
        fire_user_event_triggered => user_event_triggered(event: UserEvent));
    inbound!(
        #[doc = "Passes an error to the next handler's `exception_caught`."]
        fire_exception_caught => exception_caught(error: TransportError));

    /// Passes a read message to the next handler.
    pub fn fire_channel_read(&self, msg: impl Into<Message>) {
        let msg = msg.into();
        if let Some(next) = self.next() {
            next.invoke_self(|h, c| h.channel_read(c, msg));
        }
    }

    /// Passes a user event to the next handler (boxing it).
    pub fn fire_user_event<T: 'static>(&self, event: T) {
        self.fire_user_event_triggered(Box::new(event));
    }
}

/// The default behaviour of every method: used for contexts whose handler is not added.
struct PassThrough;
impl ChannelHandler for PassThrough {}
