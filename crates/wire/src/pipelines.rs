//! The pipeline methods of `NativeChannels`: adding, removing and replacing JS stand-ins and
//! built-in native handlers. The JS list mirrors the native pipeline name for name (see
//! docs/decisions/0004), so every change is made here first, where it is checked.

use crate::protocol::{ErrorIndex, RecordValue as _};
use std::rc::Rc;

use bytes::Bytes;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use netloop_tls::SslHandler;
use netloop_transport::LocalListenerExt;

use netloop_wire::adapter::{JsAdapter, Takes};
use netloop_wire::codecs;
use netloop_wire::outbox::ErrorRef;

use super::{transport_error, NativeChannels};
use crate::error::{throw, wire_error, JsResult};
use crate::protocol::{HandlerPosition, WireKind};

/// The delimiters JS passed, copied out of their Buffers.
fn copied(delimiters: Option<Vec<Buffer>>) -> Vec<Bytes> {
    delimiters
        .unwrap_or_default()
        .iter()
        .map(|b| Bytes::copy_from_slice(b))
        .collect()
}

#[napi]
impl NativeChannels {
    fn add(
        &self,
        id: f64,
        pos: u32,
        base: &str,
        name: &str,
        handler: Rc<dyn netloop_transport::ChannelHandler>,
    ) -> JsResult<()> {
        self.with_channel(id, |ch| {
            let p = ch.pipeline();
            let r = match pos {
                x if x == HandlerPosition::First as u32 => p.add_first(name, handler),
                x if x == HandlerPosition::Last as u32 => p.add_last(name, handler),
                x if x == HandlerPosition::Before as u32 => p.add_before(base, name, handler),
                _ => p.add_after(base, name, handler),
            };
            r.map(|_| ()).map_err(transport_error)
        })
    }

    /// For an `SslHandler`: tells JS when its handshake completes (`WireKind::TlsHandshake`), whatever
    /// handlers sit behind it, so `handshakeFuture()` and `connect()` settle.
    fn watch_tls(&self, id: f64, h: &Rc<dyn netloop_transport::ChannelHandler>) {
        let Some(tls) = h.as_any().and_then(|a| a.downcast_ref::<SslHandler>()) else {
            return;
        };
        netloop_wire::tls_info::ask_js_for_client_hellos(&self.hub, id, tls);
        netloop_wire::tls_info::ask_js_for_server_identity(&self.hub, id, tls);
        let hub = Rc::downgrade(&self.hub);
        tls.handshake_future().add_local_listener(move |r| {
            let Some(hub) = hub.upgrade() else { return };
            let at = match r {
                Ok(_) => ErrorIndex::None.value(),
                Err(e) => match hub
                    .outbox()
                    .put_error(hub.id(), &e.clone().into_transport())
                {
                    ErrorRef::Native(at) => at,
                    ErrorRef::Js(_) => ErrorIndex::None.value(),
                },
            };
            hub.outbox()
                .push(WireKind::TlsHandshake as u32, id, 0.0, at, 0.0, 0.0);
        });
    }

    fn adapter(&self, id: f64, ctx: f64, takes: u32) -> Rc<dyn netloop_transport::ChannelHandler> {
        Rc::new(JsAdapter {
            hub: Rc::downgrade(&self.hub),
            channel: id,
            ctx,
            takes: Takes::from_bits(takes),
            holds: std::cell::Cell::new(false),
            mark: self.hub.mark_of(id as u64),
        })
    }

    /// Decides whether channel `id`'s stand-ins pass `channelReadComplete` natively (see
    /// adapter.rs): no JS handler has the method and no native handler sits behind a JS one.
    /// When that stops being so while JS has not finished with the reads of an event passed
    /// natively (they wait for a delivery or are being delivered), the event goes to JS after
    /// all, at the first JS handler.
    fn review_read_complete(&self, id: f64) {
        netloop_wire::held::review_holds(&self.hub, id); // and which stand-ins keep reads (held.rs)
        let Some(ch) = self.hub.channel(id as u64) else {
            return;
        };
        let p = ch.pipeline();
        let (mut first_js, mut unused) = (None, true);
        for name in p.names() {
            let Some(h) = p.get(&name) else { continue };
            match h.as_any().and_then(|a| a.downcast_ref::<JsAdapter>()) {
                Some(js) => {
                    first_js.get_or_insert(js.ctx);
                    unused &= !js.takes.read_complete;
                }
                None => unused &= first_js.is_none(),
            }
        }
        let marks = self.hub.mark_of(id as u64);
        if !marks.read_complete_unused.replace(unused) || unused {
            return;
        }
        let (Some(ctx), at) = (first_js, marks.read_complete_skipped.get()) else {
            return;
        };
        let mut out = self.hub.outbox();
        if at == out.epoch || (self.hub.delivering.get() && at.wrapping_add(1) == out.epoch) {
            marks.epoch.set(out.epoch);
            out.push(WireKind::ReadComplete as u32, id, ctx, 0.0, 0.0, 0.0);
        }
    }

    fn remember_ctx(&self, id: f64, name: &str, ctx: f64) {
        if let Some(c) = self
            .hub
            .channel(id as u64)
            .and_then(|ch| ch.pipeline().context(name))
        {
            self.hub.set_ctx(id as u64, ctx as u64, c);
        }
    }

    /// Adds the stand-in of JS context `ctx` named `name` at [`HandlerPosition`] `pos`
    /// (relative to `base` for before/after). `takes`: the handler's [`crate::protocol::HandlerTakes`] bits.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn add_js(
        &self,
        env: Env,
        id: f64,
        pos: u32,
        base: String,
        name: String,
        ctx: f64,
        takes: u32,
    ) -> Result<()> {
        self.enter();
        let r = self.add(id, pos, &base, &name, self.adapter(id, ctx, takes));
        if r.is_ok() {
            self.remember_ctx(id, &name, ctx);
            self.review_read_complete(id);
        }
        r.map_err(|e| throw(&env, e))
    }

    /// Adds a built-in native handler of `kind` with Netty's parameters.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn add_native(
        &self,
        env: Env,
        id: f64,
        pos: u32,
        base: String,
        name: String,
        kind: u32,
        params: Vec<f64>,
        delimiters: Option<Vec<Buffer>>,
    ) -> Result<()> {
        self.enter();
        let r = codecs::make(kind, &params, copied(delimiters))
            .map_err(wire_error)
            .and_then(|h| {
                self.watch_tls(id, &h);
                self.add(id, pos, &base, &name, h)
            });
        self.review_read_complete(id);
        r.map_err(|e| throw(&env, e))
    }

    /// Removes handler `name` from channel `id`'s pipeline.
    #[napi]
    pub fn remove(&self, env: Env, id: f64, name: String) -> Result<()> {
        self.enter();
        self.with_channel(id, |ch| {
            ch.pipeline()
                .remove(&name)
                .map(|_| ())
                .map_err(transport_error)
        })
        .inspect(|_| self.review_read_complete(id))
        .map_err(|e| throw(&env, e))
    }

    /// Replaces handler `old` by JS context `ctx` (kind 0) or a native handler of `kind`.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn replace(
        &self,
        env: Env,
        id: f64,
        old: String,
        name: String,
        kind: u32,
        ctx: f64,
        params: Vec<f64>,
        delimiters: Option<Vec<Buffer>>,
        takes: u32,
    ) -> Result<()> {
        self.enter();
        let r = (|| {
            let handler = if kind == 0 {
                self.adapter(id, ctx, takes)
            } else {
                let h = codecs::make(kind, &params, copied(delimiters)).map_err(wire_error)?;
                self.watch_tls(id, &h);
                h
            };
            self.with_channel(id, |ch| {
                ch.pipeline()
                    .replace(&old, &name, handler)
                    .map(|_| ())
                    .map_err(transport_error)
            })?;
            if kind == 0 {
                self.remember_ctx(id, &name, ctx);
            }
            self.review_read_complete(id);
            Ok(())
        })();
        r.map_err(|e| throw(&env, e))
    }
}
