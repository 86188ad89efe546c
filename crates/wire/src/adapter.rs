//! The native stand-in of a JS handler: a `ChannelHandler` that turns every event and
//! operation reaching it into a record for its JS context. What the JS handler passes on
//! comes back as an op applied at this context, so the native pipeline continues from here.
//!
//! Adjacent JS handlers talk to each other in JS; an event crosses only where a native
//! handler (or the head) sits next to a JS one.
//!
//! A JS handler without any inbound (outbound) method is passed by natively in that
//! direction, as JS skips it: a write made behind it reaches the native handlers in front of
//! it and the outbound buffer in the same go, instead of a round trip through JS. Two rules
//! keep the order a pipeline run in one go would have:
//! - only a whole direction is skipped (skipping a flush but not the write before it would let
//!   the flush overtake the write);
//! - nothing is skipped while records of the channel wait for JS: the peer's EOF closes the
//!   channel through the pipeline, and that close must reach the head after the writes JS
//!   makes for the reads before it (the close then goes through JS, as every operation did
//!   before).
//!
//! A `read()` request is the exception to the second rule: it passes a JS handler without
//! outbound methods natively even while records wait for JS. It changes no data and no order
//! of writes, flushes or closes (each keeps its place among them); holding it back only made
//! every autoRead message cost a record to JS and an op back.
//!
//! `channelReadComplete` passes natively, without a record, while the channel's pipeline has
//! no JS handler with the method and no native handler behind a JS one (nothing in JS could
//! act on it, and nothing native behind could see it before the reads JS still has to pass
//! on). handlers.rs decides that after every pipeline change; when a change ends it while JS
//! has not finished with the reads of an event passed natively (a handler with the method
//! added during a `channelRead`), the event goes to JS after all, at the first JS handler, so
//! the new handler does not miss the end of that batch.

use crate::protocol::{RecordValue as _, WireKind};
use std::any::{Any, TypeId};
use std::cell::Cell;
use std::rc::{Rc, Weak};

use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelPromise, HandlerResult, Message, TransportError,
    UserEvent,
};

use crate::hub::Hub;
use crate::protocol::HandlerTakes;
use crate::record;
use crate::token::JsValue;

/// Reads of at least this many bytes reach JS as Buffers of their own (external, owning the
/// read's `Bytes`) instead of being copied into the delivery's byte arena.
const SEGMENT_BYTES: usize = 16 * 1024;

pub struct JsAdapter {
    pub hub: Weak<Hub>,
    pub channel: f64,
    pub ctx: f64,
    pub takes: Takes,
    /// A pausing codec sits right in front: its reads' messages are kept for JS to give
    /// back (`held.rs`).
    pub holds: Cell<bool>,
    /// What the channel's stand-ins share.
    pub mark: Rc<Marks>,
}

/// What the stand-ins of one channel share (loop thread only).
pub struct Marks {
    /// The outbox epoch in which a stand-in of this channel last pushed a record.
    pub epoch: Cell<u64>,
    /// `channelReadComplete` passes natively (see the module docs).
    pub read_complete_unused: Cell<bool>,
    /// The outbox epoch of the last `channelReadComplete` passed natively.
    pub read_complete_skipped: Cell<u64>,
}

impl Default for Marks {
    fn default() -> Self {
        Marks {
            epoch: Cell::new(u64::MAX),
            read_complete_unused: Cell::new(false),
            read_complete_skipped: Cell::new(u64::MAX),
        }
    }
}

/// Which directions the JS handler has methods for.
#[derive(Clone, Copy)]
pub struct Takes {
    pub inbound: bool,
    pub outbound: bool,
    /// The handler has `channelReadComplete`.
    pub read_complete: bool,
    /// The handler keeps no read past its call (`autoRelease`): its reads' Buffers are
    /// detached when the delivery's call returns.
    pub auto_release: bool,
}

impl Takes {
    /// From JS's [`HandlerTakes`] bits.
    pub fn from_bits(bits: u32) -> Self {
        Takes {
            inbound: bits & HandlerTakes::Inbound as u32 != 0,
            outbound: bits & HandlerTakes::Outbound as u32 != 0,
            read_complete: bits & HandlerTakes::ReadComplete as u32 != 0,
            auto_release: bits & HandlerTakes::AutoRelease as u32 != 0,
        }
    }
}

impl JsAdapter {
    fn push(&self, kind: u32, a: f64, b: f64, c: f64) {
        if let Some(hub) = self.hub.upgrade() {
            let mut out = hub.outbox();
            self.mark.epoch.set(out.epoch);
            out.push(kind, self.channel, self.ctx, a, b, c);
        }
    }

    /// True if the JS handler has no method for this direction and no record of the channel
    /// waits for JS: the event or operation goes on natively.
    fn skips(&self, takes: bool) -> bool {
        !takes
            && self
                .hub
                .upgrade()
                .is_none_or(|h| h.outbox.borrow().epoch != self.mark.epoch.get())
    }

    /// A read (`promise` is `None`) or a write for the JS handler: bytes and JS values become
    /// a record (the write's promise lent to JS), a native value goes on untouched.
    fn push_message(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: Option<ChannelPromise>,
    ) -> HandlerResult {
        let Some(hub) = self.hub.upgrade() else {
            return Ok(());
        };
        let read = promise.is_none();
        let mut holdable = 0.0;
        // (`&**v`: the value in the box; the box itself is an `Any` of another type.)
        let kind_read = match &msg {
            Message::User(v) if read => read_kind(&**v),
            _ => ReadKind::Other,
        };
        let (kind, a, b) = match msg {
            Message::Bytes(bytes) if read && bytes.len() >= SEGMENT_BYTES => {
                // A large read reaches JS as a Buffer of its own, without a copy.
                hub.count_bytes_out_to_js(bytes.len());
                let len = bytes.len() as f64;
                let seg = hub.outbox().put_segment(bytes, self.takes.auto_release);
                self.push(WireKind::ReadBytes as u32, 0.0, len, seg);
                return Ok(());
            }
            Message::Bytes(bytes) => {
                let off = hub
                    .outbox()
                    .put_bytes_of(&bytes, read && self.takes.auto_release);
                hub.count_bytes_out_to_js(bytes.len());
                let kind = if read {
                    WireKind::ReadBytes as u32
                } else {
                    WireKind::WriteBytes as u32
                };
                (kind, off, bytes.len() as f64)
            }
            Message::User(v) if kind_read == ReadKind::Resp => {
                // A run of commands is one record whose bytes hold their tag forms back to
                // back (JS walks them; held.rs splits a run JS gives back in part).
                let mut out = hub.outbox();
                let off = out.bytes.len();
                if let Some(run) = v.downcast_ref::<netloop_resp::RespCommands>() {
                    crate::resp_wire::put_commands(&mut out.bytes, run);
                } else if let Some(command) = v.downcast_ref::<netloop_resp::RespCommand>() {
                    crate::resp_wire::put_command(&mut out.bytes, command);
                } else if let Some(value) = v.downcast_ref::<netloop_resp::RespValue>() {
                    crate::resp_wire::put(&mut out.bytes, value);
                }
                let len = out.bytes.len() - off;
                if self.holds.get() {
                    out.kept.push((off, Message::User(v)));
                    holdable = crate::held::HOLDABLE;
                }
                (WireKind::ReadResp as u32, off as f64, len as f64)
            }
            Message::User(v) if kind_read == ReadKind::Http => {
                let mut out = hub.outbox();
                let off = out.bytes.len();
                if let Some(req) = v.downcast_ref::<netloop_http::HttpRequest>() {
                    crate::http_wire::put_request(&mut out.bytes, req);
                } else if let Some(content) = v.downcast_ref::<netloop_http::HttpContent>() {
                    crate::http_wire::put_content(&mut out.bytes, content);
                } else if let Some(res) = v.downcast_ref::<netloop_http::HttpClientResponse>() {
                    crate::http_client_wire::put_response(&mut out.bytes, res);
                }
                let len = out.bytes.len() - off;
                if self.holds.get() {
                    out.kept.push((off, Message::User(v)));
                    holdable = crate::held::HOLDABLE;
                } else {
                    crate::held::drop_read(Message::User(v));
                }
                (WireKind::ReadHttp as u32, off as f64, len as f64)
            }
            Message::User(v) if kind_read == ReadKind::Ws => {
                let mut out = hub.outbox();
                let off = out.bytes.len();
                if let Some(frame) = v.downcast_ref::<netloop_ws::WebSocketFrame>() {
                    crate::ws_wire::put(&mut out.bytes, frame);
                }
                let len = out.bytes.len() - off;
                (WireKind::ReadWs as u32, off as f64, len as f64)
            }
            other => match other.downcast::<JsValue>() {
                Ok(v) => {
                    let kind = if read {
                        WireKind::ReadValue as u32
                    } else {
                        WireKind::WriteValue as u32
                    };
                    (kind, v.take(), 0.0)
                }
                Err(other) => {
                    // A native value a JS handler cannot see: pass it on untouched.
                    drop(hub);
                    match promise {
                        None => ctx.fire_channel_read(other),
                        Some(p) => ctx.write_with(other, p),
                    }
                    return Ok(());
                }
            },
        };
        let c = promise.map_or(holdable, |p| hub.lend_promise(p));
        let mut out = hub.outbox();
        self.mark.epoch.set(out.epoch);
        out.push(kind, self.channel, self.ctx, a, b, c);
        Ok(())
    }
}

/// The wire form a native message read takes to JS.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ReadKind {
    Resp,
    Http,
    Ws,
    /// A JS value given back, or a native value JS cannot see.
    Other,
}

/// The wire form of `v`, from one look at its type: each `is` or `downcast_ref` on a
/// `dyn Any` is a call through its vtable, and a request used to take four of them before its
/// arm matched (three RESP types first).
fn read_kind(v: &dyn Any) -> ReadKind {
    let id = v.type_id();
    let is = |t: TypeId| id == t;
    if is(TypeId::of::<netloop_http::HttpRequest>())
        || is(TypeId::of::<netloop_http::HttpContent>())
        || is(TypeId::of::<netloop_http::HttpClientResponse>())
    {
        ReadKind::Http
    } else if is(TypeId::of::<netloop_resp::RespCommands>())
        || is(TypeId::of::<netloop_resp::RespCommand>())
        || is(TypeId::of::<netloop_resp::RespValue>())
    {
        ReadKind::Resp
    } else if is(TypeId::of::<netloop_ws::WebSocketFrame>()) {
        ReadKind::Ws
    } else {
        ReadKind::Other
    }
}

impl ChannelHandler for JsAdapter {
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
    fn channel_registered(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.skips(self.takes.inbound) {
            ctx.fire_channel_registered();
            return Ok(());
        }
        self.push(WireKind::Registered as u32, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn channel_unregistered(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.skips(self.takes.inbound) {
            ctx.fire_channel_unregistered();
            return Ok(());
        }
        self.push(WireKind::Unregistered as u32, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.skips(self.takes.inbound) {
            ctx.fire_channel_active();
            return Ok(());
        }
        self.push(WireKind::Active as u32, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.skips(self.takes.inbound) {
            ctx.fire_channel_inactive();
            return Ok(());
        }
        self.push(WireKind::Inactive as u32, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        if self.skips(self.takes.inbound) {
            ctx.fire_channel_read(msg);
            return Ok(());
        }
        self.push_message(ctx, msg, None)
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.mark.read_complete_unused.get() {
            if let Some(hub) = self.hub.upgrade() {
                let epoch = hub.outbox.borrow().epoch;
                self.mark.read_complete_skipped.set(epoch);
            }
            ctx.fire_channel_read_complete();
            return Ok(());
        }
        if self.skips(self.takes.inbound) {
            ctx.fire_channel_read_complete();
            return Ok(());
        }
        self.push(WireKind::ReadComplete as u32, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        if self.skips(self.takes.inbound) {
            ctx.fire_user_event_triggered(event);
            return Ok(());
        }
        match crate::user_event_wire::fields(&self.hub, event) {
            Ok(Some((a, kind))) => self.push(WireKind::UserEvent as u32, a, kind.value(), 0.0),
            Ok(None) => {} // the hub is gone: nobody in JS to tell
            Err(other) => ctx.fire_user_event_triggered(other),
        }
        Ok(())
    }
    fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.skips(self.takes.inbound) {
            ctx.fire_channel_writability_changed();
            return Ok(());
        }
        self.push(WireKind::WritabilityChanged as u32, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn exception_caught(
        &self,
        ctx: &ChannelHandlerContext,
        error: TransportError,
    ) -> HandlerResult {
        if self.skips(self.takes.inbound) {
            ctx.fire_exception_caught(error);
            return Ok(());
        }
        let Some(hub) = self.hub.upgrade() else {
            return Ok(());
        };
        let r = hub.outbox().put_error(hub.id(), &error);
        let (a, b) = record::error_fields(r);
        self.push(WireKind::Exception as u32, a, b, 0.0);
        Ok(())
    }

    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        if self.skips(self.takes.outbound) {
            ctx.write_with(msg, promise);
            return Ok(());
        }
        self.push_message(ctx, msg, Some(promise))
    }
    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.skips(self.takes.outbound) {
            ctx.flush();
            return Ok(());
        }
        self.push(WireKind::Flush as u32, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn takes_read(&self) -> bool {
        // Without outbound methods `read` passes natively, whatever waits for JS (below).
        self.takes.outbound
    }
    fn read(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        // Not held back by records waiting for JS (see the module docs).
        if !self.takes.outbound {
            ctx.read();
            return Ok(());
        }
        self.push(WireKind::Read as u32, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn close(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        let shutting_down =
            !self.takes.outbound && self.hub.upgrade().is_some_and(|h| h.closing_all.get());
        if shutting_down || self.skips(self.takes.outbound) {
            ctx.close_with(promise);
            return Ok(());
        }
        let id = self.hub.upgrade().map_or(0.0, |h| h.lend_promise(promise));
        self.push(WireKind::Close as u32, 0.0, 0.0, id);
        Ok(())
    }
}
