//! `EmbeddedChannel`: a channel without a socket, on a loop driven by hand with a fake clock,
//! for deterministic pipeline, codec and idle tests (Netty's `EmbeddedChannel`).
//!
//! Ground rules: the test thread owns the attached loop and the channel. Written (flushed)
//! messages land in an outbound queue; messages, user events and exceptions that reach the
//! tail land in inbound queues. Time moves only through `advance_time`.

use std::any::Any;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use netloop_eventloop::{EventLoop, LocalLoop, LoopConfig, LoopDriver, ManualTicker, Readiness};

use crate::channel::{Channel, ChannelIo};
use crate::error::TransportError;
use crate::handler::ChannelHandler;
use crate::message::{Message, UserEvent};
use crate::options::ChannelOptions;
use crate::pipeline::Unhandled;
use crate::promise::ChannelPromise;

type Queue<T> = Rc<RefCell<VecDeque<T>>>;

struct EmbeddedIo {
    outbound: Queue<Message>,
}

impl ChannelIo for EmbeddedIo {
    fn is_active(&self) -> bool {
        true
    }
    fn local_addr(&self) -> Option<SocketAddr> {
        None
    }
    fn remote_addr(&self) -> Option<SocketAddr> {
        None
    }
    fn do_register(&self, _: &Channel) -> Result<(), TransportError> {
        Ok(())
    }
    fn do_deregister(&self, _: &Channel) {}
    fn do_bind(&self, _: &Channel, _: SocketAddr) -> Result<(), TransportError> {
        Ok(())
    }
    fn do_connect(
        &self,
        _: &Channel,
        _: SocketAddr,
        _: Option<SocketAddr>,
        promise: ChannelPromise,
    ) {
        promise.try_success();
    }
    fn do_begin_read(&self, _: &Channel) {}
    fn do_write(&self, ch: &Channel) {
        loop {
            let next = ch.0.outbound.borrow_mut().remove_front();
            let Some((msg, promise, change)) = next else {
                break;
            };
            self.outbound.borrow_mut().push_back(msg);
            promise.try_success();
            ch.fire_writability(change);
        }
    }
    fn do_close(&self, _: &Channel) {}
    fn filter_outbound(&self, msg: Message) -> Result<Message, TransportError> {
        Ok(msg)
    }
    fn ready(&self, _: &Channel, _: Readiness) {}
    fn reregister(
        &self,
        _: &mio::Registry,
        _: &mio::Registry,
        _: mio::Token,
    ) -> std::io::Result<()> {
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A hand-driven channel for tests.
pub struct EmbeddedChannel {
    channel: Channel,
    driver: LoopDriver,
    ticker: Arc<ManualTicker>,
    outbound: Queue<Message>,
    inbound: Queue<Message>,
    events: Queue<UserEvent>,
    exceptions: Queue<TransportError>,
}

impl EmbeddedChannel {
    /// A registered, active channel with `handlers` added in order.
    pub fn new(handlers: Vec<(&str, Rc<dyn ChannelHandler>)>) -> Self {
        let ch = Self::unregistered(ChannelOptions::default());
        for (name, h) in handlers {
            ch.channel
                .pipeline()
                .add_last(name, h)
                .expect("handler names must be unique");
        }
        ch.register();
        ch
    }

    /// A channel not yet registered (lifecycle callbacks stay queued until `register`).
    pub fn unregistered(options: ChannelOptions) -> Self {
        let ticker = ManualTicker::new();
        let config = LoopConfig {
            name: "embedded".into(),
            ticker: ticker.clone(),
            ..LoopConfig::default()
        };
        let (_, driver) = EventLoop::attached(config).expect("creating an attached loop");
        let outbound: Queue<Message> = Rc::default();
        let local: Rc<LocalLoop> = driver.local().clone();
        let channel = Channel::create(
            &local,
            Arc::new(options),
            None,
            Box::new(EmbeddedIo {
                outbound: outbound.clone(),
            }),
        );
        let inbound: Queue<Message> = Rc::default();
        let events: Queue<UserEvent> = Rc::default();
        let exceptions: Queue<TransportError> = Rc::default();
        let (i, e, x) = (inbound.clone(), events.clone(), exceptions.clone());
        channel.pipeline().set_unhandled_sink(move |u| match u {
            Unhandled::Message(m) => i.borrow_mut().push_back(m),
            Unhandled::UserEvent(ev) => e.borrow_mut().push_back(ev),
            Unhandled::Exception(err) => x.borrow_mut().push_back(err),
            _ => {}
        });
        EmbeddedChannel {
            channel,
            driver,
            ticker,
            outbound,
            inbound,
            events,
            exceptions,
        }
    }

    /// Registers the channel and runs the resulting tasks.
    pub fn register(&self) {
        let f = self.channel.register();
        self.run_pending_tasks();
        if let Some(Err(e)) = f.result() {
            panic!("embedded channel registration failed: {e}");
        }
    }

    /// The embedded channel.
    pub fn channel(&self) -> &Channel {
        &self.channel
    }

    /// The channel's pipeline.
    pub fn pipeline(&self) -> crate::pipeline::ChannelPipeline {
        self.channel.pipeline()
    }

    /// The loop's driver (to run iterations by hand).
    pub fn driver(&self) -> &LoopDriver {
        &self.driver
    }

    /// Fires `channel_read` then `channel_read_complete`; true if something reached the tail.
    pub fn write_inbound(&self, msg: impl Into<Message>) -> bool {
        self.channel.pipeline().fire_channel_read(msg);
        self.channel.pipeline().fire_channel_read_complete();
        self.run_pending_tasks();
        !self.inbound.borrow().is_empty()
    }

    /// Writes and flushes through the pipeline; true if something reached the outbound queue.
    pub fn write_outbound(&self, msg: impl Into<Message>) -> bool {
        self.channel.write_and_flush(msg);
        self.run_pending_tasks();
        !self.outbound.borrow().is_empty()
    }

    /// The next message that reached the tail.
    pub fn read_inbound(&self) -> Option<Message> {
        self.inbound.borrow_mut().pop_front()
    }

    /// The next message written and flushed to the (absent) socket.
    pub fn read_outbound(&self) -> Option<Message> {
        self.outbound.borrow_mut().pop_front()
    }

    /// The next user event that reached the tail.
    pub fn read_user_event(&self) -> Option<UserEvent> {
        self.events.borrow_mut().pop_front()
    }

    /// Messages that reached the tail and wait in the inbound queue.
    pub fn inbound_len(&self) -> usize {
        self.inbound.borrow().len()
    }

    /// Messages that reached the head and wait in the outbound queue.
    pub fn outbound_len(&self) -> usize {
        self.outbound.borrow().len()
    }

    /// Fails with the first exception that reached the tail since the last check.
    ///
    /// # Errors
    /// That exception.
    pub fn check_exception(&self) -> Result<(), TransportError> {
        match self.exceptions.borrow_mut().pop_front() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Runs every task that is due now (timers included).
    pub fn run_pending_tasks(&self) {
        self.driver.run_until_idle();
    }

    /// Moves the fake clock forward and runs what became due.
    pub fn advance_time(&self, d: Duration) {
        self.ticker.advance(d);
        self.run_pending_tasks();
    }

    /// The loop's current (fake) time.
    pub fn now(&self) -> Duration {
        netloop_eventloop::Ticker::now(&*self.ticker)
    }

    /// Closes the channel and runs the close events.
    pub fn close(&self) {
        self.channel.close();
        self.run_pending_tasks();
    }

    /// Closes the channel; true if unread inbound or outbound messages remain.
    ///
    /// # Errors
    /// The first exception that reached the tail.
    pub fn finish(self) -> Result<bool, TransportError> {
        self.close();
        self.check_exception()?;
        Ok(!self.inbound.borrow().is_empty() || !self.outbound.borrow().is_empty())
    }
}

impl std::fmt::Debug for EmbeddedChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedChannel")
            .field("channel", &self.channel().id())
            .finish_non_exhaustive()
    }
}

/// A test handler that counts the `read` requests passing it on their way to the head (put
/// it before a decoder to see whether the decoder asks for more input).
#[derive(Debug, Default)]
pub struct ReadCounter(std::cell::Cell<usize>);

impl ReadCounter {
    /// The `read` requests seen so far.
    pub fn reads(&self) -> usize {
        self.0.get()
    }
}

impl ChannelHandler for ReadCounter {
    fn read(&self, ctx: &crate::context::ChannelHandlerContext) -> crate::error::HandlerResult {
        self.0.set(self.0.get() + 1);
        ctx.read();
        Ok(())
    }
}
