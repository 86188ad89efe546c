//! Reads JS gives back: a codec's messages (RESP commands, HTTP requests) that reach JS in one
//! delivery, of which JS handles only those before the channel turned unwritable. The rest go
//! back to the codec (`netloop_transport::ReadPause`), which fires them again, in order, once
//! the channel is writable: what a client that does not read makes the server queue is then
//! bounded by the replies to what JS handled, not by the replies to a whole read batch.
//!
//! Ground rules (loop thread only):
//! - A stand-in whose previous handler is a pausing codec (`JsAdapter::holds`, reviewed on
//!   every pipeline change) keeps each such read's message with the batch (`Outbox::kept`,
//!   by its offset in the batch's bytes) and marks its record (`c` = [`HOLDABLE`]). The
//!   messages live until the delivery's calls return, then are dropped.
//! - JS gives a record back with [`Hub::hold_back`] (`NativeChannels::holdBack`) while its call runs; once it
//!   gave one back, it gives back every later one of that firing too
//!   ([`Hub::holds_firing`]), so the codec keeps the order.
//! - Nothing here applies JS's ops: the calls come from inside a delivery.

use netloop_http::HttpServerCodec;
use netloop_resp::RespDecoderHandler;
use netloop_transport::{ChannelHandler, ChannelHandlerContext, Message};

use crate::adapter::JsAdapter;
use crate::hub::Hub;

/// A read record's `c` when JS may give its message back.
pub const HOLDABLE: f64 = 1.0;

/// The kept messages of the batch being delivered, by offset in its bytes (ascending).
#[derive(Default)]
pub struct Kept(Vec<(usize, Option<Message>)>);

impl Kept {
    pub fn from_batch(kept: Vec<(usize, Message)>) -> Self {
        Kept(kept.into_iter().map(|(at, m)| (at, Some(m))).collect())
    }

    fn take(&mut self, at: usize) -> Option<Message> {
        let i = self.0.binary_search_by_key(&at, |(o, _)| *o).ok()?;
        self.0[i].1.take()
    }
}

/// The codec a JS stand-in's held reads go back to.
enum Holder {
    Resp(ChannelHandlerContext, std::rc::Rc<dyn ChannelHandler>),
    Http(ChannelHandlerContext, std::rc::Rc<dyn ChannelHandler>),
}

impl Holder {
    /// The pausing codec right in front of `ctx` (the stand-in's context), if any.
    fn before(ctx: &ChannelHandlerContext) -> Option<Holder> {
        let p = ctx.try_pipeline()?;
        let names = p.names();
        let i = names.iter().position(|n| n == ctx.name())?;
        let prev = p.context(&names[i.checked_sub(1)?])?;
        let h = prev.handler();
        let any = h.as_any()?;
        if any
            .downcast_ref::<RespDecoderHandler>()
            .is_some_and(|d| d.pauses(&prev))
        {
            Some(Holder::Resp(prev, h))
        } else if any.is::<HttpServerCodec>() {
            Some(Holder::Http(prev, h))
        } else {
            None
        }
    }

    fn resp(h: &std::rc::Rc<dyn ChannelHandler>) -> Option<&RespDecoderHandler> {
        h.as_any()?.downcast_ref()
    }

    fn http(h: &std::rc::Rc<dyn ChannelHandler>) -> Option<&HttpServerCodec> {
        h.as_any()?.downcast_ref()
    }

    fn hold_back(&self, msg: Message) {
        match self {
            Holder::Resp(c, h) => Self::resp(h).map(|d| d.hold_back(c, msg)),
            Holder::Http(c, h) => Self::http(h).map(|d| d.hold_back(c, msg)),
        };
    }

    fn holds_firing(&self) -> bool {
        match self {
            Holder::Resp(_, h) => Self::resp(h).is_some_and(RespDecoderHandler::holds_firing),
            Holder::Http(_, h) => Self::http(h).is_some_and(HttpServerCodec::holds_firing),
        }
    }
}

/// Sets `holds` on each stand-in of channel `id`: whether a pausing codec sits right in
/// front of it.
pub fn review_holds(hub: &Hub, id: f64) {
    let Some(ch) = hub.channel(id as u64) else {
        return;
    };
    let p = ch.pipeline();
    for name in p.names() {
        let Some(ctx) = p.context(&name) else {
            continue;
        };
        let h = ctx.handler();
        if let Some(js) = h.as_any().and_then(|a| a.downcast_ref::<JsAdapter>()) {
            js.holds.set(Holder::before(&ctx).is_some());
        }
    }
}

impl Hub {
    /// The native context of channel `id`'s JS context `ctx`.
    fn js_context(&self, id: f64, ctx: f64) -> Option<ChannelHandlerContext> {
        let map = self.channels.borrow();
        let e = map.get(&(id as u64))?;
        let found = e.ctxs.iter().find(|(c, _)| *c == ctx as u64);
        found.map(|(_, c)| c.clone())
    }
}

impl Hub {
    /// JS does not start the read at offset `at` of the batch it is handed (a record marked
    /// holdable) of channel `id`'s JS context `ctx`: its message goes back to the codec in
    /// front of that context. False if it cannot (JS then handles the read itself).
    pub fn hold_back(&self, id: f64, ctx: f64, at: f64) -> bool {
        let Some(holder) = self.js_context(id, ctx).and_then(|c| Holder::before(&c)) else {
            return false;
        };
        let Some(msg) = self.kept.borrow_mut().take(at as usize) else {
            return false;
        };
        holder.hold_back(msg);
        true
    }

    /// True once the codec in front of channel `id`'s JS context `ctx` took back a read of
    /// its latest firing: JS gives back the later reads of that firing too.
    pub fn holds_firing(&self, id: f64, ctx: f64) -> bool {
        self.js_context(id, ctx)
            .and_then(|c| Holder::before(&c))
            .is_some_and(|h| h.holds_firing())
    }
}
