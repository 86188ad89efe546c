//! The native stand-in of a JS handler: a `ChannelHandler` that turns every event and
//! operation reaching it into a record for its JS context. What the JS handler passes on
//! comes back as an op applied at this context, so the native pipeline continues from here.
//!
//! Adjacent JS handlers talk to each other in JS; an event crosses only where a native
//! handler (or the head) sits next to a JS one.

use std::rc::Weak;

use netloop_codec::{IdleState, IdleStateEvent};
use netloop_tls::{SslCloseCompletionEvent, SslHandshakeCompletionEvent};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelInputShutdown, ChannelPromise, HandlerResult,
    Message, TransportError, UserEvent,
};

use super::hub::Hub;
use super::outbox::ErrorRef;
use super::token::JsValue;
use super::wire;

pub struct JsAdapter {
    pub hub: Weak<Hub>,
    pub channel: f64,
    pub ctx: f64,
}

impl JsAdapter {
    fn push(&self, kind: u32, a: f64, b: f64, c: f64) {
        if let Some(hub) = self.hub.upgrade() {
            hub.outbox().push(kind, self.channel, self.ctx, a, b, c);
        }
    }

    fn push_message(
        &self,
        ctx: &ChannelHandlerContext,
        read: bool,
        msg: Message,
        promise: f64,
    ) -> HandlerResult {
        let Some(hub) = self.hub.upgrade() else {
            return Ok(());
        };
        match msg {
            Message::Bytes(b) => {
                let mut out = hub.outbox();
                let off = out.put_bytes(&b);
                let kind = if read {
                    wire::READ_BYTES
                } else {
                    wire::WRITE_BYTES
                };
                out.push(kind, self.channel, self.ctx, off, b.len() as f64, promise);
                hub.count_bytes_out_to_js(b.len());
            }
            Message::User(v) if read && v.is::<netloop_resp::RespValue>() => {
                let Ok(resp) = v.downcast::<netloop_resp::RespValue>() else {
                    return Ok(());
                };
                let mut out = hub.outbox();
                let off = out.bytes.len();
                super::resp_wire::put(&mut out.bytes, &resp);
                let len = out.bytes.len() - off;
                out.push(wire::READ_RESP, self.channel, self.ctx, off as f64, len as f64, 0.0);
            }
            Message::User(v)
                if read && (v.is::<netloop_http::HttpRequest>() || v.is::<netloop_http::HttpContent>()) =>
            {
                let mut out = hub.outbox();
                let off = out.bytes.len();
                let c = match v.downcast::<netloop_http::HttpRequest>() {
                    Ok(req) => {
                        super::http_wire::put_request(&mut out.bytes, &req);
                        0.0
                    }
                    Err(v) => {
                        if let Ok(content) = v.downcast::<netloop_http::HttpContent>() {
                            super::http_wire::put_content(&mut out.bytes, &content);
                        }
                        1.0
                    }
                };
                let len = out.bytes.len() - off;
                out.push(wire::READ_HTTP, self.channel, self.ctx, off as f64, len as f64, c);
            }
            other => match other.downcast::<JsValue>() {
                Ok(v) => {
                    let kind = if read {
                        wire::READ_VALUE
                    } else {
                        wire::WRITE_VALUE
                    };
                    hub.outbox()
                        .push(kind, self.channel, self.ctx, v.take(), 0.0, promise);
                }
                Err(other) => {
                    // A native value a JS handler cannot see: pass it on untouched.
                    drop(hub);
                    if read {
                        ctx.fire_channel_read(other);
                    } else {
                        let p = self.hub.upgrade().and_then(|h| h.take_promise(promise));
                        ctx.write_with(other, p.unwrap_or_default());
                    }
                    return Ok(());
                }
            },
        }
        Ok(())
    }
}

impl ChannelHandler for JsAdapter {
    fn channel_registered(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.push(wire::REGISTERED, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn channel_unregistered(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.push(wire::UNREGISTERED, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn channel_active(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.push(wire::ACTIVE, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn channel_inactive(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.push(wire::INACTIVE, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        self.push_message(ctx, true, msg, 0.0)
    }
    fn channel_read_complete(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.push(wire::READ_COMPLETE, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        let event = match event.downcast::<IdleStateEvent>() {
            Ok(idle) => {
                let state = match idle.state {
                    IdleState::ReaderIdle => 0.0,
                    IdleState::WriterIdle => 1.0,
                    IdleState::AllIdle => 2.0,
                };
                self.push(
                    wire::USER_EVENT,
                    state * 2.0 + f64::from(u8::from(idle.first)),
                    1.0,
                    0.0,
                );
                return Ok(());
            }
            Err(e) => e,
        };
        let event = match event.downcast::<ChannelInputShutdown>() {
            Ok(_) => {
                self.push(wire::USER_EVENT, 0.0, 2.0, 0.0);
                return Ok(());
            }
            Err(e) => e,
        };
        let event = match event.downcast::<SslHandshakeCompletionEvent>() {
            Ok(done) => {
                // `a` = -1 on success, else the string index of the error (code, message).
                let at = match &done.0 {
                    Ok(_) => -1.0,
                    Err(e) => match self.hub.upgrade() {
                        Some(hub) => match hub
                            .outbox()
                            .put_error(hub.id(), &e.clone().into_transport())
                        {
                            ErrorRef::Native(at) => at,
                            ErrorRef::Js(_) => -1.0,
                        },
                        None => return Ok(()),
                    },
                };
                self.push(wire::USER_EVENT, at, wire::USER_TLS_HANDSHAKE, 0.0);
                return Ok(());
            }
            Err(e) => e,
        };
        let event = match event.downcast::<SslCloseCompletionEvent>() {
            Ok(_) => {
                self.push(wire::USER_EVENT, 0.0, wire::USER_TLS_CLOSE, 0.0);
                return Ok(());
            }
            Err(e) => e,
        };
        match event.downcast::<JsValue>() {
            Ok(v) => self.push(wire::USER_EVENT, v.take(), 0.0, 0.0),
            Err(other) => ctx.fire_user_event_triggered(other),
        }
        Ok(())
    }
    fn channel_writability_changed(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.push(wire::WRITABILITY, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn exception_caught(&self, _: &ChannelHandlerContext, error: TransportError) -> HandlerResult {
        let Some(hub) = self.hub.upgrade() else {
            return Ok(());
        };
        let r = hub.outbox().put_error(hub.id(), &error);
        let (a, b) = match r {
            ErrorRef::Native(i) => (i, 1.0),
            ErrorRef::Js(t) => (t, 2.0),
        };
        self.push(wire::EXCEPTION, a, b, 0.0);
        Ok(())
    }

    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        let id = self.hub.upgrade().map_or(0.0, |h| h.lend_promise(promise));
        self.push_message(ctx, false, msg, id)
    }
    fn flush(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.push(wire::FLUSH, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn read(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.push(wire::READ, 0.0, 0.0, 0.0);
        Ok(())
    }
    fn close(&self, _: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
        let id = self.hub.upgrade().map_or(0.0, |h| h.lend_promise(promise));
        self.push(wire::CLOSE, 0.0, 0.0, id);
        Ok(())
    }
}
