//! `NativeChannels`: the JS-facing handle of one loop's channel hub. Thin: argument
//! conversion and lookups; the hub (`netloop_wire::hub`) does the work, its delivery reaches
//! JS through [`delivery::JsSurface`], the typed arrays it shares with JS are taken hold of in
//! [`arrays`].
//!
//! Ground rules: used only on the JS thread of its loop. Every method that touches a channel
//! first applies the ops JS buffered, so direct calls and buffered ops keep JS's order.

mod arrays;
mod chunk;
mod delivery;
mod haproxy;
mod holds;
mod layouts;
mod pipeline_ops;
pub(crate) mod read_pool;
mod tls_session;
mod topics;
mod wire_samples;

use std::cell::Cell;
use std::rc::{Rc, Weak};

use bytes::Bytes;
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use netloop_wire::big::BigChunks;
use netloop_wire::shared::SharedArrays;
use netloop_wire::{remote, Hub};

use crate::bridge::Bridge;
use crate::error::{invalid_arg, throw, wire_error, Code, JsResult};
use crate::event_loop::NativeEventLoop;

/// Writes and flushes `data` to the channel with this id, wherever it lives in the process (a
/// task of its loop). `false` if no open channel has that id.
#[napi]
pub fn write_to_channel(id: f64, data: Buffer) -> bool {
    remote::write_to(id as u64, Bytes::copy_from_slice(&data))
}

/// The channel hub of one loop, for its JS side (src/hub.ts): channels, pipelines and the
/// shared record buffers (docs/decisions/0004).
#[napi]
pub struct NativeChannels {
    hub: Rc<Hub>,
    bridge: Weak<Bridge>,
    calls: Cell<f64>,
}

#[napi]
impl NativeChannels {
    /// The hub of `native_loop`: `events`/`ops` are the shared `Float64Array`s, `arena` the
    /// write arena (`Uint8Array`) and `state` the `Float64Array` that `writability` answers
    /// in. Event records reach JS through the loop's own dispatch function
    /// (`DispatchKind::Channels`, with the arena, the strings, the read pool's base and the
    /// external reads).
    #[napi(constructor)]
    pub fn new(
        env: Env,
        native_loop: &NativeEventLoop,
        events: Unknown,
        ops: Unknown,
        arena: Unknown,
        state: Unknown,
    ) -> Result<Self> {
        Self::create(&env, native_loop, [events, ops, arena, state]).map_err(|e| throw(&env, e))
    }

    fn create(env: &Env, native_loop: &NativeEventLoop, arrays: [Unknown; 4]) -> JsResult<Self> {
        let raw = env.raw();
        let [events, ops, arena, state] = arrays;
        let f64s = sys::TypedarrayType::float64_array;
        // SAFETY (the four `arrays::take`): `raw` is the live env of this call and each value
        // is one of its handles.
        // SAFETY: as said above.
        let ev = unsafe { arrays::take(raw, events.raw(), f64s) };
        // SAFETY: as said above.
        let op = unsafe { arrays::take(raw, ops.raw(), f64s) };
        // SAFETY: as said above.
        let ar = unsafe { arrays::take(raw, arena.raw(), sys::TypedarrayType::uint8_array) };
        // SAFETY: as said above.
        let st = unsafe { arrays::take(raw, state.raw(), f64s) };
        let shared = {
            match (ev, op, ar, st) {
                (Some(events), Some(ops), Some(arena), Some(state)) => SharedArrays {
                    events,
                    ops,
                    arena,
                    state,
                },
                _ => {
                    return Err(invalid_arg(
                        "channel buffers must be Float64Array, Float64Array, Uint8Array, \
                         Float64Array",
                    ))
                }
            }
        };
        let Some(local) = native_loop.local() else {
            return Err(napi::Error::new(
                Code("ERR_REJECTED_EXECUTION"),
                "the loop is terminated".to_string(),
            ));
        };
        let bridge = native_loop.bridge();
        let surface = delivery::JsSurface::new(raw, bridge);
        let hub = Hub::new(&local, Box::new(surface), shared);
        bridge.set_hook(hub.clone());
        Ok(NativeChannels {
            hub,
            bridge: Rc::downgrade(bridge),
            calls: Cell::new(0.0),
        })
    }

    pub(super) fn enter(&self) {
        self.calls.set(self.calls.get() + 1.0);
        self.hub.apply_ops(&mut BigChunks::none(), &[]);
    }

    /// Re-arms libuv after a change made outside an iteration (a new channel, a bind).
    fn rearm(&self) {
        self.hub.schedule_delivery();
        if let Some(b) = self.bridge.upgrade() {
            b.rearm();
        }
    }

    /// This hub's id (tokens and errors are tagged with it).
    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.hub.id()
    }

    /// The id of this hub's loop, valid in every thread of the process.
    #[napi(getter)]
    pub fn loop_id(&self) -> f64 {
        self.hub.loop_id() as f64
    }

    /// Applies the buffered ops (with the bytes of large writes and the texts of JS errors
    /// they refer to). What they produce is delivered by the loop's next iteration, never
    /// from inside this call: JS handlers do not run re-entrantly inside user code.
    #[napi]
    pub fn apply_ops(
        &self,
        env: Env,
        big: Option<Vec<BufferSlice<'_>>>,
        strings: Option<Vec<String>>,
    ) {
        self.calls.set(self.calls.get() + 1.0);
        let mut big = chunk::batch(&env, big.unwrap_or_default());
        self.hub.apply_ops(&mut big, &strings.unwrap_or_default());
        self.hub.schedule_delivery();
    }

    /// A new client channel (not yet registered); returns its id.
    #[napi]
    pub fn open_client(&self, env: Env, names: Vec<String>, values: Vec<f64>) -> Result<f64> {
        self.enter();
        let r = self.hub.open(false, &names, &values);
        r.map_err(|e| throw(&env, wire_error(e)))
    }

    /// A new server channel whose acceptor hands connections to the loops `children` (loop
    /// ids, from `loopId`: on this thread or on worker threads).
    #[napi]
    pub fn open_server(
        &self,
        env: Env,
        names: Vec<String>,
        values: Vec<f64>,
        child_names: Vec<String>,
        child_values: Vec<f64>,
        children: Vec<f64>,
    ) -> Result<f64> {
        self.enter();
        let r = self
            .hub
            .open_server((&names, &values), (&child_names, &child_values), &children);
        r.map_err(|e| throw(&env, wire_error(e)))
    }

    pub(super) fn with_channel<R>(
        &self,
        id: f64,
        f: impl FnOnce(&netloop_transport::Channel) -> JsResult<R>,
    ) -> JsResult<R> {
        let ch = self.hub.with_channel(id, |ch| Ok(ch.clone()));
        let ch = ch.map_err(wire_error)?;
        f(&ch)
    }

    fn bind_or_connect(
        &self,
        env: &Env,
        connect: bool,
        id: f64,
        to: (String, u32),
        p: f64,
    ) -> Result<()> {
        self.enter();
        let r = self.hub.bind_or_connect(connect, id, (&to.0, to.1), p);
        self.rearm();
        r.map_err(|e| throw(env, wire_error(e)))
    }

    /// Binds server channel `id`; JS promise `promise` learns the result.
    #[napi]
    pub fn bind(&self, env: Env, id: f64, host: String, port: u32, promise: f64) -> Result<()> {
        self.bind_or_connect(&env, false, id, (host, port), promise)
    }

    /// Connects client channel `id`; JS promise `promise` learns the result.
    #[napi]
    pub fn connect(&self, env: Env, id: f64, host: String, port: u32, promise: f64) -> Result<()> {
        self.bind_or_connect(&env, true, id, (host, port), promise)
    }

    /// The channel's `ChannelStateFlag` bits (0 once the channel is gone).
    #[napi]
    pub fn state(&self, id: f64) -> u32 {
        self.enter();
        self.hub.state_flags(id)
    }

    /// The names of channel `id`'s handlers, head to tail (empty once the channel is gone):
    /// what JS's mirror of the pipeline checks itself against where a native handler edits
    /// the pipeline (a WebSocket handshake removes the HTTP codec).
    #[napi]
    pub fn handler_names(&self, id: f64) -> Vec<String> {
        self.enter();
        self.hub.handler_names(id)
    }

    /// Writes the `WritabilitySlot`s of channel `id` into the shared state array,
    /// *without* applying the ops JS buffered: JS counts those itself (`queued` bytes of writes
    /// for this channel). If the pending bytes plus `queued` are above the high mark, the
    /// channel turns unwritable without an event and `crossed` is 1: JS reports the crossing
    /// (see `src/writability.ts`). A channel that is gone reads as all zeros.
    #[napi]
    pub fn writability(&self, id: f64, queued: f64) {
        self.calls.set(self.calls.get() + 1.0);
        self.hub.put_writability(id, queued);
    }

    /// `"address|port|family"` of the local (or remote) end, if known.
    #[napi]
    pub fn address(&self, id: f64, remote: bool) -> Option<String> {
        self.enter();
        self.hub.address(id, remote)
    }

    /// The value of channel option `name` of channel `id` (booleans as 0/1).
    #[napi]
    pub fn get_option(&self, env: Env, id: f64, name: String) -> Result<f64> {
        self.enter();
        let r = self.hub.option(id, &name);
        r.map_err(|e| throw(&env, wire_error(e)))
    }

    /// Sets channel option `name` of channel `id`.
    #[napi]
    pub fn set_option(&self, env: Env, id: f64, name: String, value: f64) -> Result<()> {
        self.enter();
        let r = self.hub.set_option(id, &name, value);
        self.rearm();
        r.map_err(|e| throw(&env, wire_error(e)))
    }

    /// Netty's user-defined writability flag `index` (1..=31): the channel is writable only
    /// while its buffer is below the high mark and every flag is writable.
    #[napi]
    pub fn set_user_writability(
        &self,
        env: Env,
        id: f64,
        index: u32,
        writable: bool,
    ) -> Result<()> {
        self.enter();
        let r = self.hub.set_user_writability(id, index, writable);
        self.rearm();
        r.map_err(|e| throw(&env, wire_error(e)))
    }

    /// Half-close: the FIN goes out once the flushed output is written; JS promise `promise`
    /// learns the result then.
    #[napi]
    pub fn shutdown_output(&self, id: f64, promise: f64) {
        self.enter();
        self.hub.shutdown_output(id, promise);
        self.rearm();
    }

    /// JS cancelled promise `id` (after applying the ops before it): `true` if the native
    /// promise was cancelled, `false` if it is done or uncancellable (Netty's `cancel`).
    #[napi]
    pub fn cancel_promise(&self, id: f64) -> bool {
        self.enter();
        let r = self.hub.cancel_promise(id);
        self.rearm();
        r
    }

    /// `false`: the channel no longer keeps the process alive (node:net's `unref()`).
    #[napi]
    pub fn set_ref(&self, id: f64, refd: bool) {
        self.enter();
        self.hub.set_ref(id as u64, refd);
        self.rearm();
    }

    /// Closes every channel of this loop (its shutdown started), as Netty's `closeAll`.
    #[napi]
    pub fn close_all(&self) {
        self.enter();
        self.hub.close_all();
        self.rearm();
    }

    /// The hub's counters, by `MetricsSlot`.
    #[napi]
    pub fn metrics(&self) -> Vec<f64> {
        self.hub.metrics_slots(self.calls.get())
    }
}

impl std::fmt::Debug for NativeChannels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeChannels")
            .field("hub", &self.hub.id())
            .field("loop", &self.hub.loop_id())
            .finish()
    }
}
