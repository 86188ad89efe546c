//! The channel hub of one attached loop: its channels, the records it owes JS, and the ops JS
//! sent. One delivery per loop iteration carries the events of all of the loop's channels to
//! JS in one call; the ops JS made while handling them are applied when that call returns.
//!
//! Ground rules:
//! - Loop thread only (the JS thread the loop is attached to). No `RefCell` borrow is held
//!   while JS runs or while a pipeline method runs (pipelines re-enter the hub through the
//!   adapters).
//! - Order: records reach JS in the order the pipeline produced them; ops are applied in the
//!   order JS made them. A delivery repeats (bounded) while applying ops produced new records.
//! - A channel stays in the table until it is closed and unregistered; ops for a channel that
//!   left it fail their promise with `ERR_CHANNEL_CLOSED`.

use std::cell::{Cell, RefCell, RefMut};
use std::collections::HashMap;
use std::ptr;
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicU32, Ordering};

use bytes::Bytes;
use napi::sys;
use netloop_eventloop::LocalLoop;
use netloop_transport::{
    Channel, ChannelHandlerContext, ChannelPipeline, ChannelPromise, LocalListenerExt, Message,
    TransportError, Unhandled,
};

use super::outbox::{ErrorRef, Outbox};
use super::shared::SharedArrays;
use super::token::{drain_released, JsError, JsValue};
use super::wire::{self, RECORD};
use crate::bridge::{Bridge, IterationHook};

/// Most delivery rounds in one go; more records wait for the next iteration.
const MAX_ROUNDS: usize = 64;

static NEXT_HUB: AtomicU32 = AtomicU32::new(1);

pub struct Entry {
    pub channel: Channel,
    pub ctxs: HashMap<u64, ChannelHandlerContext>,
    pub refd: bool,
}

/// Counters of one loop's JS boundary, read by `loop.metrics()`.
#[derive(Default)]
pub struct Metrics {
    pub iterations: Cell<f64>,
    pub deliveries: Cell<f64>,
    pub records: Cell<f64>,
    pub ops: Cell<f64>,
    pub bytes_to_js: Cell<f64>,
    pub bytes_from_js: Cell<f64>,
}

pub struct Hub {
    id: u32,
    loop_id: u64,
    env: sys::napi_env,
    pub(crate) local: Weak<LocalLoop>,
    bridge: Weak<Bridge>,
    dispatch: sys::napi_ref,
    shared: SharedArrays,
    channels: RefCell<HashMap<u64, Entry>>,
    closing: RefCell<Vec<u64>>,
    outbox: RefCell<Outbox>,
    promises: RefCell<HashMap<u64, ChannelPromise>>,
    next_promise: Cell<u64>,
    delivering: Cell<bool>,
    refd_open: Cell<usize>,
    pub metrics: Metrics,
}

/// Where an inbound op starts: the pipeline's head, or a JS context.
enum From {
    Head(ChannelPipeline),
    Ctx(ChannelHandlerContext),
}

impl Hub {
    pub fn new(
        env: sys::napi_env,
        local: &Rc<LocalLoop>,
        bridge: &Rc<Bridge>,
        dispatch: sys::napi_ref,
        shared: SharedArrays,
    ) -> Rc<Hub> {
        let handle = local.handle();
        let hub = Rc::new(Hub {
            id: NEXT_HUB.fetch_add(1, Ordering::Relaxed),
            loop_id: handle.id(),
            env,
            local: Rc::downgrade(local),
            bridge: Rc::downgrade(bridge),
            dispatch,
            shared,
            channels: RefCell::default(),
            closing: RefCell::default(),
            outbox: RefCell::default(),
            promises: RefCell::default(),
            next_promise: Cell::new(1),
            delivering: Cell::new(false),
            refd_open: Cell::new(0),
            metrics: Metrics::default(),
        });
        bridge.set_hook(hub.clone());
        super::remote::register(hub.loop_id, handle, &hub);
        hub
    }

    /// The id of this hub's loop.
    pub fn loop_id(&self) -> u64 {
        self.loop_id
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    pub fn bridge(&self) -> Option<Rc<Bridge>> {
        self.bridge.upgrade()
    }

    pub fn outbox(&self) -> RefMut<'_, Outbox> {
        self.outbox.borrow_mut()
    }

    pub fn count_bytes_out_to_js(&self, n: usize) {
        let m = &self.metrics.bytes_to_js;
        m.set(m.get() + n as f64);
    }

    // ---- channels ----

    /// Adds a channel; its close is reported to JS and it leaves the table once unregistered.
    pub fn adopt(self: &Rc<Self>, channel: Channel) -> u64 {
        let id = channel.id().0;
        let weak = Rc::downgrade(self);
        let sink = weak.clone();
        // What reaches the native tail is reported to JS like what reaches the JS tail.
        channel.pipeline().set_unhandled_sink(move |what| {
            if let (Unhandled::Exception(e), Some(hub)) = (what, sink.upgrade()) {
                let mut out = hub.outbox();
                let (a, b) = match out.put_error(hub.id, &e) {
                    ErrorRef::Native(i) => (i, 1.0),
                    ErrorRef::Js(t) => (t, 2.0),
                };
                out.push(wire::UNHANDLED, id as f64, 0.0, a, b, 0.0);
            }
        });
        channel.close_future().add_local_listener(move |_| {
            if let Some(hub) = weak.upgrade() {
                hub.on_closed(id);
            }
        });
        self.refd_open.set(self.refd_open.get() + 1);
        super::remote::set_owner(id, self.loop_id);
        self.channels.borrow_mut().insert(
            id,
            Entry {
                channel,
                ctxs: HashMap::new(),
                refd: true,
            },
        );
        id
    }

    fn on_closed(&self, id: u64) {
        if let Some(e) = self.channels.borrow().get(&id) {
            if e.refd {
                self.refd_open.set(self.refd_open.get().saturating_sub(1));
            }
        }
        self.outbox().push(wire::CLOSED, id as f64, 0.0, 0.0, 0.0, 0.0);
        self.closing.borrow_mut().push(id);
    }

    pub fn channel(&self, id: u64) -> Option<Channel> {
        self.channels.borrow().get(&id).map(|e| e.channel.clone())
    }

    pub fn set_ctx(&self, id: u64, ctx_id: u64, ctx: ChannelHandlerContext) {
        if let Some(e) = self.channels.borrow_mut().get_mut(&id) {
            e.ctxs.insert(ctx_id, ctx);
        }
    }

    pub fn set_ref(&self, id: u64, refd: bool) {
        let mut map = self.channels.borrow_mut();
        let Some(e) = map.get_mut(&id) else { return };
        if e.refd == refd {
            return;
        }
        e.refd = refd;
        if e.channel.is_open() {
            let n = self.refd_open.get();
            self.refd_open.set(if refd { n + 1 } else { n.saturating_sub(1) });
        }
    }

    /// Closes every open channel (through its pipeline, as `channel.close()`).
    pub fn close_all(&self) {
        let open: Vec<Channel> = self
            .channels
            .borrow()
            .values()
            .filter(|e| e.channel.is_open())
            .map(|e| e.channel.clone())
            .collect();
        for ch in open {
            ch.close();
        }
    }

    pub fn channel_count(&self) -> usize {
        self.channels.borrow().len()
    }

    /// Closed channels that are unregistered leave the table.
    fn sweep(&self) {
        let ids: Vec<u64> = std::mem::take(&mut *self.closing.borrow_mut());
        let mut keep = Vec::new();
        let mut gone = Vec::new();
        {
            let mut map = self.channels.borrow_mut();
            for id in ids {
                match map.get(&id) {
                    Some(e) if e.channel.is_registered() => keep.push(id),
                    Some(_) => gone.extend(map.remove(&id)),
                    None => {}
                }
            }
        }
        {
            let mut out = self.outbox();
            for e in &gone {
                super::remote::clear_owner(e.channel.id().0);
                out.push(wire::FORGET, e.channel.id().0 as f64, 0.0, 0.0, 0.0, 0.0);
            }
        }
        // Dropped outside the borrows: dropping a pipeline may run handler code.
        drop(gone);
        self.closing.borrow_mut().extend(keep);
    }

    // ---- promises ----

    /// Keeps a native promise for JS; 0 for a void one.
    pub fn lend_promise(&self, p: ChannelPromise) -> f64 {
        if p.is_void() {
            return 0.0;
        }
        let id = self.next_promise.get();
        self.next_promise.set(id + 1);
        self.promises.borrow_mut().insert(id, p);
        -(id as f64)
    }

    /// The native promise lent as `id` (negative), if any.
    pub fn take_promise(&self, id: f64) -> Option<ChannelPromise> {
        if id < 0.0 {
            self.promises.borrow_mut().remove(&((-id) as u64))
        } else {
            None
        }
    }

    /// The promise for an op: a lent native one, a new one reporting to JS promise `id`, or
    /// (0) one whose failure is fired into the pipeline's `exceptionCaught`.
    fn promise_for(self: &Rc<Self>, id: f64, pipeline: &ChannelPipeline) -> ChannelPromise {
        if id < 0.0 {
            return self.take_promise(id).unwrap_or_default();
        }
        if id == 0.0 {
            return ChannelPromise::void().unvoid(pipeline);
        }
        let p = ChannelPromise::new();
        if let Some(f) = p.future() {
            let weak = Rc::downgrade(self);
            f.add_local_listener(move |r| {
                if let Some(hub) = weak.upgrade() {
                    hub.report_promise(id, r);
                }
            });
        }
        p
    }

    pub fn report_promise(&self, id: f64, r: &Result<(), TransportError>) {
        let mut out = self.outbox();
        match r {
            Ok(()) => out.push(wire::PROMISE_DONE, 0.0, 0.0, id, 0.0, 0.0),
            Err(e) => match out.put_error(self.id, e) {
                ErrorRef::Native(i) => out.push(wire::PROMISE_DONE, 0.0, 0.0, id, 1.0, i),
                ErrorRef::Js(t) => out.push(wire::PROMISE_DONE, 0.0, 0.0, id, 2.0, t),
            },
        }
    }

    /// Fails JS promise `id` at once (an op for a channel that is gone).
    fn fail_promise(&self, id: f64, e: TransportError) {
        if id > 0.0 {
            self.report_promise(id, &Err(e));
        } else if let Some(p) = self.take_promise(id) {
            p.try_failure(e);
        }
    }

    // ---- ops from JS ----

    /// Applies the ops JS buffered. `big` holds the bytes of large writes, `strings` the
    /// codes and messages of JS errors, both indexed by the ops.
    pub fn apply_ops(self: &Rc<Self>, big: &[&[u8]], strings: &[String]) {
        let ops = self.shared.take_ops();
        if ops.is_empty() {
            return;
        }
        let m = &self.metrics.ops;
        m.set(m.get() + (ops.len() / RECORD) as f64);
        for op in ops.chunks_exact(RECORD) {
            self.apply(op, big, strings);
        }
    }

    fn js_error(&self, token: f64, strings: &[String], at: f64) -> TransportError {
        let i = at as usize;
        let code = strings.get(i).cloned().unwrap_or_else(|| "ERR_JS".into());
        let message = strings.get(i + 1).cloned().unwrap_or_default();
        TransportError::foreign(
            std::borrow::Cow::Owned(code.clone()),
            JsError::new(self.id, token, code, message),
        )
    }

    fn message(&self, kind: u32, a: f64, b: f64, big: &[&[u8]]) -> Message {
        match kind {
            wire::READ_BYTES | wire::WRITE_BYTES => {
                let data = self.shared.arena_bytes(a as usize, b as usize);
                let m = &self.metrics.bytes_from_js;
                m.set(m.get() + data.len() as f64);
                Message::Bytes(data)
            }
            wire::READ_BIG | wire::WRITE_BIG => {
                let data = big.get(a as usize).copied().unwrap_or_default();
                let m = &self.metrics.bytes_from_js;
                m.set(m.get() + data.len() as f64);
                Message::Bytes(Bytes::copy_from_slice(data))
            }
            _ => Message::user(JsValue::new(self.id, a)),
        }
    }

    fn apply(self: &Rc<Self>, op: &[f64], big: &[&[u8]], strings: &[String]) {
        let (kind, chan, ctx, a, b, c) = (op[0] as u32, op[1] as u64, op[2] as u64, op[3], op[4], op[5]);
        if kind == wire::COMPLETE_PROMISE {
            if let Some(p) = self.take_promise(a) {
                if b == 0.0 {
                    p.try_success();
                } else {
                    p.try_failure(self.js_error(c, strings, op[2]));
                }
            }
            return;
        }
        let found = {
            let map = self.channels.borrow();
            map.get(&chan).map(|e| (e.channel.clone(), if ctx == 0 { None } else { e.ctxs.get(&ctx).cloned() }))
        };
        let Some((channel, ctx)) = found else {
            if matches!(kind, wire::WRITE_BYTES | wire::WRITE_VALUE | wire::WRITE_BIG | wire::CLOSE) {
                self.fail_promise(c, TransportError::ChannelClosed);
            }
            return;
        };
        let pipeline = channel.pipeline();
        match kind {
            wire::REGISTER => {
                let weak = Rc::downgrade(self);
                channel.register().add_local_listener(move |r| {
                    if let (Err(e), Some(hub)) = (r, weak.upgrade()) {
                        let mut out = hub.outbox();
                        if let ErrorRef::Native(i) = out.put_error(hub.id, e) {
                            out.push(wire::EXCEPTION, chan as f64, 0.0, i, 1.0, 0.0);
                        }
                    }
                });
            }
            wire::WRITE_BYTES | wire::WRITE_VALUE | wire::WRITE_BIG => {
                let msg = self.message(kind, a, b, big);
                let p = self.promise_for(c, &pipeline);
                match ctx {
                    Some(x) => x.write_with(msg, p),
                    None => pipeline.write_with(msg, p),
                }
            }
            wire::FLUSH => match ctx {
                Some(x) => x.flush(),
                None => pipeline.flush(),
            },
            wire::READ => match ctx {
                Some(x) => x.read(),
                None => pipeline.read(),
            },
            wire::CLOSE => {
                let p = self.promise_for(c, &pipeline);
                match ctx {
                    Some(x) => x.close_with(p),
                    None => pipeline.close_with(p),
                }
            }
            _ => {
                let from = match ctx {
                    Some(x) => From::Ctx(x),
                    None => From::Head(pipeline),
                };
                self.fire_inbound(from, kind, a, b, big, strings);
            }
        }
    }

    fn fire_inbound(&self, from: From, kind: u32, a: f64, b: f64, big: &[&[u8]], strings: &[String]) {
        macro_rules! fire {
            ($m:ident $(, $arg:expr)*) => {
                match &from {
                    From::Ctx(x) => x.$m($($arg),*),
                    From::Head(p) => p.$m($($arg),*),
                }
            };
        }
        match kind {
            wire::REGISTERED => fire!(fire_channel_registered),
            wire::UNREGISTERED => fire!(fire_channel_unregistered),
            wire::ACTIVE => fire!(fire_channel_active),
            wire::INACTIVE => fire!(fire_channel_inactive),
            wire::READ_COMPLETE => fire!(fire_channel_read_complete),
            wire::WRITABILITY => fire!(fire_channel_writability_changed),
            wire::READ_BYTES | wire::READ_VALUE | wire::READ_BIG => {
                let msg = self.message(kind, a, b, big);
                fire!(fire_channel_read, msg)
            }
            wire::USER_EVENT => {
                let ev: Box<dyn std::any::Any> = Box::new(JsValue::new(self.id, a));
                fire!(fire_user_event_triggered, ev)
            }
            wire::EXCEPTION => {
                let e = self.js_error(a, strings, b);
                fire!(fire_exception_caught, e)
            }
            _ => {}
        }
    }

    // ---- delivery ----

    /// Delivers what the loop produced, applying the ops JS makes meanwhile, until nothing is
    /// left (at most `MAX_ROUNDS` rounds; the rest waits for the next iteration).
    pub fn deliver(self: &Rc<Self>) {
        if self.delivering.replace(true) {
            return;
        }
        for _ in 0..MAX_ROUNDS {
            self.apply_ops(&[], &[]);
            self.sweep();
            let mut released = Vec::new();
            drain_released(self.id, &mut released);
            if !released.is_empty() {
                let mut out = self.outbox();
                for t in released {
                    out.push(wire::RELEASE, 0.0, 0.0, t, 0.0, 0.0);
                }
            }
            if self.outbox.borrow().is_empty() {
                break;
            }
            let batch = std::mem::take(&mut *self.outbox.borrow_mut());
            self.call_js(batch);
        }
        self.delivering.set(false);
        if !self.outbox.borrow().is_empty() {
            if let Some(l) = self.local.upgrade() {
                l.request_iteration();
            }
        }
    }

    /// One batch to JS, in as many calls as the shared record buffer needs.
    fn call_js(&self, batch: Outbox) {
        let env = self.env;
        let mut scope = ptr::null_mut();
        // SAFETY: we are on the env's thread, inside a libuv callback scope or a napi call.
        if unsafe { sys::napi_open_handle_scope(env, &mut scope) } != sys::Status::napi_ok {
            return;
        }
        let m = &self.metrics;
        m.records.set(m.records.get() + batch.records_len() as f64);
        // SAFETY: the handle scope above is open; every value made here lives in it.
        unsafe {
            let mut f = ptr::null_mut();
            let mut undefined = ptr::null_mut();
            sys::napi_get_undefined(env, &mut undefined);
            if sys::napi_get_reference_value(env, self.dispatch, &mut f) == sys::Status::napi_ok
                && !f.is_null()
            {
                let arena = make_buffer(env, &batch.bytes).unwrap_or(undefined);
                let strings = make_strings(env, &batch.strings).unwrap_or(undefined);
                let cap = self.shared.event_capacity();
                for chunk in batch.records.chunks(cap * RECORD) {
                    let n = self.shared.put_events(chunk);
                    let mut count = ptr::null_mut();
                    sys::napi_create_double(env, n as f64, &mut count);
                    let args = [count, arena, strings];
                    let mut result = ptr::null_mut();
                    m.deliveries.set(m.deliveries.get() + 1.0);
                    let status = sys::napi_call_function(env, undefined, f, 3, args.as_ptr(), &mut result);
                    if status == sys::Status::napi_pending_exception {
                        let mut exc = ptr::null_mut();
                        sys::napi_get_and_clear_last_exception(env, &mut exc);
                        // The TS dispatcher catches handler errors: this is a terminating
                        // worker (or a bug in the TS layer).
                        crate::error::debug(format_args!(
                            "netloop: an exception escaped the channel dispatcher"
                        ));
                    }
                }
            }
            sys::napi_close_handle_scope(env, scope);
        }
    }

    /// True while an open, ref'ed channel lives on this loop.
    pub fn keeps_alive(&self) -> bool {
        self.refd_open.get() > 0
    }
}

/// A Buffer holding a copy of `bytes` (undefined when empty).
///
/// # Safety
/// A handle scope must be open on the env's thread.
unsafe fn make_buffer(env: sys::napi_env, bytes: &[u8]) -> Option<sys::napi_value> {
    if bytes.is_empty() {
        return None;
    }
    let mut data = ptr::null_mut();
    let mut value = ptr::null_mut();
    // SAFETY: per the function's contract; napi copies `bytes.len()` bytes from the slice.
    let ok = unsafe {
        sys::napi_create_buffer_copy(env, bytes.len(), bytes.as_ptr().cast(), &mut data, &mut value)
    };
    (ok == sys::Status::napi_ok).then_some(value)
}

/// An array of JS strings (undefined when empty).
///
/// # Safety
/// A handle scope must be open on the env's thread.
unsafe fn make_strings(env: sys::napi_env, strings: &[String]) -> Option<sys::napi_value> {
    if strings.is_empty() {
        return None;
    }
    let mut arr = ptr::null_mut();
    // SAFETY: per the function's contract; each string is passed with its length.
    unsafe {
        if sys::napi_create_array_with_length(env, strings.len(), &mut arr) != sys::Status::napi_ok {
            return None;
        }
        for (i, s) in strings.iter().enumerate() {
            let mut v = ptr::null_mut();
            sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut v);
            sys::napi_set_element(env, arr, i as u32, v);
        }
    }
    Some(arr)
}

impl IterationHook for Hub {
    fn after_iteration(self: Rc<Self>) {
        let m = &self.metrics.iterations;
        m.set(m.get() + 1.0);
        self.deliver();
    }
    fn keeps_alive(&self) -> bool {
        Hub::keeps_alive(self)
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        super::remote::unregister(self.loop_id);
        for id in self.channels.get_mut().keys() {
            super::remote::clear_owner(*id);
        }
        // SAFETY: the reference was created on this env's thread, where hubs are dropped.
        unsafe {
            sys::napi_delete_reference(self.env, self.dispatch);
        }
    }
}
