//! The pipeline: head and tail contexts around the user's handlers (added, removed and replaced
//! by name at any time: `structure`), the events and operations that enter it, and the tail's
//! reporting of unhandled events.
//!
//! Ground rules: loop thread only. `handler_added`/`handler_removed` run exactly once each, in
//! order; before the channel's first registration they are queued and run at registration.
//! The head turns outbound operations into channel operations; the tail reports what nobody
//! handled (messages, user events, exceptions) to the pipeline's [`Unhandled`] sink.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::rc::{Rc, Weak};

mod ends;
mod lookup;
mod structure;

use crate::channel::{Channel, ChannelInner};
use crate::context::{ChannelHandlerContext, HandlerState};
use crate::error::TransportError;
use crate::handler::ChannelHandler;
use crate::message::{Message, UserEvent};
use crate::promise::{ChannelFuture, ChannelPromise};

/// Something that reached the tail of the pipeline without being handled.
#[derive(Debug)]
#[non_exhaustive]
pub enum Unhandled {
    /// A message no handler consumed.
    Message(Message),
    /// A user event no handler consumed.
    UserEvent(UserEvent),
    /// An error no handler handled.
    Exception(TransportError),
    /// `channel_active` reached the tail (Netty's `onUnhandledInboundChannelActive`).
    Active,
    /// `channel_inactive` reached the tail.
    Inactive,
    /// `channel_read_complete` reached the tail.
    ReadComplete,
    /// `channel_writability_changed` reached the tail.
    WritabilityChanged,
}

/// Receives what reaches the tail. The default drops messages and events and logs exceptions.
pub type UnhandledSink = Rc<dyn Fn(Unhandled)>;

/// Anything that can become a pipeline handler: a handler value, or a shared `Rc` of one.
pub trait IntoHandler {
    /// The handler as a shared trait object.
    fn into_handler(self) -> Rc<dyn ChannelHandler>;

    /// The handler's type name, for generated handler names (Netty's simple class name).
    fn handler_type_name(&self) -> &'static str {
        "ChannelHandler"
    }
}
impl<H: ChannelHandler> IntoHandler for H {
    fn into_handler(self) -> Rc<dyn ChannelHandler> {
        Rc::new(self)
    }
    fn handler_type_name(&self) -> &'static str {
        std::any::type_name::<H>()
    }
}
impl<H: ChannelHandler> IntoHandler for Rc<H> {
    fn into_handler(self) -> Rc<dyn ChannelHandler> {
        self
    }
    fn handler_type_name(&self) -> &'static str {
        std::any::type_name::<H>()
    }
}

pub(super) enum Pending {
    Added(ChannelHandlerContext),
    Removed(ChannelHandlerContext),
}

pub(crate) struct PipelineInner {
    head: ChannelHandlerContext,
    tail: ChannelHandlerContext,
    channel: Weak<ChannelInner>,
    registered: Cell<bool>,
    pending: RefCell<VecDeque<Pending>>,
    sink: RefCell<Option<UnhandledSink>>,
    /// The sink takes every kind of [`Unhandled`], not only exceptions: the tail calls it for
    /// each read, read-complete and writability event no handler took.
    sink_takes_all: Cell<bool>,
    /// No linked handler takes `read` ([`ChannelHandler::takes_read`]): a read from the tail
    /// goes to the head directly. Reviewed whenever a context is linked or unlinked.
    reads_to_head: Cell<bool>,
    /// The owner removes the handlers itself (see [`ChannelPipeline::defer_destroy`]).
    destroy_deferred: Cell<bool>,
}

/// A channel's ordered chain of handlers.
#[derive(Clone)]
pub struct ChannelPipeline(pub(crate) Rc<PipelineInner>);

pub(crate) enum Position<'a> {
    First,
    Last,
    Before(&'a str),
    After(&'a str),
}

impl ChannelPipeline {
    pub(crate) fn new(channel: Weak<ChannelInner>) -> Self {
        ChannelPipeline(Rc::new_cyclic(|weak: &Weak<PipelineInner>| {
            let (head_handler, tail_handler) = ends::handlers();
            let head =
                ChannelHandlerContext::new("HEAD", head_handler, weak.clone(), channel.clone());
            let tail =
                ChannelHandlerContext::new("TAIL", tail_handler, weak.clone(), channel.clone());
            head.0.state.set(HandlerState::Added);
            tail.0.state.set(HandlerState::Added);
            head.0.next.set(Some(tail.clone()));
            tail.0.prev.set(Rc::downgrade(&head.0));
            PipelineInner {
                head,
                tail,
                channel,
                registered: Cell::new(false),
                pending: RefCell::new(VecDeque::new()),
                sink: RefCell::new(None),
                sink_takes_all: Cell::new(false),
                reads_to_head: Cell::new(true),
                destroy_deferred: Cell::new(false),
            }
        }))
    }

    /// The channel, while it exists.
    pub fn try_channel(&self) -> Option<Channel> {
        self.0.channel.upgrade().map(Channel::from_inner)
    }

    /// # Panics
    /// If the channel was dropped.
    pub fn channel(&self) -> Channel {
        self.try_channel()
            .expect("netloop: pipeline used after its channel was dropped")
    }

    /// The handlers stay after the closed channel is unregistered, until the owner calls
    /// [`ChannelPipeline::destroy`]. For a binding whose handlers pass events on after the
    /// native part of the pipeline returned (JS handlers across a call boundary): Netty removes
    /// the handlers once `channel_unregistered` went through all of them.
    pub fn defer_destroy(&self) {
        self.0.destroy_deferred.set(true);
    }

    /// The closed channel was unregistered and its events went through: its handlers are
    /// removed now, unless the owner deferred that (see [`ChannelPipeline::defer_destroy`]).
    pub(crate) fn destroy_if_not_deferred(&self) {
        if !self.0.destroy_deferred.get() {
            self.destroy();
        }
    }

    /// Replaces what receives unhandled messages, events and exceptions at the tail.
    pub fn set_unhandled_sink(&self, sink: impl Fn(Unhandled) + 'static) {
        *self.0.sink.borrow_mut() = Some(Rc::new(sink));
        self.0.sink_takes_all.set(true);
    }

    /// Replaces what receives the exceptions that reach the tail unhandled; the other
    /// unhandled messages and events are dropped there, as without a sink, and cost no call
    /// (a binding that only reports exceptions sees every read-complete reach the tail).
    pub fn set_unhandled_exception_sink(&self, sink: impl Fn(TransportError) + 'static) {
        *self.0.sink.borrow_mut() = Some(Rc::new(move |what| {
            if let Unhandled::Exception(e) = what {
                sink(e);
            }
        }));
        self.0.sink_takes_all.set(false);
    }

    pub(crate) fn report_unhandled(&self, what: Unhandled) {
        if !self.0.sink_takes_all.get() && !matches!(what, Unhandled::Exception(_)) {
            return;
        }
        let sink = self.0.sink.borrow().clone();
        match sink {
            Some(s) => s(what),
            None => {
                if let Unhandled::Exception(e) = what {
                    let id = self
                        .try_channel()
                        .map(|c| c.id().to_string())
                        .unwrap_or_default();
                    netloop_eventloop::log::warn(&format!(
                        "netloop: an exception reached the tail of the pipeline of channel {id} \
                         (add an exception_caught handler): {}: {e}",
                        e.code()
                    ));
                }
            }
        }
    }

    // ---- inbound events, from the head ----

    /// Fires `channel_registered` from the head.
    pub fn fire_channel_registered(&self) {
        self.0.head.invoke_self(|h, c| h.channel_registered(c));
    }
    /// Fires `channel_unregistered` from the head.
    pub fn fire_channel_unregistered(&self) {
        self.0.head.invoke_self(|h, c| h.channel_unregistered(c));
    }
    /// Fires `channel_active` from the head.
    pub fn fire_channel_active(&self) {
        self.0.head.invoke_self(|h, c| h.channel_active(c));
    }
    /// Fires `channel_inactive` from the head.
    pub fn fire_channel_inactive(&self) {
        self.0.head.invoke_self(|h, c| h.channel_inactive(c));
    }
    /// Fires `channel_read` from the head.
    pub fn fire_channel_read(&self, msg: impl Into<Message>) {
        let msg = msg.into();
        self.0.head.invoke_self(|h, c| h.channel_read(c, msg));
    }
    /// Fires `channel_read_complete` from the head.
    pub fn fire_channel_read_complete(&self) {
        self.0.head.invoke_self(|h, c| h.channel_read_complete(c));
    }
    /// Fires a user event from the head.
    pub fn fire_user_event_triggered(&self, event: UserEvent) {
        self.0
            .head
            .invoke_self(|h, c| h.user_event_triggered(c, event));
    }
    /// Fires a user event (boxing it) from the head.
    pub fn fire_user_event<T: 'static>(&self, event: T) {
        self.fire_user_event_triggered(Box::new(event));
    }
    /// Fires `channel_writability_changed` from the head.
    pub fn fire_channel_writability_changed(&self) {
        self.0
            .head
            .invoke_self(|h, c| h.channel_writability_changed(c));
    }
    /// Fires `exception_caught` from the head.
    pub fn fire_exception_caught(&self, error: TransportError) {
        self.0.head.invoke_self(|h, c| h.exception_caught(c, error));
    }

    // ---- outbound operations, from the tail ----

    /// Binds from the tail, completing `promise`.
    pub fn bind_with(&self, local: SocketAddr, promise: ChannelPromise) {
        self.0.tail.bind_with(local, promise);
    }
    /// Connects from the tail, completing `promise`.
    pub fn connect_with(
        &self,
        remote: SocketAddr,
        local: Option<SocketAddr>,
        promise: ChannelPromise,
    ) {
        self.0.tail.connect_with(remote, local, promise);
    }
    /// Disconnects from the tail, completing `promise`.
    pub fn disconnect_with(&self, promise: ChannelPromise) {
        self.0.tail.disconnect_with(promise);
    }
    /// Closes from the tail, completing `promise`.
    pub fn close_with(&self, promise: ChannelPromise) {
        self.0.tail.close_with(promise);
    }
    /// Deregisters from the tail, completing `promise`.
    pub fn deregister_with(&self, promise: ChannelPromise) {
        self.0.tail.deregister_with(promise);
    }
    /// Half-closes the output from the tail, completing `promise`.
    pub fn shutdown_output_with(&self, promise: ChannelPromise) {
        self.0.tail.shutdown_output_with(promise);
    }
    /// Writes from the tail, completing `promise`.
    pub fn write_with(&self, msg: impl Into<Message>, promise: ChannelPromise) {
        self.0.tail.write_with(msg, promise);
    }
    /// Writes from the tail and flushes, completing `promise` (see
    /// [`ChannelHandlerContext::write_and_flush_with`]).
    pub fn write_and_flush_with(&self, msg: impl Into<Message>, promise: ChannelPromise) {
        self.0.tail.write_and_flush_with(msg, promise);
    }
    /// Writes `data` from the tail and flushes, straight to the socket when nothing stands
    /// between (see [`ChannelHandlerContext::write_and_flush_now`]).
    pub fn write_and_flush_now(
        &self,
        data: &[u8],
        promise: ChannelPromise,
    ) -> crate::channel::WrittenNow {
        self.0.tail.write_and_flush_now(data, promise)
    }
    /// Asks for a read from the tail (at the head at once when no handler takes `read`).
    pub fn read(&self) {
        if self.0.reads_to_head.get() {
            // What the head's `read` does, without its context's call.
            if let Some(ch) = self.try_channel() {
                ch.core_begin_read();
            }
        } else {
            self.0.tail.read();
        }
    }
    /// Flushes from the tail.
    pub fn flush(&self) {
        self.0.tail.flush();
    }
    /// Writes from the tail without flushing.
    pub fn write(&self, msg: impl Into<Message>) {
        self.0.tail.write(msg);
    }
    /// Writes from the tail and flushes.
    pub fn write_and_flush(&self, msg: impl Into<Message>) {
        self.0.tail.write_and_flush(msg);
    }
    /// Writes from the tail; the future completes with the write.
    pub fn write_future(&self, msg: impl Into<Message>) -> ChannelFuture {
        self.0.tail.write_future(msg)
    }
    /// Closes from the tail.
    pub fn close(&self) -> ChannelFuture {
        self.0.tail.close()
    }
    /// Connects from the tail.
    pub fn connect(&self, remote: SocketAddr) -> ChannelFuture {
        self.0.tail.connect(remote)
    }
    /// Binds from the tail.
    pub fn bind(&self, local: SocketAddr) -> ChannelFuture {
        self.0.tail.bind(local)
    }
    /// Deregisters from the tail.
    pub fn deregister(&self) -> ChannelFuture {
        self.0.tail.deregister()
    }
}

impl std::fmt::Debug for ChannelPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelPipeline")
            .field("handlers", &self.names())
            .finish()
    }
}
