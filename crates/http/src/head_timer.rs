//! [`HeadTimer`]: a request timeout of one connection, armed on the channel's event loop: the
//! head's (node:http's `headersTimeout`, the slowloris defence) and the whole request's
//! (node:http's `requestTimeout`), one `HeadTimer` each.
//!
//! Ground rules:
//! - Loop thread only; the timer task runs on the channel's loop and reaches the codec
//!   through its context (`ctx.handler()`), so it holds no reference to the codec itself.
//! - The timer is armed for one request (its id): when that head is decoded in time, the
//!   codec cancels it; a task that still runs for a request no longer awaited does nothing.
//! - Cancelled when the channel goes inactive, the handler is removed, or the codec stops
//!   reading requests (a closing response, a refusal, the end of input).

use std::cell::RefCell;
use std::time::Duration;

use netloop_eventloop::ScheduledHandle;
use netloop_transport::ChannelHandlerContext;

use crate::handler::HttpServerCodec;

/// The codec's reaction to a timer that ran out for request `id`.
pub(crate) type OnTimeout = fn(&HttpServerCodec, &ChannelHandlerContext, u64);

/// The armed timer of one codec: the request it waits for and the loop's handle.
#[derive(Debug)]
pub(crate) struct HeadTimer {
    timeout: Option<Duration>,
    /// What the codec does when the timer runs out for a request.
    on_timeout: OnTimeout,
    armed: RefCell<Option<(u64, ScheduledHandle)>>,
}

impl HeadTimer {
    pub(crate) fn new(timeout: Option<Duration>, on_timeout: OnTimeout) -> Self {
        HeadTimer {
            timeout,
            on_timeout,
            armed: RefCell::new(None),
        }
    }

    /// Starts the clock for request `id`'s head, unless it runs for that request already.
    /// Without a timeout, or off the channel's loop thread, it does nothing.
    pub(crate) fn arm(&self, ctx: &ChannelHandlerContext, id: u64) {
        let Some(timeout) = self.timeout else { return };
        if matches!(&*self.armed.borrow(), Some((armed, _)) if *armed == id) {
            return;
        }
        self.cancel();
        let Some(event_loop) = ctx.try_channel().and_then(|ch| ch.event_loop().local()) else {
            return;
        };
        let c = ctx.clone();
        let on_timeout = self.on_timeout;
        let handle = event_loop.schedule_local(timeout, move || {
            if c.is_removed() {
                return;
            }
            let handler = c.handler();
            let codec = handler
                .as_any()
                .and_then(|a| a.downcast_ref::<HttpServerCodec>());
            if let Some(codec) = codec {
                on_timeout(codec, &c, id);
            }
        });
        *self.armed.borrow_mut() = Some((id, handle));
    }

    /// True when the clock is not running.
    pub(crate) fn is_idle(&self) -> bool {
        self.armed.borrow().is_none()
    }

    /// Stops the clock (nothing happens if it was not running).
    pub(crate) fn cancel(&self) {
        if let Some((_, handle)) = self.armed.borrow_mut().take() {
            handle.cancel();
        }
    }

    /// The timer fired for request `id`: forget it (it is no longer armed).
    pub(crate) fn fired(&self, id: u64) {
        let mut armed = self.armed.borrow_mut();
        if matches!(&*armed, Some((a, _)) if *a == id) {
            *armed = None;
        }
    }

    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
}
