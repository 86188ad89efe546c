//! The pipeline operations JS calls on a hub (`NativeChannels`'s pipeline methods in
//! crates/node convert and call these): adding, removing and replacing JS stand-ins and
//! built-in native handlers. The JS list mirrors the native pipeline name for name (see
//! docs/decisions/0004), so every change is made here first, where it is checked.

use crate::protocol::{ErrorIndex, RecordValue as _};
use std::rc::Rc;

use bytes::Bytes;

use netloop_tls::SslHandler;
use netloop_transport::LocalListenerExt;

use crate::adapter::{JsAdapter, Takes};
use crate::codecs;
use crate::direct::transport_error;
use crate::error::WireResult;
use crate::hub::Hub;
use crate::outbox::ErrorRef;
use crate::protocol::{HandlerPosition, WireKind};

impl Hub {
    fn add_handler(
        &self,
        id: f64,
        pos: u32,
        base: &str,
        name: &str,
        handler: Rc<dyn netloop_transport::ChannelHandler>,
    ) -> WireResult<()> {
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
    fn watch_tls(self: &Rc<Self>, id: f64, h: &Rc<dyn netloop_transport::ChannelHandler>) {
        let Some(tls) = h.as_any().and_then(|a| a.downcast_ref::<SslHandler>()) else {
            return;
        };
        crate::tls_info::ask_js_for_client_hellos(self, id, tls);
        crate::tls_info::ask_js_for_server_identity(self, id, tls);
        let hub = Rc::downgrade(self);
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

    fn stand_in(
        self: &Rc<Self>,
        id: f64,
        ctx: f64,
        takes: u32,
    ) -> Rc<dyn netloop_transport::ChannelHandler> {
        Rc::new(JsAdapter {
            hub: Rc::downgrade(self),
            channel: id,
            ctx,
            takes: Takes::from_bits(takes),
            holds: std::cell::Cell::new(false),
            mark: self.mark_of(id as u64),
        })
    }

    /// Decides whether channel `id`'s stand-ins pass `channelReadComplete` natively (see
    /// adapter.rs): no JS handler has the method and no native handler sits behind a JS one.
    /// When that stops being so while JS has not finished with the reads of an event passed
    /// natively (they wait for a delivery or are being delivered), the event goes to JS after
    /// all, at the first JS handler.
    fn review_read_complete(self: &Rc<Self>, id: f64) {
        crate::held::review_holds(self, id); // and which stand-ins keep reads (held.rs)
        let Some(ch) = self.channel(id as u64) else {
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
        if first_js.is_none() && !self.has_marks(id as u64) {
            return; // no stand-in ever: nothing reads the marks
        }
        let marks = self.mark_of(id as u64);
        if !marks.read_complete_unused.replace(unused) || unused {
            return;
        }
        let (Some(ctx), at) = (first_js, marks.read_complete_skipped.get()) else {
            return;
        };
        let mut out = self.outbox();
        if at == out.epoch || (self.delivering.get() && at.wrapping_add(1) == out.epoch) {
            marks.epoch.set(out.epoch);
            out.push(WireKind::ReadComplete as u32, id, ctx, 0.0, 0.0, 0.0);
        }
    }

    fn remember_ctx(&self, id: f64, name: &str, ctx: f64) {
        if let Some(c) = self
            .channel(id as u64)
            .and_then(|ch| ch.pipeline().context(name))
        {
            self.set_ctx(id as u64, ctx as u64, c);
        }
    }

    /// Adds the stand-in of JS context `ctx` named `name` at [`HandlerPosition`] `pos`
    /// (relative to `base` for before/after). `takes`: the handler's [`crate::protocol::HandlerTakes`] bits.
    #[allow(clippy::too_many_arguments)]
    pub fn add_js(
        self: &Rc<Self>,
        id: f64,
        pos: u32,
        base: &str,
        name: &str,
        ctx: f64,
        takes: u32,
    ) -> WireResult<()> {
        let r = self.add_handler(id, pos, base, name, self.stand_in(id, ctx, takes));
        if r.is_ok() {
            self.remember_ctx(id, name, ctx);
            self.review_read_complete(id);
        }
        r
    }

    /// Adds a built-in native handler of `kind` with Netty's parameters.
    pub fn add_native(
        self: &Rc<Self>,
        id: f64,
        (pos, base, name): (u32, &str, &str),
        kind: u32,
        params: &[f64],
        delimiters: Vec<Bytes>,
    ) -> WireResult<()> {
        let r = codecs::make(kind, params, delimiters).and_then(|h| {
            self.watch_tls(id, &h);
            self.add_handler(id, pos, base, name, h)
        });
        self.review_read_complete(id);
        r
    }

    /// Removes handler `name` from channel `id`'s pipeline.
    pub fn remove_handler(self: &Rc<Self>, id: f64, name: &str) -> WireResult<()> {
        self.with_channel(id, |ch| {
            ch.pipeline()
                .remove(name)
                .map(|_| ())
                .map_err(transport_error)
        })
        .inspect(|_| self.review_read_complete(id))
    }

    /// Replaces handler `old` by JS context `ctx` (kind 0) or a native handler of `kind`.
    pub fn replace_handler(
        self: &Rc<Self>,
        id: f64,
        (old, name): (&str, &str),
        (kind, ctx, takes): (u32, f64, u32),
        params: &[f64],
        delimiters: Vec<Bytes>,
    ) -> WireResult<()> {
        let handler = if kind == 0 {
            self.stand_in(id, ctx, takes)
        } else {
            let h = codecs::make(kind, params, delimiters)?;
            self.watch_tls(id, &h);
            h
        };
        self.with_channel(id, |ch| {
            ch.pipeline()
                .replace(old, name, handler)
                .map(|_| ())
                .map_err(transport_error)
        })?;
        if kind == 0 {
            self.remember_ctx(id, name, ctx);
        }
        self.review_read_complete(id);
        Ok(())
    }
}
