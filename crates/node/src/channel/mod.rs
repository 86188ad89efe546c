//! `NativeChannels`: the JS-facing handle of one loop's channel hub. Thin: argument
//! conversion and lookups; the hub ([`hub`]) does the work, the adapters ([`adapter`]) stand
//! in for JS handlers in native pipelines, [`wire`] fixes the shared record layout.
//!
//! Ground rules: used only on the JS thread of its loop. Every method that touches a channel
//! first applies the ops JS buffered, so direct calls and buffered ops keep JS's order.

mod acceptor;
mod adapter;
pub(crate) mod big;
mod codecs;
mod delivery;
mod file_wire;
mod handlers;
mod haproxy_wire;
mod held;
mod http_client_wire;
mod http_wire;
mod hub;
pub(crate) use hub::Hub;
mod ids;
mod ops;
mod options;
mod outbox;
pub(crate) mod read_pool;
mod remote;
mod resp_wire;
mod shared;
mod slots;
mod tls_info;
mod token;
mod topics;
mod wire;
mod wire_samples;
mod ws_wire;

use std::cell::Cell;
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;

use bytes::Bytes;
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use netloop_transport::{ServerSocketChannel, SocketChannel, TransportError};

use crate::error::{invalid_arg, throw, Code, JsResult};
use crate::event_loop::NativeEventLoop;
use crate::protocol::{ChannelStateFlag, MetricsSlot, WritabilitySlot};
use acceptor::JsChildren;
use shared::{Shared, SharedArrays};

fn transport_error(e: TransportError) -> napi::Error<Code> {
    let code: &'static str = match &e {
        TransportError::DuplicateHandlerName(_) => "ERR_DUPLICATE_HANDLER_NAME",
        TransportError::NoSuchHandler(_) => "ERR_NO_SUCH_HANDLER",
        TransportError::InvalidOption(_) => "ERR_INVALID_ARG_VALUE",
        e if e.is_channel_closed() => "ERR_CHANNEL_CLOSED",
        _ => "ERR_CHANNEL_OPERATION",
    };
    napi::Error::new(Code(code), e.to_string())
}

fn no_channel(id: f64) -> napi::Error<Code> {
    napi::Error::new(
        Code("ERR_CHANNEL_CLOSED"),
        format!("channel {id} is closed"),
    )
}

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
        // SAFETY (the four `Shared::new`): `raw` is the live env of this call and each value
        // is one of its handles.
        // SAFETY: as said above.
        let ev = unsafe { Shared::new(raw, events.raw(), f64s) };
        // SAFETY: as said above.
        let op = unsafe { Shared::new(raw, ops.raw(), f64s) };
        // SAFETY: as said above.
        let ar = unsafe { Shared::new(raw, arena.raw(), sys::TypedarrayType::uint8_array) };
        // SAFETY: as said above.
        let st = unsafe { Shared::new(raw, state.raw(), f64s) };
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
        let hub = Hub::new(raw, &local, native_loop.bridge(), shared);
        Ok(NativeChannels {
            hub,
            calls: Cell::new(0.0),
        })
    }

    pub(super) fn enter(&self) {
        self.calls.set(self.calls.get() + 1.0);
        self.hub.apply_ops(&mut big::BigChunks::none(), &[]);
    }

    /// Re-arms libuv after a change made outside an iteration (a new channel, a bind).
    fn rearm(&self) {
        self.hub.schedule_delivery();
        if let Some(b) = self.hub.bridge() {
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
        let mut big = big::BigChunks::new(&env, big.unwrap_or_default());
        self.hub.apply_ops(&mut big, &strings.unwrap_or_default());
        self.hub.schedule_delivery();
    }

    fn open_with(&self, server: bool, names: &[String], values: &[f64]) -> JsResult<f64> {
        let opts = options::build(names, values)?;
        let local = self
            .hub
            .local
            .upgrade()
            .ok_or_else(|| invalid_arg("the loop is terminated"))?;
        if local.handle().is_shutdown() {
            return Err(napi::Error::new(
                Code("ERR_REJECTED_EXECUTION"),
                "the loop is shut down".to_string(),
            ));
        }
        let ch = if server {
            ServerSocketChannel::open(&local, opts)
        } else {
            SocketChannel::open(&local, opts)
        };
        Ok(self.hub.adopt(ch) as f64)
    }

    /// A new client channel (not yet registered); returns its id.
    #[napi]
    pub fn open_client(&self, env: Env, names: Vec<String>, values: Vec<f64>) -> Result<f64> {
        self.enter();
        self.open_with(false, &names, &values)
            .map_err(|e| throw(&env, e))
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
        let r = (|| {
            let child_options = options::build(&child_names, &child_values)?;
            let targets: Vec<acceptor::Target> = children
                .iter()
                .filter_map(|id| acceptor::Target::of(*id as u64))
                .collect();
            if targets.is_empty() {
                return Err(invalid_arg("a server needs at least one child loop"));
            }
            let id = self.open_with(true, &names, &values)?;
            let ch = self.hub.channel(id as u64).ok_or_else(|| no_channel(id))?;
            let children = JsChildren {
                server: id,
                chooser: netloop_eventloop::Chooser::new(targets.len()),
                targets,
            };
            let acceptor = netloop_transport::ServerBootstrapAcceptor::new(
                children,
                std::sync::Arc::new(child_options),
            );
            ch.pipeline()
                .add_last(netloop_transport::ACCEPTOR_NAME, acceptor)
                .map_err(transport_error)?;
            Ok(id)
        })();
        r.map_err(|e| throw(&env, e))
    }

    pub(super) fn with_channel<R>(
        &self,
        id: f64,
        f: impl FnOnce(&netloop_transport::Channel) -> JsResult<R>,
    ) -> JsResult<R> {
        let ch = self.hub.channel(id as u64).ok_or_else(|| no_channel(id))?;
        f(&ch)
    }

    fn addr(host: &str, port: u32) -> JsResult<SocketAddr> {
        let ip: IpAddr = host
            .parse()
            .map_err(|_| invalid_arg(format!("not an IP address: {host}")))?;
        let port =
            u16::try_from(port).map_err(|_| invalid_arg(format!("port out of range: {port}")))?;
        Ok(SocketAddr::new(ip, port))
    }

    /// Binds server channel `id`; JS promise `promise` learns the result.
    #[napi]
    pub fn bind(&self, env: Env, id: f64, host: String, port: u32, promise: f64) -> Result<()> {
        self.enter();
        let r = self.with_channel(id, |ch| {
            let addr = Self::addr(&host, port)?;
            let hub = self.hub.clone();
            ch.bind(addr).add_local_listener_js(hub, promise);
            Ok(())
        });
        self.rearm();
        r.map_err(|e| throw(&env, e))
    }

    /// Connects client channel `id`; JS promise `promise` learns the result.
    #[napi]
    pub fn connect(&self, env: Env, id: f64, host: String, port: u32, promise: f64) -> Result<()> {
        self.enter();
        let r = self.with_channel(id, |ch| {
            let addr = Self::addr(&host, port)?;
            let hub = self.hub.clone();
            ch.connect(addr).add_local_listener_js(hub, promise);
            Ok(())
        });
        self.rearm();
        r.map_err(|e| throw(&env, e))
    }

    /// The channel's [`ChannelStateFlag`] bits (0 once the channel is gone).
    #[napi]
    pub fn state(&self, id: f64) -> u32 {
        self.enter();
        self.hub.channel(id as u64).map_or(0, |ch| {
            let bit = |on: bool, flag: ChannelStateFlag| if on { flag as u32 } else { 0 };
            bit(ch.is_open(), ChannelStateFlag::Open)
                | bit(ch.is_active(), ChannelStateFlag::Active)
                | bit(ch.is_writable(), ChannelStateFlag::Writable)
                | bit(ch.is_registered(), ChannelStateFlag::Registered)
                | bit(ch.is_auto_read(), ChannelStateFlag::AutoRead)
        })
    }

    /// The names of channel `id`'s handlers, head to tail (empty once the channel is gone):
    /// what JS's mirror of the pipeline checks itself against where a native handler edits
    /// the pipeline (a WebSocket handshake removes the HTTP codec).
    #[napi]
    pub fn handler_names(&self, id: f64) -> Vec<String> {
        self.enter();
        self.hub
            .channel(id as u64)
            .map_or_else(Vec::new, |ch| ch.pipeline().names())
    }

    /// Writes the [`WritabilitySlot`]s of channel `id` into the shared state array,
    /// *without* applying the ops JS buffered: JS counts those itself (`queued` bytes of writes
    /// for this channel). If the pending bytes plus `queued` are above the high mark, the
    /// channel turns unwritable without an event and `crossed` is 1: JS reports the crossing
    /// (see `src/writability.ts`). A channel that is gone reads as all zeros.
    #[napi]
    pub fn writability(&self, id: f64, queued: f64) {
        self.calls.set(self.calls.get() + 1.0);
        let mut s = [0.0; WritabilitySlot::Length as usize];
        let Some(ch) = self.hub.channel(id as u64) else {
            return self.hub.shared.put_state(&s);
        };
        let crossed = queued > 0.0 && ch.is_open() && ch.mark_unwritable_above(queued as usize);
        let w = ch.write_buffer_water_mark();
        s[WritabilitySlot::Pending as usize] = ch.pending_outbound_bytes() as f64;
        s[WritabilitySlot::Writable as usize] = f64::from(u8::from(ch.is_writable()));
        s[WritabilitySlot::High as usize] = w.high as f64;
        s[WritabilitySlot::Low as usize] = w.low as f64;
        s[WritabilitySlot::Crossed as usize] = f64::from(u8::from(crossed));
        self.hub.shared.put_state(&s);
    }

    /// `"address|port|family"` of the local (or remote) end, if known.
    #[napi]
    pub fn address(&self, id: f64, remote: bool) -> Option<String> {
        self.enter();
        let ch = self.hub.channel(id as u64)?;
        let a = if remote {
            ch.remote_addr()
        } else {
            ch.local_addr()
        }?;
        let family = if a.is_ipv4() { "IPv4" } else { "IPv6" };
        Some(format!("{}|{}|{family}", a.ip(), a.port()))
    }

    /// The value of channel option `name` of channel `id` (booleans as 0/1).
    #[napi]
    pub fn get_option(&self, env: Env, id: f64, name: String) -> Result<f64> {
        self.enter();
        self.with_channel(id, |ch| options::value(&ch.options(), &name))
            .map_err(|e| throw(&env, e))
    }

    /// Sets channel option `name` of channel `id`.
    #[napi]
    pub fn set_option(&self, env: Env, id: f64, name: String, value: f64) -> Result<()> {
        self.enter();
        let r = self.with_channel(id, |ch| {
            let opt = options::option(&name, value)?;
            ch.set_option(opt).map_err(|e| invalid_arg(e.to_string()))
        });
        self.rearm();
        r.map_err(|e| throw(&env, e))
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
        let r = self.with_channel(id, |ch| {
            ch.set_user_defined_writability(index, writable)
                .map_err(|e| napi::Error::new(Code("ERR_OUT_OF_RANGE"), e.to_string()))
        });
        self.rearm();
        r.map_err(|e| throw(&env, e))
    }

    /// Half-close: the FIN goes out once the flushed output is written; JS promise `promise`
    /// learns the result then.
    #[napi]
    pub fn shutdown_output(&self, id: f64, promise: f64) {
        self.enter();
        match self.hub.channel(id as u64) {
            Some(ch) => ch
                .shutdown_output()
                .add_local_listener_js(self.hub.clone(), promise),
            None => self
                .hub
                .report_promise(promise, &Err(TransportError::ChannelClosed)),
        }
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

    /// The hub's counters, by [`MetricsSlot`].
    #[napi]
    pub fn metrics(&self) -> Vec<f64> {
        let m = &self.hub.metrics;
        let mut s = vec![0.0; MetricsSlot::Length as usize];
        s[MetricsSlot::Iterations as usize] = m.iterations.get();
        s[MetricsSlot::Deliveries as usize] = m.deliveries.get();
        s[MetricsSlot::Records as usize] = m.records.get();
        s[MetricsSlot::JsToNative as usize] = self.calls.get();
        s[MetricsSlot::Ops as usize] = m.ops.get();
        s[MetricsSlot::BytesToJs as usize] = m.bytes_to_js.get();
        s[MetricsSlot::BytesFromJs as usize] = m.bytes_from_js.get();
        s[MetricsSlot::Channels as usize] = self.hub.channel_count() as f64;
        s[MetricsSlot::BytesFromReads as usize] = m.bytes_from_reads.get();
        s[MetricsSlot::BytesReleased as usize] = m.bytes_released.get();
        s
    }
}

/// Reports a channel future to a JS promise through the hub.
trait ReportToJs {
    fn add_local_listener_js(&self, hub: Rc<Hub>, promise: f64);
}

impl ReportToJs for netloop_transport::ChannelFuture {
    fn add_local_listener_js(&self, hub: Rc<Hub>, promise: f64) {
        use netloop_transport::LocalListenerExt;
        let weak = Rc::downgrade(&hub);
        self.add_local_listener(move |r| {
            if let Some(h) = weak.upgrade() {
                h.report_promise(promise, r);
            }
        });
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
